import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load-config.ts';
import { redactConfig, redactUrl } from '../../../src/config/redact-config.ts';

const WORKSPACE = 'workspaces:\n  - {identifier: ws-1, ingestEmail: in@ingest.example}\n';

function load(redisUrl: string, apiKey: string) {
  const text = `redis: {url: "${redisUrl}"}\napi: {baseUrl: "https://api.example.com", apiKey: "${apiKey}"}\n${WORKSPACE}`;
  return parseConfig({ text, env: {}, source: 'inline' });
}

describe('redactConfig', () => {
  it.each([
    { redisUrl: 'redis://127.0.0.1:6379', shown: 'redis://127.0.0.1:6379' },
    { redisUrl: 'redis://default:s3cr3t-pw@cache:6379/0', shown: 'redis://default:***@cache:6379/0' },
    { redisUrl: 'rediss://:s3cr3t-pw@cache:6380', shown: 'rediss://:***@cache:6380' },
    { redisUrl: 'redis://user@cache:6379', shown: 'redis://user@cache:6379' },
  ])('shows $redisUrl as $shown and never the API key', ({ redisUrl, shown }) => {
    const config = load(redisUrl, 'sk-live-0123456789');
    const redacted = redactConfig(config);
    expect(redacted.redis.url).toBe(shown);
    expect(redacted.api.apiKey).toBe('[redacted]');
    const printed = JSON.stringify(redacted);
    expect(printed).not.toContain('sk-live-0123456789');
    expect(printed).not.toContain('s3cr3t-pw');
  });

  it('copies everything else and leaves the configuration untouched', () => {
    const config = load('redis://u:pw@cache:6379', 'key');
    const redacted = redactConfig(config);
    expect(redacted).toEqual({
      ...config,
      redis: { ...config.redis, url: 'redis://u:***@cache:6379' },
      api: { ...config.api, apiKey: '[redacted]' },
    });
    expect(config.api.apiKey).toBe('key');
    expect(config.redis.url).toBe('redis://u:pw@cache:6379');
  });

  it('adds no apiKey when there is none', () => {
    const config = parseConfig({ text: `api: {mock: true}\n${WORKSPACE}`, env: {}, source: 'inline' });
    expect(redactConfig(config).api).not.toHaveProperty('apiKey');
  });
});

describe('redactUrl', () => {
  it.each([
    { url: 'redis://gateway:p%40ss%3Aw0rd@cache:6379/2', shown: 'redis://gateway:***@cache:6379/2' },
    { url: 'https://api.example.com/v3', shown: 'https://api.example.com/v3' },
  ])('shows $url as $shown', ({ url, shown }) => {
    expect(redactUrl(url)).toBe(shown);
  });
});
