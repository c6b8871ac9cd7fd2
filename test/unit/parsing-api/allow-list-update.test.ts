import { describe, expect, it } from 'vitest';
import { AllowListChangedError, addAllowListRule } from '../../../src/parsing-api/allow-list-update.ts';
import type { ServiceWorkspace, WorkspaceUpdate } from '../../../src/parsing-api/service-workspace.ts';
import type { WorkspaceClient } from '../../../src/parsing-api/workspace-client.ts';

/**
 * A service whose list someone else changes: `changes[n]` is applied just after the n-th GET
 * has been answered, as another client's PATCH landing between our requests would be.
 */
function service(initial: string[] | null, changes: ((list: string[]) => string[])[] = []) {
  let list = initial;
  let gets = 0;
  const patches: WorkspaceUpdate[] = [];
  const client: WorkspaceClient = {
    async getWorkspace(identifier): Promise<ServiceWorkspace> {
      const answer = { identifier, whitelistIngestAddresses: list && [...list] };
      const change = changes[gets++];
      if (change) list = change(list ?? []);
      return answer;
    },
    async updateWorkspace(identifier, update) {
      patches.push(update);
      if (update.whitelistIngestAddresses !== undefined) list = update.whitelistIngestAddresses;
      return { identifier, whitelistIngestAddresses: list };
    },
    close: () => Promise.resolve(),
  };
  return { client, patches, list: () => list };
}

describe('addAllowListRule', () => {
  it('reads twice, then sends the list with the rule after every rule it had', async () => {
    const api = service(['*@partner.example', 'ap@supplier.example']);
    expect(await addAllowListRule(api.client, 'ws', 'ann@acme.example')).toEqual({
      kind: 'added',
      rules: ['*@partner.example', 'ap@supplier.example', 'ann@acme.example'],
    });
    expect(api.patches).toEqual([
      { whitelistIngestAddresses: ['*@partner.example', 'ap@supplier.example', 'ann@acme.example'] },
    ]);
  });

  it('keeps a rule someone added between its two reads', async () => {
    const api = service(['*@partner.example'], [(list) => [...list, 'late@other.example']]);
    await addAllowListRule(api.client, 'ws', 'ann@acme.example');
    expect(api.list()).toEqual(['*@partner.example', 'late@other.example', 'ann@acme.example']);
  });

  it.each([
    [
      'a list that names the rule already (any case)',
      ['ANN@acme.example'],
      { kind: 'present', rules: ['ANN@acme.example'] },
    ],
    ['an empty list: the workspace takes any sender', [], { kind: 'open' }],
    ['no list at all', null, { kind: 'open' }],
  ] as const)('sends nothing for %s', async (_name, initial, outcome) => {
    const api = service(initial === null ? null : [...initial]);
    expect(await addAllowListRule(api.client, 'ws', 'ann@acme.example')).toEqual(outcome);
    expect(api.patches).toEqual([]);
  });

  it('gives up, sending nothing, when the list changes at every read', async () => {
    const grow = (list: string[]) => [...list, `r${list.length}@x.example`];
    const api = service(
      ['*@partner.example'],
      Array.from({ length: 10 }, () => grow),
    );
    await expect(addAllowListRule(api.client, 'ws', 'ann@acme.example')).rejects.toThrow(
      AllowListChangedError,
    );
    expect(api.patches).toEqual([]);
  });
});
