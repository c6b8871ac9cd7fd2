import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config/load-config.ts';

/** The JSON array of the Dockerfile's last `NAME [...]` instruction. */
async function instruction(name: string): Promise<string[]> {
  const lines = (await readFile('Dockerfile', 'utf8'))
    .split('\n')
    .filter((line) => line.startsWith(`${name} `));
  const last = lines.at(-1);
  if (last === undefined) throw new Error(`the Dockerfile has no ${name}`);
  return JSON.parse(last.slice(name.length + 1)) as string[];
}

/** The exec form of the HEALTHCHECK's CMD, which continues on the line after HEALTHCHECK. */
async function healthcheckCommand(): Promise<string[]> {
  const lines = (await readFile('Dockerfile', 'utf8')).split('\n');
  const at = lines.findIndex((line) => line.startsWith('HEALTHCHECK '));
  const command = lines
    .slice(at, at + 2)
    .join('\n')
    .split(' CMD ')[1];
  if (at < 0 || command === undefined) throw new Error('the Dockerfile has no HEALTHCHECK CMD');
  return JSON.parse(command) as string[];
}

/** The health check's exit code against a server answering /healthz with `status`. */
async function healthcheckExit(status: number): Promise<number> {
  const server = createServer((req, res) => {
    res.writeHead(req.url === '/healthz' ? status : 404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const [program, ...args] = await healthcheckCommand();
  expect(program).toBe('node');
  try {
    await promisify(execFile)(process.execPath, args, { env: { HTTP_PORT: String(port) } });
    return 0;
  } catch (err) {
    return (err as { code?: number }).code ?? -1;
  } finally {
    server.close();
  }
}

async function defaultConfig(env: Record<string, string>) {
  const command = await instruction('CMD');
  const path = command[command.indexOf('--config') + 1] ?? '';
  return parseConfig({ text: await readFile(path, 'utf8'), env, source: path });
}

/** The problems the default configuration reports with `env`, one per line. */
async function problemsWith(env: Record<string, string>): Promise<string> {
  try {
    await defaultConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.join('\n');
    throw err;
  }
  throw new Error('the configuration was accepted');
}

const ENV = {
  REDIS_URL: 'redis://redis.internal:6379',
  PARSER_API_URL: 'https://api.eu1.example.com',
  PARSER_API_KEY: 'image-test-key',
  HTTP_TOKEN: 'image-test-http-token',
  PUBLIC_URL: 'https://ingest.example.com',
  WORKSPACE_ID: 'ws-1',
  INGEST_EMAIL: 'invoices@ingest.example.com',
};

describe('the image (Dockerfile)', () => {
  it('runs the gateway as the numeric uid and gid of the node user, which a non-root policy can verify', async () => {
    const user = (await readFile('Dockerfile', 'utf8'))
      .split('\n')
      .filter((line) => line.startsWith('USER '));
    expect(user.at(-1)).toBe('USER 1000:1000');
  });

  it('checks its health on /healthz at HTTP_PORT, without a token', async () => {
    expect(await healthcheckExit(200)).toBe(0);
    expect(await healthcheckExit(503)).toBe(1);
  });

  it('starts with a configuration that listens on every interface and takes everything from the environment', async () => {
    expect(await instruction('ENTRYPOINT')).toEqual(['node', '--max-semi-space-size=4', 'dist/cli.js']);
    const env = (await readFile('Dockerfile', 'utf8')).split('\n').filter((line) => line.startsWith('ENV '));
    expect(env.at(-1)?.split(' ')).toContain('MALLOC_ARENA_MAX=2');
    const config = await defaultConfig({ ...ENV, SMTP_HOSTNAME: 'mx1.example.com', SMTP_PORT: '25' });
    expect(config.smtp).toMatchObject({ host: '::', port: 25, hostname: 'mx1.example.com' });
    expect(config.http).toMatchObject({
      host: '::',
      port: 8025,
      token: ENV.HTTP_TOKEN,
      publicUrl: ENV.PUBLIC_URL,
    });
    expect(config.redis.url).toBe(ENV.REDIS_URL);
    expect(config.api).toMatchObject({
      baseUrl: ENV.PARSER_API_URL,
      apiKey: ENV.PARSER_API_KEY,
      mock: false,
    });
    expect(config.api.allowInsecureHttp).toBe(false);
    expect(config.redis.startLocal).toBe(false);
    expect(config.workspaces).toEqual([
      expect.objectContaining({ identifier: ENV.WORKSPACE_ID, ingestEmail: ENV.INGEST_EMAIL }),
    ]);
  });

  it('names every variable it needs when started without them', async () => {
    const problems = await problemsWith({});
    for (const variable of Object.keys(ENV).filter((name) => name !== 'HTTP_TOKEN')) {
      expect(problems).toContain(`environment variable ${variable} is not set`);
    }
  });

  it('requires HTTP_TOKEN, since its HTTP API is reachable from outside the container', async () => {
    const { HTTP_TOKEN: _, ...withoutToken } = ENV;
    expect(await problemsWith(withoutToken)).toMatch(/http\.token: .*HTTP_TOKEN/);
  });
});
