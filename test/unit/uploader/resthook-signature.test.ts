import { describe, expect, it } from 'vitest';
import { signResthookBody, verifyResthookSignature } from '../../../src/uploader/resthook-signature.ts';

const key = 'organization-signing-key';
const body = Buffer.from('{"event":"document.parse.succeeded","timestamp":1800000000,"payload":{}}');
const at = 1_800_000_000;

function check(header: string | undefined, keys: string[] = [key], nowSeconds = at) {
  return verifyResthookSignature({ rawBody: body, header, keys, nowSeconds, maxAgeSeconds: 300 });
}

describe('verifyResthookSignature', () => {
  it('takes the signature of the body by one of the keys, within the age', () => {
    const header = signResthookBody(body, key, at);
    expect(check(header)).toMatchObject({ ok: true, timestamp: at, key });
    expect(check(header, ['another-organization', key], at + 300)).toMatchObject({ ok: true, key });
    expect(check(header.toUpperCase().replace(/^(\d+)\./, '$1.'))).toMatchObject({ ok: true });
  });

  it.each<[string, string | undefined, string[], number, string]>([
    ['no header', undefined, [key], at, 'no X-Hook-Signature header'],
    ['a malformed header', 'sha256=abc', [key], at, 'is not <unix seconds>'],
    ['another key', signResthookBody(body, 'forger', at), [key], at, 'does not match'],
    ['no keys at all', signResthookBody(body, key, at), [], at, 'does not match'],
    ['another body', signResthookBody(`${body} `, key, at), [key], at, 'does not match'],
    ['a stale timestamp', signResthookBody(body, key, at), [key], at + 301, '301 s old'],
    ['a future timestamp', signResthookBody(body, key, at), [key], at - 301, '-301 s old'],
  ])('refuses %s', (_name, header, keys, now, problem) => {
    const result = check(header, keys, now);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problem).toContain(problem);
  });
});
