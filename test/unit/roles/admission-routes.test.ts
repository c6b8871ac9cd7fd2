import { describe, expect, it } from 'vitest';
import { testConfig } from '../../../harness/test-config.ts';
import { fileRoutes } from '../../../src/config/schema.ts';
import type { Transaction } from '../../../src/intake/decide.ts';
import { createLiveSettings } from '../../../src/live-settings.ts';
import type { AllowedSenders } from '../../../src/record/allowed-senders.ts';
import { createAdmissionRoutes } from '../../../src/roles/admission-routes.ts';

describe('createAdmissionRoutes: readmit', () => {
  it('keeps the document type (and tag) a recipient was routed with when the allow-list grows', async () => {
    const config = testConfig({
      workspaces: [
        {
          identifier: 'inbox',
          ingestEmail: 'inbox@ingest.test',
          whitelistIngestAddresses: ['ann@a.example'],
        },
      ],
    });
    const [inbox] = fileRoutes(config);
    if (inbox === undefined) throw new Error('no workspace');
    const routed = [
      inbox,
      { ...inbox, ingestEmail: 'receipts@ingest.test', addressOfDocumentType: 'dt-receipt' },
    ];
    let rules = new Map<string, string[]>();
    const allowed = { read: async () => rules } as unknown as AllowedSenders;
    const settings = createLiveSettings({ config, apiBaseUrl: 'http://api.invalid', apiKey: 'k' });
    const admission = await createAdmissionRoutes(settings, () => routed, allowed);

    const route = admission.table().route('receipts+acme@ingest.test');
    if (route === undefined) throw new Error('not routed');
    const transaction: Transaction = {
      remoteAddress: null,
      helo: null,
      mailFrom: 'bob@b.example',
      workspaces: [route],
      rcptTo: ['receipts+acme@ingest.test'],
    };
    // A sender allowed at a release on another instance: the transaction is routed again.
    rules = new Map([['inbox', ['bob@b.example']]]);
    const again = await admission.readmit(transaction);
    expect(again?.workspaces.map((w) => [w.config.identifier, w.documentType, w.subaddress])).toEqual([
      ['inbox', 'dt-receipt', 'acme'],
    ]);
    expect(again?.workspaces[0]?.config.whitelistIngestAddresses).toEqual(['ann@a.example', 'bob@b.example']);
  });
});
