import { Writable } from 'node:stream';
import {
  createMockApi,
  type MockApi,
  type MockApiOptions,
  workspaceSeedsFromConfig,
} from '@ingest-gateway/mock-parsing-api';
import { type Job, Queue, QueueEvents } from 'bullmq';
import type { GatewayConfig } from '../src/config/schema.ts';
import { type Gateway, type Role, startGateway } from '../src/gateway.ts';
import { createLogger, type Logger } from '../src/logger.ts';
import { completionJobId, completionQueueName } from '../src/queue/completion-queue.ts';
import { type UploadJobData, uploadJobId, uploadQueueName } from '../src/queue/upload-queue.ts';
import { createKeySpace } from '../src/record/keys.ts';
import type { MessageRecord } from '../src/record/message-record.ts';
import type { DnsResolver } from '../src/sender/dns-resolver.ts';
import { testCertificate } from '../test/fixtures/tls/test-certificate.ts';
import { startRedis, type TestRedis } from './redis-server.ts';
import { defaultWorkspaces, type TestConfigInput, testConfig, type WorkspaceInput } from './test-config.ts';

export const apiKey = 'test-api-key-5f2b9c';

/** The log lines a component wrote, for assertions; emits 'line' for each. */
export class LogSink extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    for (const line of chunk.toString().split('\n').filter(Boolean)) {
      this.lines.push(line);
      this.emit('line', line);
    }
    callback();
  }

  /** Resolves once a line from index `from` on matches: one already written, or the next that does. */
  waitFor(matches: (line: string) => boolean, from = 0): Promise<void> {
    if (this.lines.slice(from).some(matches)) return Promise.resolve();
    return new Promise((resolve) => {
      const onLine = (line: string) => {
        if (!matches(line)) return;
        this.off('line', onLine);
        resolve();
      };
      this.on('line', onLine);
    });
  }
}

export interface HarnessOptions extends Omit<TestConfigInput, 'api' | 'smtp' | 'workspaces'> {
  /** Over the test defaults (test-config.ts). */
  smtp?: TestConfigInput['smtp'];
  /** Default `defaultWorkspaces`. */
  workspaces?: WorkspaceInput[];
  /** redis-server settings, e.g. `{ 'maxmemory-policy': 'allkeys-lru' }`. */
  redisServer?: Record<string, string>;
  role?: Role;
  /** DNS for sender authentication (harness/dns-fake.ts); default node:dns with config.dns. */
  resolver?: DnsResolver;
  /** The mock API's processing time, ms: a `wait: true` upload is answered after it. */
  processingMs?: number;
  /** The mock API's workspaces (GET and PATCH /v3/workspaces/{identifier}); default none. */
  mockWorkspaces?: MockApiOptions['workspaces'];
  /** The retry policy's jitter; default 0 (every retry at once). 1: each waits its whole window. */
  random?: () => number;
  /** The mock API knows the configured workspaces (GET /v3/workspaces/{id} answers for them). */
  seedMockWorkspaces?: boolean;
  /** More settings of the mock API (resthook retries, …). */
  mockOptions?: Omit<MockApiOptions, 'apiKey' | 'logger' | 'workspaces' | 'processingMs'>;
}

export interface Harness {
  redis: TestRedis;
  mock: MockApi;
  gateway: Gateway;
  config: GatewayConfig;
  smtpPort: number;
  httpUrl: string;
  logs: LogSink;
  logger: Logger;
  mockUrl: string;
  apiKey: string;
  /** Resolves once the job of this entry has gone from active back to the wait list `times` times. */
  handedBack(messageId: string, entry: number, times: number): Promise<void>;
  /** Resolves when the upload job of this entry has finished for good (completed or failed). */
  settled(messageId: string, entry: number): Promise<'completed' | 'failed'>;
  /** Resolves when completion tracking of this entry has finished for good (trackCompletion). */
  completed(messageId: string, entry: number): Promise<'completed' | 'failed'>;
  record(messageId: string): Promise<MessageRecord>;
  close(): Promise<void>;
}

/**
 * A harness whose gateway offers STARTTLS with a fresh self-signed certificate and requires it
 * (smtp.requireTls); closing it also removes the certificate's files.
 */
export async function startTlsHarness(): Promise<Harness> {
  const certificate = await testCertificate();
  const harness = await startHarness({
    smtp: { tls: { key: certificate.keyPath, cert: certificate.certPath }, requireTls: true },
  }).catch(async (err: unknown) => {
    await certificate.remove();
    throw err;
  });
  return {
    ...harness,
    async close() {
      await harness.close();
      await certificate.remove();
    },
  };
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const redis = await startRedis({ config: options.redisServer ?? {} });
  const logs = new LogSink();
  const logger = createLogger({ level: 'debug', destination: logs });
  const mock = createMockApi({
    apiKey,
    logger,
    ...options.mockOptions,
    ...(options.processingMs === undefined ? {} : { processingMs: options.processingMs }),
    ...(options.mockWorkspaces
      ? { workspaces: options.mockWorkspaces }
      : options.seedMockWorkspaces
        ? { workspaces: workspaceSeedsFromConfig(options.workspaces ?? defaultWorkspaces) }
        : {}),
  });
  const { url: mockUrl } = await mock.start({ host: '127.0.0.1', port: 0 });
  const config = testConfig({
    retention: options.retention,
    http: options.http,
    log: options.log,
    auth: options.auth,
    dns: options.dns,
    scan: options.scan,
    events: options.events,
    notices: options.notices,
    smtp: options.smtp,
    redis: { url: redis.url, ...options.redis },
    api: { baseUrl: mockUrl, apiKey },
    upload: { concurrency: 2, attempts: 3, ...options.upload },
    workspaces: options.workspaces,
  });
  const gateway = await startGateway({
    config,
    role: options.role ?? 'all',
    logger,
    redisUrl: redis.url,
    apiBaseUrl: mockUrl,
    apiKey,
    random: options.random ?? (() => 0),
    ...(options.resolver ? { resolver: options.resolver } : {}),
  }).catch(async (err: unknown) => {
    await mock.close();
    await redis.close();
    throw err;
  });
  const keys = createKeySpace(config.redis.prefix);
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
  const events = new QueueEvents(uploadQueueName, { connection, prefix: keys.queuePrefix });
  const queue = new Queue<UploadJobData>(uploadQueueName, { connection, prefix: keys.queuePrefix });
  const completionEvents = new QueueEvents(completionQueueName, { connection, prefix: keys.queuePrefix });
  const completionQueue = new Queue(completionQueueName, { connection, prefix: keys.queuePrefix });
  // One listener pair per settled() call in flight; tests await many at once.
  for (const emitter of [events, completionEvents]) {
    emitter.setMaxListeners(0);
    emitter.on('error', () => undefined);
  }
  queue.on('error', () => undefined);
  completionQueue.on('error', () => undefined);
  await Promise.all([events.waitUntilReady(), completionEvents.waitUntilReady()]);
  // Every job that went from active back to the wait list (a retry without delay, a pause).
  const handedBackLog: string[] = [];
  events.on('waiting', ({ jobId, prev }: { jobId: string; prev?: string }) => {
    if (prev === 'active') handedBackLog.push(jobId);
  });

  function settled(messageId: string, entry: number): Promise<'completed' | 'failed'> {
    return finalState(events, queue, uploadJobId(messageId, entry));
  }

  function completed(messageId: string, entry: number): Promise<'completed' | 'failed'> {
    return finalState(completionEvents, completionQueue, completionJobId(messageId, entry));
  }

  async function finalState(
    events: QueueEvents,
    queue: Queue,
    jobId: string,
  ): Promise<'completed' | 'failed'> {
    const finished = new Promise<'completed' | 'failed'>((resolve) => {
      const onCompleted = ({ jobId: id }: { jobId: string }) => id === jobId && done('completed');
      const onFailed = ({ jobId: id }: { jobId: string }) => {
        // 'failed' also reports attempts that will be retried; only the final state counts.
        void queue.getJob(id).then(async (job?: Job) => {
          if (id === jobId && job && (await job.getState()) === 'failed') done('failed');
        });
      };
      const done = (state: 'completed' | 'failed') => {
        events.off('completed', onCompleted);
        events.off('failed', onFailed);
        resolve(state);
      };
      events.on('completed', onCompleted);
      events.on('failed', onFailed);
      // The job may have finished before the listeners were in place.
      void queue.getJob(jobId).then(async (job?: Job) => {
        const state = job ? await job.getState() : undefined;
        if (state === 'completed' || state === 'failed') done(state);
      });
    });
    return finished;
  }

  return {
    redis,
    mock,
    gateway,
    config,
    smtpPort: gateway.smtpPort ?? 0,
    httpUrl: gateway.httpUrl,
    logs,
    logger,
    settled,
    completed,
    mockUrl,
    apiKey,
    handedBack(messageId, entry, times) {
      const jobId = uploadJobId(messageId, entry);
      const count = () => handedBackLog.filter((id) => id === jobId).length;
      if (count() >= times) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const onWaiting = () => {
          if (count() < times) return;
          events.off('waiting', onWaiting);
          resolve();
        };
        events.on('waiting', onWaiting);
      });
    },
    async record(messageId) {
      const response = await fetch(`${gateway.httpUrl}/v1/messages/${messageId}`);
      if (response.status !== 200) throw new Error(`GET /v1/messages/${messageId}: ${response.status}`);
      return (await response.json()) as MessageRecord;
    },
    async close() {
      await gateway.close();
      await events.close();
      await queue.close();
      await completionEvents.close();
      await completionQueue.close();
      await mock.close();
      await redis.close();
    },
  };
}
