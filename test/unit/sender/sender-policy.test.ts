import { describe, expect, it } from 'vitest';
import type {
  ArcResult,
  AuthenticationResults,
  DkimSignatureResult,
  DmarcResult,
} from '../../../src/sender/authentication-results.ts';
import { loadMailauth } from '../../../src/sender/load-mailauth.ts';
import { evaluateSender, type SenderPolicyInput } from '../../../src/sender/sender-policy.ts';

const { alignsRelaxed } = await loadMailauth();

const dkim = (result: string, domain: string, unsignedBodyBytes = 0): DkimSignatureResult => ({
  result,
  domain,
  selector: 'sel',
  unsignedBodyBytes,
  comment: null,
});

const dmarc = (result: string, extra: Partial<DmarcResult> = {}): DmarcResult => ({
  result,
  fromDomain: 'acme.example',
  policy: 'none',
  spfAligned: null,
  dkimAligned: null,
  dkimUnsignedBodyBytes: 0,
  ...extra,
});

const trustedChain = (
  firstHop: Partial<NonNullable<ArcResult['firstHop']>>,
  sealers = ['lists.example'],
): ArcResult => ({
  result: 'pass',
  comment: null,
  sealers,
  firstHop: { authservId: sealers[0] ?? null, spf: null, dkim: [], dmarc: null, ...firstHop },
});

function input(
  mode: SenderPolicyInput['mode'],
  results: Partial<AuthenticationResults>,
  fromDomain = 'acme.example',
): SenderPolicyInput {
  return {
    mode,
    fromDomain,
    results: {
      spf: { result: 'none', domain: 'elsewhere.test' },
      dkim: [],
      dmarc: dmarc('none', { fromDomain }),
      arc: null,
      ...results,
    },
    trustedArcSealers: new Set(['lists.example']),
    alignsRelaxed,
  };
}

const notAligned =
  'sender not authenticated: the From domain acme.example is not aligned with a passing SPF or DKIM result';

describe('relaxed alignment, as loaded with mailauth', () => {
  it.each([
    ['acme.example', 'acme.example', true],
    ['acme.example', 'mail.acme.example', true],
    ['mail.acme.example', 'acme.example', true],
    ['a.acme.example', 'b.acme.example', true],
    ['acme.example', 'evilacme.example', false],
    ['acme.example', 'acme.example.evil', false],
    ['acme.example', 'example', false],
    // The Public Suffix List, ICANN and private sections: no shared Organizational Domain.
    ['shop.example.co.uk', 'other.co.uk', false],
    ['shop.example.co.uk', 'mail.example.co.uk', true],
    ['ann.github.io', 'eve.github.io', false],
  ])('%s and %s → %s', (from, domain, aligned) => {
    expect(alignsRelaxed(from, domain)).toBe(aligned);
  });
});

describe('evaluateSender, aligned', () => {
  it.each<[string, Partial<AuthenticationResults>, ReturnType<typeof evaluateSender>]>([
    [
      'SPF pass for the From domain',
      { spf: { result: 'pass', domain: 'acme.example' } },
      { outcome: 'pass', via: 'spf', domain: 'acme.example' },
    ],
    [
      'SPF pass for a subdomain',
      { spf: { result: 'pass', domain: 'mail.acme.example' } },
      { outcome: 'pass', via: 'spf', domain: 'mail.acme.example' },
    ],
    [
      'DKIM pass for the From domain',
      { dkim: [dkim('pass', 'acme.example')] },
      { outcome: 'pass', via: 'dkim', domain: 'acme.example' },
    ],
    [
      'DKIM pass for a subdomain',
      { dkim: [dkim('fail', 'acme.example'), dkim('pass', 'news.acme.example')] },
      { outcome: 'pass', via: 'dkim', domain: 'news.acme.example' },
    ],
    [
      'a pass beside a temperror',
      { spf: { result: 'temperror', domain: 'acme.example' }, dkim: [dkim('pass', 'acme.example')] },
      { outcome: 'pass', via: 'dkim', domain: 'acme.example' },
    ],
    [
      'SPF pass for the forger’s domain',
      { spf: { result: 'pass', domain: 'evil.test' } },
      { outcome: 'fail', reason: notAligned },
    ],
    [
      'SPF pass for a look-alike domain',
      { spf: { result: 'pass', domain: 'evilacme.example' } },
      { outcome: 'fail', reason: notAligned },
    ],
    [
      'SPF softfail',
      { spf: { result: 'softfail', domain: 'acme.example' } },
      { outcome: 'fail', reason: notAligned },
    ],
    [
      'DKIM pass for another domain',
      { dkim: [dkim('pass', 'other.example')] },
      { outcome: 'fail', reason: notAligned },
    ],
    [
      'DKIM fail for the From domain',
      { dkim: [dkim('fail', 'acme.example')] },
      { outcome: 'fail', reason: notAligned },
    ],
    [
      'DKIM policy (rsa-sha1) for the From domain',
      { dkim: [dkim('policy', 'acme.example')] },
      { outcome: 'fail', reason: notAligned },
    ],
    [
      'an aligned DKIM pass whose l= leaves bytes unsigned',
      { dkim: [dkim('pass', 'acme.example', 120)] },
      {
        outcome: 'fail',
        reason: `${notAligned}; the DKIM signature of acme.example does not count: its l= leaves 120 body bytes unsigned`,
      },
    ],
    [
      'a DKIM temperror for the From domain',
      { dkim: [dkim('temperror', 'acme.example')] },
      {
        outcome: 'temperror',
        reason:
          'sender authentication failed temporarily: DNS lookup failed for the DKIM key of acme.example; try again later',
      },
    ],
    [
      'an SPF temperror for an aligned MAIL FROM',
      { spf: { result: 'temperror', domain: 'bounce.acme.example' } },
      {
        outcome: 'temperror',
        reason:
          'sender authentication failed temporarily: DNS lookup failed for SPF of bounce.acme.example; try again later',
      },
    ],
    [
      'a temperror for a domain that could not align',
      { spf: { result: 'temperror', domain: 'evil.test' }, dkim: [dkim('temperror', 'other.example')] },
      { outcome: 'fail', reason: notAligned },
    ],
  ])('%s', (_label, results, verdict) => {
    expect(evaluateSender(input('aligned', results))).toEqual(verdict);
  });
});

describe('evaluateSender, dmarc', () => {
  const failed = (result: string) =>
    `sender not authenticated: DMARC did not pass for the From domain acme.example (dmarc=${result})`;

  it.each<[string, Partial<AuthenticationResults>, ReturnType<typeof evaluateSender>]>([
    [
      'DMARC pass on SPF',
      { dmarc: dmarc('pass', { spfAligned: 'acme.example' }) },
      { outcome: 'pass', via: 'dmarc', domain: 'acme.example' },
    ],
    [
      'DMARC pass on DKIM',
      { dmarc: dmarc('pass', { dkimAligned: 'mail.acme.example' }) },
      { outcome: 'pass', via: 'dmarc', domain: 'mail.acme.example' },
    ],
    [
      'DMARC pass resting on an l= signature alone',
      {
        dmarc: dmarc('pass', { dkimAligned: 'acme.example', dkimUnsignedBodyBytes: 9 }),
        dkim: [dkim('pass', 'acme.example', 9)],
      },
      {
        outcome: 'fail',
        reason: `${failed('pass')}; the DKIM signature of acme.example does not count: its l= leaves 9 body bytes unsigned`,
      },
    ],
    [
      'DMARC pass for another author domain',
      { dmarc: dmarc('pass', { fromDomain: 'other.example', spfAligned: 'other.example' }) },
      { outcome: 'fail', reason: failed('pass') },
    ],
    ['DMARC fail', { dmarc: dmarc('fail') }, { outcome: 'fail', reason: failed('fail') }],
    [
      'no DMARC record, aligned DKIM notwithstanding',
      { dmarc: dmarc('none'), dkim: [dkim('pass', 'acme.example')] },
      { outcome: 'fail', reason: failed('none') },
    ],
    [
      'no DMARC record and an SPF temperror',
      { dmarc: dmarc('none'), spf: { result: 'temperror', domain: 'acme.example' } },
      { outcome: 'fail', reason: failed('none') },
    ],
    ['DMARC not evaluated', { dmarc: null }, { outcome: 'fail', reason: failed('none') }],
    [
      'DMARC temperror',
      { dmarc: dmarc('temperror') },
      {
        outcome: 'temperror',
        reason:
          'sender authentication failed temporarily: DNS lookup failed for the DMARC record of acme.example; try again later',
      },
    ],
    [
      'DMARC fail because the aligned DKIM key did not resolve',
      { dmarc: dmarc('fail'), dkim: [dkim('temperror', 'acme.example')] },
      {
        outcome: 'temperror',
        reason:
          'sender authentication failed temporarily: DNS lookup failed for the DKIM key of acme.example; try again later',
      },
    ],
  ])('%s', (_label, results, verdict) => {
    expect(evaluateSender(input('dmarc', results))).toEqual(verdict);
  });
});

describe('evaluateSender, ARC', () => {
  const dmarcPassAtFirstHop = { dmarc: { result: 'pass', fromDomain: 'acme.example' } };
  const dkimPassAtFirstHop = { dkim: [{ result: 'pass', domain: 'acme.example' }] };

  const refusedAs = (mode: SenderPolicyInput['mode']) =>
    mode === 'aligned'
      ? notAligned
      : 'sender not authenticated: DMARC did not pass for the From domain acme.example (dmarc=none)';

  it.each<[string, SenderPolicyInput['mode'], 'pass' | 'fail', string | null, ArcResult]>([
    ['first-hop DMARC pass, trusted sealer', 'dmarc', 'pass', null, trustedChain(dmarcPassAtFirstHop)],
    ['first-hop DMARC pass, trusted sealer', 'aligned', 'pass', null, trustedChain(dmarcPassAtFirstHop)],
    ['first-hop aligned DKIM pass', 'aligned', 'pass', null, trustedChain(dkimPassAtFirstHop)],
    [
      'first-hop aligned SPF pass',
      'aligned',
      'pass',
      null,
      trustedChain({ spf: { result: 'pass', mailFromDomain: 'acme.example' } }),
    ],
    [
      'first-hop aligned DKIM pass without DMARC',
      'dmarc',
      'fail',
      'the first hop of its trusted ARC chain did not authenticate acme.example either',
      trustedChain(dkimPassAtFirstHop),
    ],
    [
      'first-hop DMARC pass for another domain',
      'dmarc',
      'fail',
      'the first hop of its trusted ARC chain did not authenticate acme.example either',
      trustedChain({ dmarc: { result: 'pass', fromDomain: 'other.example' } }),
    ],
    [
      'an untrusted sealer',
      'aligned',
      'fail',
      'its ARC chain is sealed by forwarder.example, not a trusted ARC sealer',
      trustedChain(dmarcPassAtFirstHop, ['forwarder.example']),
    ],
    [
      'an untrusted first sealer under a trusted last one',
      'aligned',
      'fail',
      'its ARC chain is sealed by evil.test, not a trusted ARC sealer',
      trustedChain(dmarcPassAtFirstHop, ['evil.test', 'lists.example']),
    ],
    [
      'five untrusted sealers (the reply names three)',
      'aligned',
      'fail',
      'its ARC chain is sealed by a.test, b.test, c.test and 2 more, not a trusted ARC sealer',
      trustedChain(dmarcPassAtFirstHop, ['a.test', 'b.test', 'c.test', 'lists.example', 'd.test', 'e.test']),
    ],
    [
      'a chain that does not validate',
      'aligned',
      'fail',
      'its ARC chain does not validate (arc=fail)',
      { ...trustedChain(dmarcPassAtFirstHop), result: 'fail' },
    ],
  ])('%s (%s) → %s', (_label, mode, outcome, note, arc) => {
    const verdict = evaluateSender(input(mode, { arc }));
    expect(verdict).toEqual(
      outcome === 'pass'
        ? { outcome: 'pass', via: 'arc', domain: 'lists.example' }
        : { outcome: 'fail', reason: `${refusedAs(mode)}; ${note}` },
    );
  });

  it('lets a trusted chain through a DNS failure of the message’s own checks', () => {
    const verdict = evaluateSender(
      input('aligned', { dkim: [dkim('temperror', 'acme.example')], arc: trustedChain(dmarcPassAtFirstHop) }),
    );
    expect(verdict).toEqual({ outcome: 'pass', via: 'arc', domain: 'lists.example' });
  });
});
