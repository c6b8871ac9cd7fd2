import { createMockApi, type MockApi } from '@ingest-gateway/mock-parsing-api';
import { afterEach, describe, expect, it } from 'vitest';
import { LogSink } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { createOpenApiCheck, type OpenApiDocument } from '../../harness/openapi-check.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { deliver, queuedId, SmtpSession } from '../../harness/smtp-session.ts';
import { testConfig } from '../../harness/test-config.ts';
import type { GatewayConfig } from '../../src/config/schema.ts';
import { type Gateway, startGateway } from '../../src/gateway.ts';
import { createLogger } from '../../src/logger.ts';
import { createMetrics, type GatewayMetrics } from '../../src/metrics.ts';

/**
 * The route table read from the parsing service, end to end: a real Redis, the mock API over
 * HTTP with workspaces added, removed and rotated while the gateway runs, real SMTP sessions.
 */

const API_KEY = 'discovery-test-key';
const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function startMock(
  documentTypes: Parameters<typeof createMockApi>[0]['documentTypes'] = [],
): Promise<{ mock: MockApi; url: string }> {
  const mock = createMockApi({
    apiKey: API_KEY,
    organization: { identifier: 'org-1' },
    workspaces: [
      { identifier: 'ws-a' },
      { identifier: 'ws-b', whitelistIngestAddresses: ['*@acme.example'] },
    ],
    documentTypes,
  });
  const { url } = await mock.start({ host: '127.0.0.1', port: 0 });
  closers.push(() => mock.close());
  return { mock, url };
}

async function redis(): Promise<TestRedis> {
  const server = await startRedis();
  closers.push(() => server.close());
  return server;
}

function discoveryConfig(redisUrl: string, mockUrl: string): GatewayConfig {
  return testConfig({
    api: { baseUrl: mockUrl, apiKey: API_KEY },
    redis: { url: redisUrl },
    upload: { concurrency: 2, attempts: 3 },
    discovery: { organization: 'org-1', every: 1000, rotationGrace: 3600 },
    workspaces: [
      // Settings for a workspace the service lists: its address and allow-list are the service's.
      { identifier: 'ws-a', upload: { language: 'de' } },
      // A workspace of the file's own.
      { identifier: 'ws-file', ingestEmail: 'own@file.test' },
    ],
  });
}

async function gatewayOn(
  config: GatewayConfig,
  logs: LogSink,
  metrics?: GatewayMetrics,
): Promise<{ gateway: Gateway; port: number }> {
  const gateway = await startGateway({
    config,
    role: 'all',
    logger: createLogger({ level: 'debug', destination: logs }),
    redisUrl: config.redis.url,
    apiBaseUrl: config.api.baseUrl ?? '',
    apiKey: API_KEY,
    random: () => 0,
    ...(metrics ? { metrics } : {}),
  });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await gateway.close();
  };
  closers.push(close);
  if (gateway.smtpPort === null) throw new Error('no SMTP listener');
  return { gateway: { ...gateway, close }, port: gateway.smtpPort };
}

const message = (to: string, label: string) =>
  composeMessage({ to, attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }] });

/** The log lines of the discovery component, as JSON objects. */
function discoveryLines(logs: LogSink, from = 0): Record<string, unknown>[] {
  return logs.lines
    .slice(from)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.component === 'discovery');
}

/** Resolves at the next table the follower puts in force after log line `from` (with `also` in its line). */
function nextTableInForce(logs: LogSink, from: number, also = ''): Promise<void> {
  return logs.waitFor(
    (line) => line.includes('route table from the service in force') && line.includes(also),
    from,
  );
}

describe('discovery: the route table from the parsing service', () => {
  it('routes what the service lists, and follows additions, removals and rotations without a restart', async () => {
    const { mock, url } = await startMock();
    const server = await redis();
    const logs = new LogSink();
    const { gateway, port } = await gatewayOn(discoveryConfig(server.url, url), logs);

    // A discovered workspace takes mail, with the settings of its entry in the file.
    const first = await deliver(port, {
      to: ['ws-a@ingest.mock.invalid'],
      message: await message('ws-a@ingest.mock.invalid', 'first'),
    });
    expect(first.data?.code).toBe(250);
    const [upload] = await mock.waitForUploads(1);
    expect(upload?.fields.workspace).toEqual(['ws-a']);
    expect(upload?.fields.language).toEqual(['de']);
    // The file's own workspace routes too; an unknown address does not.
    const own = await deliver(port, {
      to: ['own@file.test', 'nobody@ingest.mock.invalid'],
      message: 'Subject: x\r\n\r\nx\r\n',
    });
    expect(own.rcpt.map((reply) => reply.code)).toEqual([250, 550]);
    expect(own.rcpt[1]?.text).toContain('5.1.1');
    // The service's allow-list applies to ws-b (checked against the From of the message).
    const stranger = await deliver(port, {
      from: 'eve@elsewhere.example',
      to: ['ws-b@ingest.mock.invalid'],
      message: await composeMessage({ from: 'eve@elsewhere.example', to: 'ws-b@ingest.mock.invalid' }),
    });
    expect(stranger.data?.code).toBe(550);

    // A session opened before the change stays open across the refresh.
    const session = new SmtpSession(port);
    closers.push(() => session.close());
    await session.reply();
    await session.command('EHLO client.test');
    await session.command('MAIL FROM:<ann@acme.example>');
    expect((await session.command('RCPT TO:<ws-new@ingest.mock.invalid>')).code).toBe(550);

    const mark = logs.lines.length;
    mock.workspaces.add({ identifier: 'ws-new' });
    mock.workspaces.remove('ws-b');
    const rotated = mock.workspaces.rotate('ws-a');
    // The table with the rotated address in its grace: the one read after the changes.
    await nextTableInForce(logs, mark, '"inGrace":1');

    // The new workspace is routed in the same session, whose earlier refusal did not end it.
    expect((await session.command('RCPT TO:<ws-new@ingest.mock.invalid>')).code).toBe(250);
    expect((await session.data(await message('ws-new@ingest.mock.invalid', 'new'))).code).toBe(250);
    const uploads = await mock.waitForUploads(2);
    expect(uploads[1]?.fields.workspace).toEqual(['ws-new']);

    // The removed workspace is refused; the rotated one takes mail at both addresses.
    const removed = await deliver(port, { to: ['ws-b@ingest.mock.invalid'], message: 'x' });
    expect(removed.rcpt[0]?.code).toBe(550);
    expect(removed.rcpt[0]?.text).toContain('5.1.1');
    const oldAddress = await deliver(port, {
      to: ['ws-a@ingest.mock.invalid'],
      message: await message('ws-a@ingest.mock.invalid', 'old'),
    });
    expect(oldAddress.data?.code).toBe(250);
    const newAddress = await deliver(port, {
      to: [rotated?.ingestEmail ?? ''],
      message: await message(rotated?.ingestEmail ?? '', 'rotated'),
    });
    expect(newAddress.data?.code).toBe(250);
    const all = await mock.waitForUploads(4);
    expect(all.slice(2).map((u) => u.fields.workspace)).toEqual([['ws-a'], ['ws-a']]);

    // The console shows where each route came from and when the table was last read.
    const routesPage = await (await fetch(`${gateway.httpUrl}/routes`)).text();
    expect(routesPage).toContain('Organization <code>org-1</code>; route table last read from the service:');
    expect(routesPage).toMatch(/data-refreshed><time datetime="\d{4}-/);
    const sourceOf = (address: string) =>
      new RegExp(`data-route="${address}">[\\s\\S]*?data-source>(\\w+)<`).exec(routesPage)?.[1];
    expect(sourceOf('own@file.test')).toBe('file');
    expect(sourceOf('ws-new@ingest.mock.invalid')).toBe('service');
    expect(sourceOf('ws-a@ingest.mock.invalid')).toBe('grace');
    expect(routesPage).not.toContain('ws-b@ingest.mock.invalid');

    const changes = discoveryLines(logs, mark).filter((line) => typeof line.change === 'string');
    expect(changes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          change: 'added',
          workspace: 'ws-new',
          address: 'ws-new@ingest.mock.invalid',
        }),
        expect.objectContaining({
          change: 'removed',
          workspace: 'ws-b',
          address: 'ws-b@ingest.mock.invalid',
        }),
        expect.objectContaining({
          change: 'rotated',
          workspace: 'ws-a',
          address: rotated?.ingestEmail,
          previous: 'ws-a@ingest.mock.invalid',
        }),
      ]),
    );
    if (process.env.SHOW_DISCOVERY_LOG === '1') {
      for (const line of discoveryLines(logs)) process.stdout.write(`${JSON.stringify(line)}\n`);
    }
  });

  it('routes a document type’s address to its workspace, uploading with its documentType, through a rotation', async () => {
    const { mock, url } = await startMock([
      { identifier: 'dt-receipt', workspace: 'ws-a' },
      { identifier: 'dt-org', workspace: null },
    ]);
    const server = await redis();
    const logs = new LogSink();
    const { gateway, port } = await gatewayOn(discoveryConfig(server.url, url), logs);

    // Mail to the type's address goes to its workspace, with the workspace's settings and the type.
    const typed = await deliver(port, {
      to: ['dt-receipt@ingest.mock.invalid'],
      message: await message('dt-receipt@ingest.mock.invalid', 'receipt'),
    });
    expect(typed.data?.code).toBe(250);
    const [upload] = await mock.waitForUploads(1);
    expect(upload?.fields.workspace).toEqual(['ws-a']);
    expect(upload?.fields.documentType).toEqual(['dt-receipt']);
    expect(upload?.fields.language).toEqual(['de']);
    // The record carries the type on the upload, as the OpenAPI description says, and the console shows it.
    const recordUrl = `${gateway.httpUrl}/v1/messages/${queuedId(typed.data)}`;
    const record = (await (await fetch(recordUrl)).json()) as { attachments: Record<string, unknown>[] };
    expect(record.attachments).toMatchObject([{ workspace: 'ws-a', documentType: 'dt-receipt' }]);
    const document = (await (await fetch(`${gateway.httpUrl}/v1/openapi.json`)).json()) as OpenApiDocument;
    await createOpenApiCheck(document).check('GET', recordUrl, await fetch(recordUrl));
    const messagePage = await (await fetch(`${gateway.httpUrl}/messages/${queuedId(typed.data)}`)).text();
    expect(messagePage).toContain(
      '<dt>Document type of the address</dt><dd data-field="documentType">dt-receipt</dd>',
    );
    // The workspace's own address still uploads without a type.
    const plain = await deliver(port, {
      to: ['ws-a@ingest.mock.invalid'],
      message: await message('ws-a@ingest.mock.invalid', 'plain'),
    });
    expect(plain.data?.code).toBe(250);
    const second = (await mock.waitForUploads(2))[1];
    expect(second?.fields.workspace).toEqual(['ws-a']);
    expect(second?.fields.documentType).toBeUndefined();
    // Both in one transaction: the second is sent again on its own, like another tag.
    const both = await deliver(port, {
      to: ['dt-receipt@ingest.mock.invalid', 'ws-a@ingest.mock.invalid'],
      message: 'Subject: x\r\n\r\nx\r\n',
    });
    expect(both.rcpt.map((reply) => reply.code)).toEqual([250, 452]);
    // A type whose workspace the service does not name routes nothing, and the log says why.
    const orphan = await deliver(port, { to: ['dt-org@ingest.mock.invalid'], message: 'x' });
    expect(orphan.rcpt[0]?.code).toBe(550);
    expect(orphan.rcpt[0]?.text).toContain('5.1.1');
    const orphanWarning = (line: Record<string, unknown>) =>
      line.level === 40 &&
      line.msg ===
        'document type dt-org: dt-org@ingest.mock.invalid is not routed: the service does not say which workspace the type belongs to';

    // The console says which address is a type's.
    const routesPage = await (await fetch(`${gateway.httpUrl}/routes`)).text();
    expect(routesPage).toMatch(
      /data-route="dt-receipt@ingest\.mock\.invalid">[\s\S]*?ws-a \(document type <code data-document-type>dt-receipt<\/code>\)/,
    );

    // A rotated type address keeps routing, with its type, for the grace; a new type routes at once.
    const mark = logs.lines.length;
    const rotated = mock.documentTypes.rotate('dt-receipt');
    mock.documentTypes.add({ identifier: 'dt-new', workspace: 'ws-a' });
    await nextTableInForce(logs, mark, '"inGrace":1');
    for (const [to, label] of [
      ['dt-receipt@ingest.mock.invalid', 'old'],
      [rotated?.ingestEmail ?? '', 'rotated'],
      ['dt-new@ingest.mock.invalid', 'new'],
    ] as const) {
      const sent = await deliver(port, { to: [to], message: await message(to, label) });
      expect(sent.data?.code).toBe(250);
    }
    const all = await mock.waitForUploads(5);
    expect(all.slice(2).map((u) => [u.fields.workspace, u.fields.documentType])).toEqual([
      [['ws-a'], ['dt-receipt']],
      [['ws-a'], ['dt-receipt']],
      [['ws-a'], ['dt-new']],
    ]);
    expect(discoveryLines(logs, mark)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          change: 'rotated',
          workspace: 'ws-a',
          documentType: 'dt-receipt',
          address: rotated?.ingestEmail,
          previous: 'dt-receipt@ingest.mock.invalid',
        }),
        expect.objectContaining({
          change: 'added',
          workspace: 'ws-a',
          documentType: 'dt-new',
          address: 'dt-new@ingest.mock.invalid',
        }),
      ]),
    );
    // Said once, not again at the refresh that still finds it.
    expect(discoveryLines(logs).filter(orphanWarning)).toHaveLength(1);
  });

  it('keeps the last good table while the service is down, across a gateway restart', async () => {
    const { mock, url } = await startMock();
    const server = await redis();
    const config = discoveryConfig(server.url, url);
    const firstLogs = new LogSink();
    const first = await gatewayOn(config, firstLogs);
    await nextTableInForce(firstLogs, 0);
    await first.gateway.close();

    mock.enqueueFault({ status: 503, method: 'GET', path: '/v3/workspaces', times: 'always' });
    const logs = new LogSink();
    const metrics = createMetrics();
    const { port } = await gatewayOn(config, logs, metrics);
    await logs.waitFor((line) => line.includes('discovery refresh failed; the last good route table stays'));

    const delivered = await deliver(port, {
      to: ['ws-a@ingest.mock.invalid'],
      message: await message('ws-a@ingest.mock.invalid', 'down'),
    });
    expect(delivered.data?.code).toBe(250);
    const [upload] = await mock.waitForUploads(1);
    expect(upload?.fields.workspace).toEqual(['ws-a']);
    const failed = discoveryLines(logs).find(
      (line) => line.msg === 'discovery refresh failed; the last good route table stays',
    );
    expect(failed).toMatchObject({ organization: 'org-1', err: { message: expect.stringContaining('503') } });
    if (process.env.SHOW_DISCOVERY_LOG === '1') {
      for (const line of discoveryLines(logs)) process.stdout.write(`${JSON.stringify(line)}\n`);
    }
    const age = await metrics.registry.getSingleMetric('ingest_gateway_discovery_age_seconds')?.get();
    expect(age?.values[0]?.value).toBeGreaterThanOrEqual(0);
  });

  it('routes the file alone, and says why, while the service has never been read', async () => {
    const { mock, url } = await startMock();
    mock.enqueueFault({ status: 503, method: 'GET', path: '/v3/workspaces', times: 'always' });
    const server = await redis();
    const logs = new LogSink();
    const { port } = await gatewayOn(discoveryConfig(server.url, url), logs);
    expect(discoveryLines(logs).map((line) => line.msg)).toContain(
      'discovery refresh failed and there is no route table from the service yet: only the file routes',
    );
    const own = await deliver(port, {
      to: ['own@file.test', 'ws-a@ingest.mock.invalid'],
      message: await message('own@file.test', 'own'),
    });
    expect(own.rcpt.map((reply) => reply.code)).toEqual([250, 550]);
    expect(own.data?.code).toBe(250);
    const [upload] = await mock.waitForUploads(1);
    expect(upload?.fields.workspace).toEqual(['ws-file']);
  });
});
