import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load-config.ts';

const committed = (name: string) => fileURLToPath(new URL(`../../../config/${name}`, import.meta.url));

describe('committed configuration files', () => {
  it('config/gateway.yaml is the local-development default and needs no environment', async () => {
    const config = await loadConfig({ path: committed('gateway.yaml'), env: {} });
    expect(config.smtp).toMatchObject({ host: '127.0.0.1', port: 2525, hostname: 'localhost' });
    expect(config.redis.url).toBe('redis://127.0.0.1:6379');
    expect(config.api.mock).toBe(true);
    expect(config.http).toMatchObject({ host: '127.0.0.1', port: 8025, allowReset: true });
    expect(config.workspaces).toEqual([
      {
        identifier: 'sample-workspace',
        ingestEmail: 'documents@ingest.localhost',
        archives: 'skip',
        bodyAsDocument: 'never',
        encryptedPdf: 'skip',
        unlistedSenders: 'refuse',
        // The first run ends at "parsed": the mock pushes each outcome.
        trackCompletion: {
          via: 'resthook',
          firstDelay: 60_000,
          maxDelay: 300_000,
          maxPolls: 300,
          maxTime: 86_400_000,
        },
      },
    ]);
  });

  it('config/gateway.yaml takes REDIS_URL', async () => {
    const config = await loadConfig({
      path: committed('gateway.yaml'),
      env: { REDIS_URL: 'redis://cache:6379' },
    });
    expect(config.redis.url).toBe('redis://cache:6379');
  });

  it('config/gateway.example.yaml validates with PARSER_API_KEY set', async () => {
    const config = await loadConfig({
      path: committed('gateway.example.yaml'),
      env: { PARSER_API_KEY: 'secret' },
    });
    expect(config.api).toMatchObject({
      mock: false,
      apiKey: 'secret',
      baseUrl: 'https://api.eu1.example.com',
    });
    expect(config.workspaces).toHaveLength(2);
    expect(config.workspaces[0]?.whitelistIngestAddresses).toEqual(['*@acme.example', 'ap@partner.example']);
    expect(config.workspaces[0]?.upload).toMatchObject({ rejectDuplicates: true, language: 'en' });
    // The example is a production file: DELETE /v1/messages stays off there.
    expect(config.http.allowReset).toBe(false);
  });

  it('config/gateway.example.yaml without PARSER_API_KEY names the variable', async () => {
    await expect(loadConfig({ path: committed('gateway.example.yaml'), env: {} })).rejects.toThrow(
      /api\.apiKey: environment variable PARSER_API_KEY is not set/,
    );
  });
});
