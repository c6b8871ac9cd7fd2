import { describe, expect, it } from 'vitest';
import { createSignatureGuard } from '../../../src/sender/signature-guard.ts';

const signature = (i: number) => `DKIM-Signature: v=1; a=rsa-sha256; d=d${i}.example; s=s; bh=x; b=y\r\n`;
const arc = (i: number) => `ARC-Message-Signature: i=${i}; a=rsa-sha256; d=list.example; s=s; bh=x; b=y\r\n`;

function scan(text: string, max: number, chunkSize = text.length) {
  const guard = createSignatureGuard(max);
  for (let at = 0; at < text.length; at += chunkSize) guard.push(Buffer.from(text.slice(at, at + chunkSize)));
  return guard.refusal;
}

describe('createSignatureGuard', () => {
  it.each([
    ['up to the cap', Array.from({ length: 3 }, (_, i) => signature(i)).join(''), null],
    ['one past the cap', Array.from({ length: 4 }, (_, i) => signature(i)).join(''), 'refused'],
    ['DKIM and ARC together', signature(1) + arc(1) + signature(2) + arc(2), 'refused'],
    [
      'in any case',
      'dkim-signature: a\r\nDKIM-SIGNATURE: b\r\nDkim-Signature: c\r\nDKIM-Signature: d\r\n',
      'refused',
    ],
    [
      'not folded continuation lines',
      `${signature(1)} DKIM-Signature: no\r\n\tDKIM-Signature: no\r\n ${signature(2)}`,
      null,
    ],
    ['not names that merely start alike', 'DKIM-Signatures: x\r\nX-DKIM-Signature: y\r\n'.repeat(3), null],
    [
      'not in the body',
      `Subject: x\r\n\r\n${Array.from({ length: 9 }, (_, i) => signature(i)).join('')}`,
      null,
    ],
    [
      'not after a bare-LF blank line either',
      `Subject: x\n\n${Array.from({ length: 9 }, (_, i) => signature(i)).join('')}`,
      null,
    ],
  ])('counts %s', (_name, text, expected) => {
    const refusal = scan(text, 3);
    expect(refusal === null ? null : 'refused').toBe(expected);
  });

  it('counts across chunk boundaries, byte by byte', () => {
    expect(scan(Array.from({ length: 4 }, (_, i) => signature(i)).join(''), 3, 1)).not.toBeNull();
  });

  it('refuses with a 550 5.7.1 that says why', () => {
    const refusal = scan(Array.from({ length: 17 }, (_, i) => signature(i)).join(''), 16);
    expect(refusal?.code).toBe('SENDER_NOT_AUTHENTICATED');
    expect(refusal?.message).toBe(
      'sender not authenticated: more than 16 DKIM or ARC signatures, none was checked',
    );
  });
});
