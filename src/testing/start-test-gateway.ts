import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createMockApi,
  type MockApi,
  type ReceivedUpload,
  workspaceSeedsFromConfig,
} from '@ingest-gateway/mock-parsing-api';
import { createTransport, type SendMailOptions } from 'nodemailer';
import type { z } from 'zod/mini';
import { parseConfig } from '../config/load-config.ts';
import type { workspaceSchema } from '../config/workspace-schema.ts';
import { startGateway } from '../gateway.ts';
import { createLifecycle, type Lifecycle } from '../lifecycle.ts';
import { createLogger } from '../logger.ts';
import type { MessageFilter } from '../record/message-filter.ts';
import type { MessageRecord } from '../record/message-record.ts';
import { freeLoopbackPort, spawnRedisServer, stopRedisServer } from '../redis/local-redis-server.ts';

/**
 * `import { startTestGateway } from 'ingest-gateway/testing'`: the whole gateway in the test
 * process, for a vitest or jest suite: the mock parsing API, a private redis-server (or the
 * Redis given), SMTP and HTTP on free loopback ports.
 */
export interface TestGatewayOptions {
  /** The workspaces, as in the configuration file; default one open to any sender, {@link defaultIngestEmail}. */
  workspaces?: Array<z.input<typeof workspaceSchema>>;
  /**
   * A Redis to use instead of a private redis-server (it must run with maxmemory-policy
   * noeviction). The gateway's keys get a prefix of their own, so suites may share it.
   */
  redisUrl?: string;
  /** pino level of the gateway's log, written to stdout; default `silent`. */
  logLevel?: string;
}

/** What a test waits for: the filters of GET /v1/messages (substring, case-insensitive for from, to, q). */
export type MessageMatch = Partial<Omit<MessageFilter, 'since'>> & {
  /** Received at or after this time. */
  since?: Date | string;
};

export interface SentMail {
  /** The gateway's id of the message, from its `250 … queued as <id>` reply. */
  id: string;
  /** The reply to the end of DATA. */
  response: string;
}

export interface TestGateway {
  readonly smtpPort: number;
  /** Base URL of the HTTP API, e.g. http://127.0.0.1:40123. */
  readonly httpUrl: string;
  /** The mock parsing API the gateway uploads to: its uploads, documents, and faults to inject. */
  readonly mockApi: MockApi;
  /**
   * Sends one e-mail over SMTP (nodemailer's message options; `from` defaults to
   * sender@example.com, `to` to the first workspace's ingest address). Rejects when the
   * gateway refuses it, with the SMTP reply in the error.
   */
  sendMail(options?: SendMailOptions): Promise<SentMail>;
  /**
   * The newest message matching `match` once every attachment of it is uploaded, rejected,
   * failed or skipped (GET /v1/messages?wait=, a long poll). Rejects after `timeoutSeconds`
   * (default 30, at most 120). Only messages since the last reset() are seen.
   */
  waitForMessage(match?: MessageMatch, options?: { timeoutSeconds?: number }): Promise<MessageRecord>;
  /** What reached the mock parsing API since the start or the last reset(), oldest first. */
  uploads(): ReceivedUpload[];
  /** Forgets every message, upload and injected fault: for isolation between tests. */
  reset(): Promise<void>;
  /** Stops the gateway, the mock API and the private Redis. Idempotent. */
  close(): Promise<void>;
}

export const defaultIngestEmail = 'documents@ingest.test';
const defaultSender = 'sender@example.com';
const apiKey = 'test-gateway-api-key';

export async function startTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const logger = createLogger({ level: options.logLevel ?? 'silent' });
  // Started in order, closed in reverse by one lifecycle, as the daemon does; 30 s bounds a
  // close whatever hangs.
  const lifecycle = createLifecycle({ logger, deadline: 30_000 });
  try {
    const redisUrl = options.redisUrl ?? (await startPrivateRedis(lifecycle));
    // JSON is YAML: the configuration goes through the same validation as a file. Mock mode,
    // as `api.mock: true` in a file: the gateway uploads to the mock started here.
    const config = parseConfig({
      source: 'startTestGateway',
      env: {},
      text: JSON.stringify({
        // greetingDelay 0: the test's own client, no early talkers to wait for.
        smtp: { host: '127.0.0.1', port: 0, hostname: 'gateway.test', greetingDelay: 0 },
        redis: {
          url: redisUrl,
          // A Redis shared with others: this gateway's keys apart from theirs.
          prefix: options.redisUrl === undefined ? 'ingest' : `test${randomBytes(6).toString('hex')}`,
        },
        api: { mock: true },
        http: { host: '127.0.0.1', port: 0, allowReset: true },
        workspaces: options.workspaces ?? [{ identifier: 'test-workspace', ingestEmail: defaultIngestEmail }],
      }),
    });
    const mockApi = createMockApi({
      apiKey,
      logger,
      workspaces: workspaceSeedsFromConfig(config.workspaces),
    });
    const { url: apiBaseUrl } = await lifecycle.start('mock api', {
      start: () => mockApi.start({ host: '127.0.0.1', port: 0 }),
      close: () => mockApi.close(),
    });
    const gateway = await startGateway({
      config,
      role: 'all',
      logger,
      redisUrl,
      apiBaseUrl,
      apiKey,
      lifecycle,
    });
    return testGateway({
      smtpPort: gateway.smtpPort ?? 0,
      httpUrl: gateway.httpUrl,
      mockApi,
      defaultTo: config.workspaces[0]?.ingestEmail ?? defaultIngestEmail,
      close: async () => {
        await lifecycle.close();
      },
    });
  } catch (err) {
    await lifecycle.close();
    throw err;
  }
}

interface Parts {
  smtpPort: number;
  httpUrl: string;
  mockApi: MockApi;
  defaultTo: string;
  close(): Promise<void>;
}

function testGateway(parts: Parts): TestGateway {
  const { smtpPort, httpUrl, mockApi } = parts;
  let uploadsBefore = 0;
  let since = new Date(0);
  let closing: Promise<void> | undefined;

  return {
    smtpPort,
    httpUrl,
    mockApi,
    async sendMail(mail = {}) {
      const transport = createTransport({
        host: '127.0.0.1',
        port: smtpPort,
        secure: false,
        ignoreTLS: true,
      });
      try {
        const info = await transport.sendMail({ from: defaultSender, to: parts.defaultTo, ...mail });
        const id = /queued as ([0-9a-z]+)/.exec(info.response)?.[1];
        if (id === undefined) throw new Error(`the gateway's reply names no message id: ${info.response}`);
        return { id, response: info.response };
      } finally {
        transport.close();
      }
    },
    async waitForMessage(match = {}, { timeoutSeconds = 30 } = {}) {
      const query = new URLSearchParams({ limit: '1', wait: String(timeoutSeconds) });
      for (const [name, value] of Object.entries(match)) {
        if (value === null || value === undefined || name === 'since') continue;
        query.set(name, String(value));
      }
      const from = match.since === undefined ? since : new Date(match.since);
      query.set('since', (from > since ? from : since).toISOString());
      const response = await fetch(`${httpUrl}/v1/messages?${query}`);
      const body = (await response.json()) as {
        messages?: MessageRecord[];
        error?: string;
        problems?: string[];
      };
      const message = body.messages?.[0];
      if (response.status === 200 && message) return message;
      const why = [body.error, ...(body.problems ?? [])].filter(Boolean).join('; ');
      throw new Error(`waitForMessage(${JSON.stringify(match)}): ${response.status} ${why}`);
    },
    uploads() {
      return mockApi.uploads.slice(uploadsBefore);
    },
    async reset() {
      const response = await fetch(`${httpUrl}/v1/messages`, { method: 'DELETE' });
      if (response.status !== 200) throw new Error(`reset: DELETE /v1/messages answered ${response.status}`);
      mockApi.clearFaults();
      uploadsBefore = mockApi.uploads.length;
      since = new Date();
    },
    close() {
      closing ??= parts.close();
      return closing;
    },
  };
}

/** A redis-server of its own: a free loopback port, a temporary directory, no persistence. */
async function startPrivateRedis(lifecycle: Lifecycle): Promise<string> {
  const port = await freeLoopbackPort();
  const dir = await mkdtemp(join(tmpdir(), 'ingest-test-redis-'));
  lifecycle.onClose('redis data directory', () => rm(dir, { recursive: true, force: true }));
  const child = await spawnRedisServer([
    ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir],
    ...['--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction'],
  ]);
  lifecycle.onClose('redis-server', () => stopRedisServer(child));
  return `redis://127.0.0.1:${port}`;
}
