import { describe, expect, it } from 'vitest';
import { parseFaultHeader } from '../../src/parse-fault-header.ts';

describe('parseFaultHeader', () => {
  it.each([
    {
      header: 'status=503',
      fault: { latencyMs: 0, action: { kind: 'status', status: 503, body: undefined, headers: {} } },
    },
    {
      header: 'status=429; retry-after=2',
      fault: {
        latencyMs: 0,
        action: { kind: 'status', status: 429, body: undefined, headers: { 'retry-after': '2' } },
      },
    },
    {
      header: 'Status=429;Retry-After=Wed, 21 Oct 2015 07:28:00 GMT',
      fault: {
        latencyMs: 0,
        action: {
          kind: 'status',
          status: 429,
          body: undefined,
          headers: { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' },
        },
      },
    },
    { header: 'drop=before', fault: { latencyMs: 0, action: { kind: 'drop', when: 'before' } } },
    { header: ' drop = after ', fault: { latencyMs: 0, action: { kind: 'drop', when: 'after' } } },
    { header: 'hang', fault: { latencyMs: 0, action: { kind: 'hang' } } },
    { header: 'latency=200', fault: { latencyMs: 200, action: { kind: 'none' } } },
    {
      header: 'latency=50; status=502',
      fault: { latencyMs: 50, action: { kind: 'status', status: 502, body: undefined, headers: {} } },
    },
    { header: 'hang;', fault: { latencyMs: 0, action: { kind: 'hang' } } },
  ])('reads "$header"', ({ header, fault }) => {
    expect(parseFaultHeader(header)).toEqual({ ok: true, fault });
  });

  it.each([
    { header: '', detail: /give status, drop, hang, commitDelayMs or latencyMs/ },
    { header: 'status=abc', detail: /status needs a whole number/ },
    { header: 'status=99', detail: /status: / },
    { header: 'status=503; drop=before', detail: /one of status, drop, hang and commitDelayMs/ },
    { header: 'drop=sideways', detail: /drop=before or drop=after/ },
    { header: 'hang=1', detail: /hang takes no value/ },
    { header: 'latency=99999999', detail: /latency: / },
    { header: 'retry-after=2', detail: /need a status/ },
    { header: 'status=500; status=502', detail: /given twice/ },
    { header: 'explode', detail: /unknown directive "explode"/ },
  ])('refuses "$header"', ({ header, detail }) => {
    const parsed = parseFaultHeader(header);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.detail).toMatch(detail);
  });
});
