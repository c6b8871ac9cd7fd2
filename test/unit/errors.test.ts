import { describe, expect, it } from 'vitest';
import { asError, RefusalError } from '../../src/errors.ts';

describe('RefusalError', () => {
  it('carries its code and message', () => {
    const err = new RefusalError('NO_SUPPORTED_ATTACHMENT', 'found only text/calendar');
    expect(err.code).toBe('NO_SUPPORTED_ATTACHMENT');
    expect(err.message).toBe('found only text/calendar');
    expect(err).toBeInstanceOf(Error);
  });

  it('asError wraps a thrown non-error', () => {
    expect(asError('boom').message).toBe('boom');
    const original = new Error('x');
    expect(asError(original)).toBe(original);
  });
});
