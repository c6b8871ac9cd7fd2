import { authenticate } from 'mailauth';
import { dkimSign } from 'mailauth/lib/dkim/sign.js';
import parseDkimHeaders from 'mailauth/lib/parse-dkim-headers.js';
import { getAlignment } from 'mailauth/lib/tools.js';
import { describe, expect, it } from 'vitest';
import { declaredVersion, EXACT_VERSION, installedManifest } from '../../harness/pinned-version.ts';

/**
 * The lib/ files of mailauth the gateway loads beside its entry point (src/sender/load-mailauth.ts,
 * typed in src/sender/mailauth-internals.d.ts; docs/overrides.md, "mailauth"): the alignment rule
 * its DMARC and ARC checks use, and its RFC 8601 header parser, whose output
 * src/sender/authentication-results.ts reads for an ARC chain's first hop. The test suite signs
 * mail with lib/dkim/sign.js (harness/dkim-signing.ts).
 */

describe('mailauth, as the sender check loads it', () => {
  it('is installed at the exact version package.json pins', () => {
    expect(declaredVersion('mailauth')).toMatch(EXACT_VERSION);
    expect(installedManifest('mailauth').version).toBe(declaredVersion('mailauth'));
  });

  it('still has the entry point and the lib/ files the gateway and its tests import', () => {
    expect(typeof authenticate).toBe('function');
    expect(typeof getAlignment).toBe('function');
    expect(typeof parseDkimHeaders).toBe('function');
    expect(typeof dkimSign).toBe('function');
  });

  it.each([
    { from: 'mail.example.com', domain: 'example.com', strict: false, aligned: 'example.com' },
    { from: 'mail.example.com', domain: 'example.com', strict: true, aligned: false },
    { from: 'Example.COM.', domain: 'example.com', strict: true, aligned: 'example.com' },
    { from: 'a.example.co.uk', domain: 'b.example.co.uk', strict: false, aligned: 'b.example.co.uk' },
    { from: 'example.co.uk', domain: 'other.co.uk', strict: false, aligned: false },
    { from: 'example.com', domain: 'example.com.evil', strict: false, aligned: false },
  ])('getAlignment($from, [$domain], strict $strict) is $aligned', ({ from, domain, strict, aligned }) => {
    const result = getAlignment(from, [domain], strict);
    expect(result === false ? false : result.domain).toBe(aligned);
  });

  it('parses an ARC-Authentication-Results field into the shape the first-hop reader takes', () => {
    const { parsed } = parseDkimHeaders(
      'ARC-Authentication-Results: i=1; mx.example.net; spf=pass smtp.mailfrom=a@example.com; ' +
        'dkim=pass header.d=example.com header.s=s1; dkim=fail header.i=@other.example; ' +
        'dmarc=pass header.from=example.com',
    );
    expect(parsed).toMatchObject({
      value: 'mx.example.net',
      spf: { value: 'pass', smtp: { mailfrom: 'a@example.com' } },
      dkim: [
        { value: 'pass', header: { d: 'example.com', s: 's1' } },
        { value: 'fail', header: { i: '@other.example' } },
      ],
      dmarc: { value: 'pass', header: { from: 'example.com' } },
    });
  });
});
