import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import * as z from 'zod';
import { parseConfig } from '../../src/config/load-config.ts';
import { shutdownDeadline } from '../../src/gateway.ts';

const service = z.looseObject({
  build: z.string().optional(),
  image: z.string().optional(),
  command: z.array(z.string()).optional(),
  environment: z.record(z.string(), z.string()).optional(),
  depends_on: z.record(z.string(), z.object({ condition: z.string() })).optional(),
  healthcheck: z.object({ test: z.array(z.string()) }).optional(),
  ports: z.array(z.string()).optional(),
  stop_grace_period: z.string().optional(),
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

/** Compose's `70s` / `1m30s` durations, in ms. */
function durationMs(text: string): number {
  const match = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(text);
  if (!match || text === '') throw new Error(`not a duration: ${text}`);
  return (Number(match[1] ?? 0) * 60 + Number(match[2] ?? 0)) * 1000;
}

/** A value as compose gives it when the host sets none of the variables: `${VAR:-default}` is the default. */
function withDefaults(value: string): string {
  return value.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');
}

function defaultEnvironment(environment: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(environment).map(([name, value]) => [name, withDefaults(value)]));
}

async function gatewayConfig() {
  const { services } = await load();
  const command = services.gateway?.command ?? [];
  const configPath = command[command.indexOf('--config') + 1] ?? '';
  const env = defaultEnvironment(services.gateway?.environment ?? {});
  return {
    configPath,
    env,
    config: parseConfig({ text: await readFile(configPath, 'utf8'), env, source: configPath }),
  };
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
    const { configPath, env, config } = await gatewayConfig();
    expect(configPath).toBe('config/gateway.compose.yaml');
    expect(config.api.baseUrl).toBe('http://mock-api:8026');
    expect(config.api.apiKey).toBe(env.PARSER_API_KEY);
    expect(config.redis.url).toBe('redis://redis:6379');
    expect(config.smtp.host).toBe('::');
    expect(config.http.host).toBe('::');
  });

  it('links records to the HTTP API as the host reaches it through the mapped port', async () => {
    const { services } = await load();
    const { config } = await gatewayConfig();
    expect(config.http.publicUrl).toBe('http://127.0.0.1:8025');
    expect((services.gateway?.ports ?? []).map(withDefaults)).toContain('127.0.0.1:8025:8025');
  });

  it('gives the gateway longer than its own shutdown deadline before SIGKILL', async () => {
    const { services } = await load();
    const { config } = await gatewayConfig();
    const grace = durationMs(services.gateway?.stop_grace_period ?? '10s');
    expect(grace).toBeGreaterThan(shutdownDeadline(config));
  });
});

describe('docker-compose.scanning.yml', () => {
  async function loadScanning() {
    return compose.parse(parse(await readFile('docker-compose.scanning.yml', 'utf8')));
  }

  it("adds ClamAV's and rspamd's official images behind the scanning profile", async () => {
    const { services } = await loadScanning();
    expect(services.clamav?.image).toMatch(/^clamav\/clamav:/);
    expect(services.rspamd?.image).toMatch(/^rspamd\/rspamd:/);
    expect(services.clamav?.profiles).toEqual(['scanning']);
    expect(services.rspamd?.profiles).toEqual(['scanning']);
  });

  it('leaves the plain stack without scanners', async () => {
    const { services } = await load();
    expect(Object.keys(services).sort()).toEqual(['gateway', 'mock-api', 'redis']);
    const { config } = await gatewayConfig();
    expect(config.scan).toEqual({ unavailable: 'tempfail' });
  });

  it('points the gateway at both services, with a configuration that validates with the compose environment', async () => {
    const { services } = await loadScanning();
    const command = services.gateway?.command ?? [];
    const configPath = command[command.indexOf('--config') + 1] ?? '';
    const { env } = await gatewayConfig();
    const config = parseConfig({ text: await readFile(configPath, 'utf8'), env, source: configPath });
    expect(config.scan.clamav).toMatchObject({ host: 'clamav', port: 3310 });
    expect(config.scan.rspamd?.url).toBe('http://rspamd:11333');
    expect(config.workspaces[0]).toMatchObject({ malware: 'refuse', spam: 'refuse' });
    expect(Object.keys(services.gateway?.depends_on ?? {}).sort()).toEqual(['clamav', 'rspamd']);
  });
});
