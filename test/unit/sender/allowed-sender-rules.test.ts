import { describe, expect, it } from 'vitest';
import { allowRuleFor, namesRule, withAllowedSenders } from '../../../src/sender/allowed-sender-rules.ts';
import type { SenderWorkspace } from '../../../src/sender/sender-settings-schema.ts';

describe('allowRuleFor', () => {
  it.each([
    ['ann@acme.example', 'address', 'ann@acme.example'],
    ['ann@acme.example', 'domain', '*@acme.example'],
    ['Ann@ACME.Example.', 'address', 'Ann@acme.example'],
    ['ann@BÜCHER.example', 'domain', '*@xn--bcher-kva.example'],
    ['not an address', 'address', null],
    ['ann@', 'domain', null],
  ] as const)('%s by %s is %s', (sender, scope, rule) => {
    expect(allowRuleFor(sender, scope)).toBe(rule);
  });
});

describe('namesRule', () => {
  it.each([
    [['*@acme.example'], '*@ACME.example', true],
    [['ap@acme.example'], '*@acme.example', false],
    [[], 'ap@acme.example', false],
  ])('%j names %s: %s', (rules, rule, named) => {
    expect(namesRule(rules, rule)).toBe(named);
  });
});

describe('withAllowedSenders', () => {
  const listed: SenderWorkspace = { identifier: 'ws-a', whitelistIngestAddresses: ['*@partner.example'] };
  const open: SenderWorkspace = { identifier: 'ws-open' };
  const empty: SenderWorkspace = { identifier: 'ws-empty', whitelistIngestAddresses: [] };

  it.each([
    ['adds after the own rules', listed, ['ann@acme.example'], ['*@partner.example', 'ann@acme.example']],
    [
      'adds a rule once, compared without case',
      listed,
      ['*@PARTNER.example', 'b@c.example', 'B@c.example'],
      ['*@partner.example', 'b@c.example'],
    ],
    ['leaves out a rule it cannot apply', listed, ['{a,b}@c.example', 'no-at'], ['*@partner.example']],
    ['keeps an open workspace open', open, ['ann@acme.example'], undefined],
    ['keeps an empty list empty (any sender)', empty, ['ann@acme.example'], []],
    ['changes nothing without additions', listed, [], ['*@partner.example']],
  ] as const)('%s', (_name, workspace, added, rules) => {
    const [merged] = withAllowedSenders([workspace], new Map([[workspace.identifier, [...added]]]));
    expect(merged?.whitelistIngestAddresses).toEqual(rules);
  });

  it('returns the same object when nothing is added, so route tables stay comparable', () => {
    const [merged] = withAllowedSenders([listed], new Map([['ws-other', ['a@b.example']]]));
    expect(merged).toBe(listed);
  });
});
