import { describe, expect, it } from 'vitest';
import { type RefusedRecipientStep, refusedRecipientStep } from '../../../src/smtp/refused-recipients.ts';

const settings = { refusedRecipientDelayAfter: 3, refusedRecipientDelay: 1000, maxRefusedRecipients: 20 };

describe('refusedRecipientStep', () => {
  it.each<[number, RefusedRecipientStep]>([
    [1, 'refuse'],
    [3, 'refuse'],
    [4, 'refuse-late'],
    [20, 'refuse-late'],
    [21, 'disconnect'],
    [2000, 'disconnect'],
  ])('the refused recipient number %i: %s', (count, step) => {
    expect(refusedRecipientStep(count, settings)).toBe(step);
  });

  it('does not wait when the delay is 0', () => {
    expect(refusedRecipientStep(10, { ...settings, refusedRecipientDelay: 0 })).toBe('refuse');
  });
});
