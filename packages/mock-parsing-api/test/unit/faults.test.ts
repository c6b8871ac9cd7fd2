import { describe, expect, it } from 'vitest';
import { createFaultQueue, MAX_LATENCY_MS } from '../../src/faults.ts';

const upload = { method: 'POST', path: '/v3/documents' };
const read = { method: 'GET', path: '/v3/documents/abc' };
const kind = (fault: { action: { kind: string } } | undefined) => fault?.action.kind;
const status = (fault: { action: { kind: string; status?: number } } | undefined) =>
  fault?.action.kind === 'status' ? fault.action.status : undefined;

describe('the fault queue', () => {
  it('serves entries first in, first out, once each by default', () => {
    const faults = createFaultQueue();
    faults.enqueue({ status: 503 });
    faults.enqueue({ drop: true });
    expect(status(faults.take(upload))).toBe(503);
    expect(faults.take(upload)?.action).toEqual({ kind: 'drop', when: 'before' });
    expect(faults.take(upload)).toBeUndefined();
  });

  it('serves an entry with times: 3 to three requests, then the next entry', () => {
    const faults = createFaultQueue();
    faults.enqueue({ status: 502, times: 3 });
    faults.enqueue({ status: 504 });
    expect([1, 2, 3, 4, 5].map(() => status(faults.take(upload)))).toEqual([502, 502, 502, 504, undefined]);
  });

  it('serves an "always" entry until cleared', () => {
    const faults = createFaultQueue();
    faults.enqueue({ hang: true, times: 'always' });
    for (let i = 0; i < 20; i++) expect(kind(faults.take(upload))).toBe('hang');
    expect(faults.list()).toEqual([expect.objectContaining({ remaining: null })]);
    faults.clear();
    expect(faults.take(upload)).toBeUndefined();
  });

  it('aims at the upload by default and at another route when told', () => {
    const faults = createFaultQueue();
    faults.enqueue({ status: 500 });
    expect(faults.take(read)).toBeUndefined();
    faults.enqueue({ status: 404, method: 'GET', path: '/v3/documents' });
    faults.enqueue({ status: 418, method: '*', path: '/v3' });
    expect(status(faults.take(read))).toBe(404);
    expect(status(faults.take({ method: 'PATCH', path: '/v3/workspaces/w' }))).toBe(418);
    expect(status(faults.take(upload))).toBe(500);
    // A path prefix matches whole segments only.
    faults.enqueue({ status: 500, method: '*', path: '/v3/doc' });
    expect(faults.take(upload)).toBeUndefined();
  });

  it('turns retryAfter into the Retry-After header', () => {
    const faults = createFaultQueue();
    faults.enqueue({ status: 429, retryAfter: 3, headers: { 'x-extra': 'y' } });
    expect(faults.take(upload)?.action).toEqual({
      kind: 'status',
      status: 429,
      body: undefined,
      headers: { 'x-extra': 'y', 'retry-after': '3' },
    });
  });

  it.each([
    { name: 'nothing to do', fault: {} },
    { name: 'two actions', fault: { status: 500, hang: true as const } },
    { name: 'a body without a status', fault: { body: 'x' } },
    { name: 'latency past the bound', fault: { latencyMs: MAX_LATENCY_MS + 1 } },
    { name: 'a header value with a line break', fault: { status: 500, headers: { 'x-a': 'b\r\nx-c: d' } } },
    { name: 'a path outside /v3', fault: { status: 500, path: '/_mock/faults' } },
    { name: 'zero times', fault: { status: 500, times: 0 } },
    { name: 'an unknown key', fault: { status: 500, colour: 'red' } },
  ])('refuses $name', ({ fault }) => {
    const faults = createFaultQueue();
    expect(() => faults.enqueue(fault as never)).toThrow();
    expect(faults.list()).toEqual([]);
  });
});
