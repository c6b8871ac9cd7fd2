import { describe, expect, it } from 'vitest';
import { compareWorkspace, inSync, ruleKey } from '../../../../src/cli/workspace/workspace-diff.ts';

const local = (ingestEmail: string, whitelistIngestAddresses?: string[] | null) => ({
  identifier: 'ws',
  ingestEmail,
  whitelistIngestAddresses,
});

describe('compareWorkspace: in sync', () => {
  it.each([
    {
      name: 'same values',
      l: local('a@ingest.example', ['*@acme.example']),
      r: { ingestEmail: 'a@ingest.example', whitelistIngestAddresses: ['*@acme.example'] },
    },
    {
      name: 'address case and trailing dot',
      l: local('a@ingest.example'),
      r: { ingestEmail: 'A@Ingest.Example.', whitelistIngestAddresses: null },
    },
    {
      name: 'IDN domain as Unicode and punycode',
      l: local('a@xn--bcher-kva.example'),
      r: { ingestEmail: 'a@bücher.example' },
    },
    {
      name: 'absent and null',
      l: local('a@i.example'),
      r: { ingestEmail: 'a@i.example', whitelistIngestAddresses: null },
    },
    {
      name: 'null and []',
      l: local('a@i.example', null),
      r: { ingestEmail: 'a@i.example', whitelistIngestAddresses: [] },
    },
    {
      name: 'rules in another order and case',
      l: local('a@i.example', ['ap@partner.example', '*@acme.example']),
      r: { ingestEmail: 'a@i.example', whitelistIngestAddresses: ['*@ACME.example', 'AP@partner.example.'] },
    },
  ])('$name', ({ l, r }) => {
    const comparison = compareWorkspace(l, r);
    expect(comparison).toEqual({});
    expect(inSync(comparison)).toBe(true);
  });
});

describe('compareWorkspace: differences', () => {
  it('a different ingest address', () => {
    expect(compareWorkspace(local('a@i.example'), { ingestEmail: 'b@i.example' })).toEqual({
      ingestEmail: { local: 'a@i.example', service: 'b@i.example' },
    });
  });

  it('no ingest address at the service', () => {
    expect(compareWorkspace(local('a@i.example'), { ingestEmail: null })).toEqual({
      ingestEmail: { local: 'a@i.example', service: null },
    });
  });

  it('rules only on one side, named as written', () => {
    const comparison = compareWorkspace(local('a@i.example', ['*@acme.example', 'ap@partner.example']), {
      ingestEmail: 'a@i.example',
      whitelistIngestAddresses: ['*@ACME.example', 'new@partner.example'],
    });
    expect(comparison).toEqual({
      whitelistIngestAddresses: {
        local: ['*@acme.example', 'ap@partner.example'],
        service: ['*@ACME.example', 'new@partner.example'],
        onlyLocal: ['ap@partner.example'],
        onlyService: ['new@partner.example'],
      },
    });
    expect(inSync(comparison)).toBe(false);
  });

  it('any sender locally, a list at the service', () => {
    expect(
      compareWorkspace(local('a@i.example'), {
        ingestEmail: 'a@i.example',
        whitelistIngestAddresses: ['x@y.example'],
      }),
    ).toEqual({
      whitelistIngestAddresses: {
        local: null,
        service: ['x@y.example'],
        onlyLocal: [],
        onlyService: ['x@y.example'],
      },
    });
  });
});

describe('ruleKey', () => {
  it.each([
    { rule: '*@ACME.Example', key: '*@acme.example' },
    { rule: 'AP@partner.example.', key: 'ap@partner.example' },
    { rule: '*@bücher.example', key: '*@xn--bcher-kva.example' },
    { rule: '*@*.Acme.example', key: '*@*.acme.example' },
    { rule: 'a@b@c.example', key: 'a@b@c.example' },
  ])('$rule → $key', ({ rule, key }) => {
    expect(ruleKey(rule)).toBe(key);
  });
});
