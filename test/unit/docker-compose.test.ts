import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { parseConfig } from '../../src/config/load-config.ts';

const service = z.looseObject({
  build: z.string().optional(),
  image: z.string().optional(),
  command: z.array(z.string()).optional(),
  environment: z.record(z.string(), z.string()).optional(),
  depends_on: z.record(z.string(), z.object({ condition: z.string() })).optional(),
  healthcheck: z.object({ test: z.array(z.string()) }).optional(),
  ports: z.array(z.string()).optional(),
});
const compose = z.object({
  services: z.record(z.string(), service),
  volumes: z.record(z.string(), z.unknown()),
});

async function load() {
  return compose.parse(parse(await readFile('docker-compose.yml', 'utf8')));
}

/** The value after `--name` in a redis-server command line. */
function option(command: readonly string[], name: string): string | undefined {
  const at = command.indexOf(`--${name}`);
  return at >= 0 ? command[at + 1] : undefined;
}

describe('docker-compose.yml', () => {
  it('runs Redis with AOF, no eviction, a volume and a healthcheck', async () => {
    const { services } = await load();
    const redis = services.redis;
    expect(redis?.image).toMatch(/^redis:\d/);
    const command = redis?.command ?? [];
    expect(command[0]).toBe('redis-server');
    expect(option(command, 'appendonly')).toBe('yes');
    expect(option(command, 'maxmemory-policy')).toBe('noeviction');
    expect(redis?.healthcheck?.test).toContain('redis-cli');
  });

  it('starts the mock API and the gateway from this project, the gateway once Redis is healthy', async () => {
    const { services } = await load();
    expect(services['mock-api']?.build).toBe('.');
    expect(services['mock-api']?.command?.[0]).toBe('mock-api');
    const gateway = services.gateway;
    expect(gateway?.build).toBe('.');
    expect(gateway?.depends_on?.redis?.condition).toBe('service_healthy');
    expect(gateway?.environment?.REDIS_URL).toBe('redis://redis:6379');
    expect(gateway?.ports).toEqual(
      expect.arrayContaining([expect.stringContaining(':2525'), expect.stringContaining(':8025')]),
    );
  });

  it('gives the gateway a configuration that validates with the compose environment', async () => {
    const { services } = await load();
    const command = services.gateway?.command ?? [];
    const configPath = command[command.indexOf('--config') + 1];
    expect(configPath).toBe('config/gateway.compose.yaml');
    const env = Object.fromEntries(
      Object.entries(services.gateway?.environment ?? {}).map(([name, value]) => [
        name,
        // Compose fills ${VAR:-default} from the host environment; here, with the default.
        value.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1'),
      ]),
    );
    const config = parseConfig({
      text: await readFile(configPath ?? '', 'utf8'),
      env,
      source: configPath ?? '',
    });
    expect(config.api.baseUrl).toBe('http://mock-api:8026');
    expect(config.api.apiKey).toBe(env.PARSER_API_KEY);
    expect(config.redis.url).toBe('redis://redis:6379');
    expect(config.smtp.host).toBe('0.0.0.0');
    expect(config.http.host).toBe('0.0.0.0');
  });
});
