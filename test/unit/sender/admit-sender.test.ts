import { describe, expect, it } from 'vitest';
import { RefusalError } from '../../../src/errors.ts';
import {
  type AdmitSenderInput,
  type AdmittingWorkspace,
  admitSender,
  needsAuthentication,
} from '../../../src/sender/admit-sender.ts';
import type { AuthenticationResults } from '../../../src/sender/authentication-results.ts';
import { compileAllowList } from '../../../src/sender/compile-allow-list.ts';
import { loadMailauth } from '../../../src/sender/load-mailauth.ts';
import { parseFromHeader } from '../../../src/sender/parse-from-header.ts';
import type { SenderEvidence } from '../../../src/sender/sender-policy.ts';
import type { SenderAuthenticationMode } from '../../../src/sender/sender-settings-schema.ts';

const { alignsRelaxed } = await loadMailauth();
const evidence = (results: AuthenticationResults): SenderEvidence => ({ results, alignsRelaxed });

function gate(
  identifier: string,
  rules: string[] | null,
  mode?: SenderAuthenticationMode,
): AdmittingWorkspace {
  return {
    config: { identifier, whitelistIngestAddresses: rules, ...(mode ? { senderAuthentication: mode } : {}) },
    admits: compileAllowList(rules),
    policy: 'unused by the admit decision',
  };
}

/** Results in which acme.example's DKIM passes and nothing else: aligned passes, dmarc (no record) fails. */
const dkimOnly: AuthenticationResults = {
  spf: { result: 'none', domain: 'elsewhere.test' },
  dkim: [{ result: 'pass', domain: 'acme.example', selector: 'sel', unsignedBodyBytes: 0, comment: null }],
  dmarc: {
    result: 'none',
    fromDomain: 'acme.example',
    policy: null,
    spfAligned: null,
    dkimAligned: null,
    dkimUnsignedBodyBytes: 0,
  },
  arc: null,
};
const nothing: AuthenticationResults = { ...dkimOnly, dkim: [] };
const dnsDown: AuthenticationResults = {
  ...dkimOnly,
  dkim: [
    { result: 'temperror', domain: 'acme.example', selector: 'sel', unsignedBodyBytes: 0, comment: null },
  ],
};

function run(overrides: Partial<AdmitSenderInput> & Pick<AdmitSenderInput, 'workspaces'>) {
  return admitSender({
    sender: parseFromHeader(['Ann <ann@acme.example>']),
    defaultMode: 'off',
    evidence: null,
    trustedArcSealers: new Set(),
    ...overrides,
  });
}

function refusal(action: () => unknown): { code: string; message: string } {
  try {
    action();
  } catch (error) {
    if (error instanceof RefusalError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a refusal');
}

const notAligned =
  'sender not authenticated: the From domain acme.example is not aligned with a passing SPF or DKIM result';

describe('admitSender', () => {
  it('with every workspace off, decides on the allow-lists alone and records no authentication', () => {
    const { decisions, authentication } = run({ workspaces: [gate('ws', ['*@acme.example'])] });
    expect(decisions).toEqual([{ identifier: 'ws', admitted: true, reason: null }]);
    expect(authentication).toBeNull();
    expect(refusal(() => run({ workspaces: [gate('ws', ['*@partner.example'])] }))).toEqual({
      code: 'SENDER_NOT_ADMITTED',
      message: 'sender ann@acme.example is not admitted for this address',
    });
  });

  it('admits an authenticated sender on the allow-list and records the verdict', () => {
    const { decisions, authentication } = run({
      workspaces: [gate('ws', ['*@acme.example'], 'aligned')],
      evidence: evidence(dkimOnly),
    });
    expect(decisions).toEqual([
      { identifier: 'ws', admitted: true, reason: null, senderAuthentication: 'aligned' },
    ]);
    expect(authentication).toEqual({
      fromDomain: 'acme.example',
      results: dkimOnly,
      verdicts: { aligned: { outcome: 'pass', via: 'dkim', domain: 'acme.example' } },
    });
  });

  it('still applies the allow-list to an authenticated sender', () => {
    expect(
      refusal(() =>
        run({ workspaces: [gate('ws', ['*@partner.example'], 'aligned')], evidence: evidence(dkimOnly) }),
      ),
    ).toEqual({
      code: 'SENDER_NOT_ADMITTED',
      message: 'sender ann@acme.example is not admitted for this address',
    });
  });

  it('answers an unauthenticated sender the same whether or not the allow-list holds it', () => {
    const listed = refusal(() =>
      run({ workspaces: [gate('ws', ['*@acme.example'], 'aligned')], evidence: evidence(nothing) }),
    );
    const unlisted = refusal(() =>
      run({ workspaces: [gate('ws', ['*@partner.example'], 'aligned')], evidence: evidence(nothing) }),
    );
    expect(listed).toEqual({ code: 'SENDER_NOT_AUTHENTICATED', message: notAligned });
    expect(unlisted).toEqual(listed);
  });

  it('authenticates for an open workspace too', () => {
    expect(
      refusal(() => run({ workspaces: [gate('ws', null, 'aligned')], evidence: evidence(nothing) })),
    ).toEqual({
      code: 'SENDER_NOT_AUTHENTICATED',
      message: notAligned,
    });
  });

  it('refuses an unusable From under authentication, saying why', () => {
    const sender = parseFromHeader(['ann@acme.example', 'bob@acme.example']);
    expect(
      refusal(() => run({ sender, workspaces: [gate('ws', null, 'dmarc')], evidence: evidence(nothing) })),
    ).toEqual({
      code: 'SENDER_NOT_AUTHENTICATED',
      message: 'sender not authenticated: 2 From headers',
    });
  });

  it('checks each workspace under its own mode', () => {
    const { decisions, authentication } = run({
      workspaces: [
        gate('ws-aligned', ['*@acme.example'], 'aligned'),
        gate('ws-dmarc', ['*@acme.example'], 'dmarc'),
        gate('ws-default', ['*@acme.example']),
      ],
      defaultMode: 'aligned',
      evidence: evidence(dkimOnly),
    });
    expect(decisions).toEqual([
      { identifier: 'ws-aligned', admitted: true, reason: null, senderAuthentication: 'aligned' },
      {
        identifier: 'ws-dmarc',
        admitted: false,
        reason: 'sender not authenticated: DMARC did not pass for the From domain acme.example (dmarc=none)',
        senderAuthentication: 'dmarc',
      },
      { identifier: 'ws-default', admitted: true, reason: null, senderAuthentication: 'aligned' },
    ]);
    expect(Object.keys(authentication?.verdicts ?? {}).sort()).toEqual(['aligned', 'dmarc']);
  });

  it('lets a workspace that says off take what the default would refuse', () => {
    const { decisions } = run({
      workspaces: [gate('ws-strict', ['*@acme.example']), gate('ws-off', ['*@acme.example'], 'off')],
      defaultMode: 'dmarc',
      evidence: evidence(dkimOnly),
    });
    expect(decisions.map((decision) => [decision.identifier, decision.admitted])).toEqual([
      ['ws-strict', false],
      ['ws-off', true],
    ]);
  });

  it('answers 451 for the whole message when one workspace could not authenticate for DNS', () => {
    expect(
      refusal(() =>
        run({
          workspaces: [gate('ws-off', null, 'off'), gate('ws-aligned', null, 'aligned')],
          evidence: evidence(dnsDown),
        }),
      ),
    ).toEqual({
      code: 'SENDER_AUTHENTICATION_TEMPFAIL',
      message:
        'sender authentication failed temporarily: DNS lookup failed for the DKIM key of acme.example; try again later',
    });
  });

  it('treats authentication asked for without results as an internal failure, not a refusal', () => {
    expect(() => run({ workspaces: [gate('ws', null, 'aligned')] })).toThrow(
      'sender authentication (aligned) asked for without results',
    );
  });
});

describe('admitSender with unlistedSenders: hold', () => {
  const holding = (identifier: string, rules: string[] | null, mode?: SenderAuthenticationMode) => {
    const base = gate(identifier, rules, mode);
    return { ...base, config: { ...base.config, unlistedSenders: 'hold' as const } };
  };

  it('holds for the workspace a sender its allow-list does not name, instead of refusing', () => {
    const result = run({ workspaces: [holding('ws', ['*@partner.example'])] });
    expect(result.holdingFor).toEqual(['ws']);
    expect(result.decisions).toEqual([
      { identifier: 'ws', admitted: false, reason: 'sender not in the allow-list' },
    ]);
  });

  it('holds nothing when the sender is listed', () => {
    expect(run({ workspaces: [holding('ws', ['*@acme.example'])] }).holdingFor).toEqual([]);
  });

  it('still refuses an unlisted sender under the default refuse', () => {
    expect(refusal(() => run({ workspaces: [gate('ws', ['*@partner.example'])] })).code).toBe(
      'SENDER_NOT_ADMITTED',
    );
  });

  it('refuses a sender that fails authentication, whatever unlistedSenders says', () => {
    const action = () =>
      run({
        workspaces: [holding('ws', ['*@partner.example'], 'aligned')],
        evidence: evidence(nothing),
      });
    expect(refusal(action).code).toBe('SENDER_NOT_AUTHENTICATED');
  });
});

describe('needsAuthentication', () => {
  it.each<[SenderAuthenticationMode, Array<SenderAuthenticationMode | undefined>, boolean]>([
    ['off', [undefined, 'off'], false],
    ['off', [undefined, 'aligned'], true],
    ['dmarc', [undefined], true],
    ['aligned', ['off', 'off'], false],
  ])('default %s, workspaces %j → %s', (defaultMode, modes, needed) => {
    const workspaces = modes.map((mode, index) => gate(`ws-${index}`, null, mode));
    expect(needsAuthentication(workspaces, defaultMode)).toBe(needed);
  });
});
