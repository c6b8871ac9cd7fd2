// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the ${VAR} syntax is how a secret reaches the configuration.
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../src/config/load-config.ts';
import { redactConfig } from '../../../src/config/redact-config.ts';

const WORKSPACE = 'workspaces:\n  - {identifier: ws-1, ingestEmail: in@ingest.example}\n';
const secret = 'whsec-0123456789abcdef';

function load(webhooks: string) {
  return parseConfig({
    text: `api: {baseUrl: "https://api.example.com", apiKey: "key-0123"}\nevents:\n  webhooks:\n${webhooks}\n${WORKSPACE}`,
    env: { WEBHOOK_SECRET: secret },
    source: 'inline',
  });
}

/** events.webhooks[] (README, "Webhooks"): validated at load, its secret never shown. */
describe('webhook configuration', () => {
  it('takes the secret from the environment and redacts it when printed', () => {
    const config = load('    - {url: "https://ops.example/hooks", secret: "${WEBHOOK_SECRET}"}');
    expect(config.events.webhooks[0]?.secret).toBe(secret);
    const printed = JSON.stringify(redactConfig(config));
    expect(printed).not.toContain(secret);
    expect(printed).toContain('https://ops.example/hooks');
  });

  it.each([
    [
      'an ftp URL',
      '    - {url: "ftp://ops.example/", secret: "${WEBHOOK_SECRET}"}',
      'events.webhooks[0].url',
    ],
    [
      'a URL with a password',
      '    - {url: "https://u:p@ops.example/", secret: "${WEBHOOK_SECRET}"}',
      'events.webhooks[0].url',
    ],
    ['a short secret', '    - {url: "https://ops.example/", secret: "short"}', 'events.webhooks[0].secret'],
    [
      'an unknown event',
      '    - {url: "https://ops.example/", secret: "${WEBHOOK_SECRET}", events: [document.lost]}',
      'events.webhooks[0].events',
    ],
  ])('refuses %s', (_name, webhooks, path) => {
    let error: unknown;
    try {
      load(webhooks);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(String((error as Error).message)).toContain(path);
    expect(String((error as Error).message)).not.toContain(secret);
  });
});
