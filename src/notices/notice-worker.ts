import { type Job, Worker } from 'bullmq';
import type { Logger } from '../logger.ts';
import type { GatewayMetrics } from '../metrics.ts';
import { type NoticeJobData, noticeQueueName } from '../queue/notice-queue.ts';
import { webhookRetryDelay } from '../queue/webhook-backoff.ts';
import type { KeySpace } from '../record/keys.ts';
import type { MessageLedger } from '../record/message-ledger.ts';
import type { RedisClient } from '../redis/connections.ts';
import type { RedisOutageLog } from '../redis/outage-log.ts';
import { headerBlockEnd, type LoopHeaders, readLoopHeaders } from './loop-headers.ts';
import { decideNotice, type NoNoticeReason } from './notice-decision.ts';
import type { NotifySender } from './notice-settings-schema.ts';
import { composeNotice } from './notice-text.ts';
import { createRelayTransport, relayEndpoint } from './relay-transport.ts';
import type { SenderRate } from './sender-rate.ts';

export interface NoticeWorkerOptions {
  /** The worker's own connection (BullMQ blocks on it). */
  connection: RedisClient;
  /** Where records and raw copies are read. */
  redis: RedisClient;
  keys: KeySpace;
  ledger: MessageLedger;
  rate: SenderRate;
  /** notices.smtp: never logged. */
  relayUrl: string;
  /** notices.from. */
  from: string;
  /** notices.envelopeFrom; "" the null sender. */
  envelopeFrom: string;
  /** notices.retryBaseDelay and retryMaxDelay, ms. */
  schedule: { baseMs: number; capMs: number };
  /** notices.timeout, ms. */
  timeoutMs: number;
  /** smtp.hostname: the name the gateway greets the relay with. */
  clientName: string;
  /** The workspace's notifySender in the configuration in force. */
  modeOf: (workspace: string) => NotifySender;
  metrics: GatewayMetrics;
  logger: Logger;
  outage: RedisOutageLog | null;
}

export interface NoticeWorker {
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Raw-copy chunks read at most for the header block (64 KiB each, src/store/raw-copy.ts). */
const HEADER_CHUNKS_MAX = 4;

/** Reasons that are not a rule holding a notice back: nobody asked for one (yet). */
const NOT_ASKED: ReadonlySet<NoNoticeReason> = new Set(['not_wanted', 'not_settled']);

/**
 * Sends each queued notice through the relay: reads the record and the received header,
 * decides (notice-decision.ts), counts the sender's share (sender-rate.ts), composes and sends.
 * A relay that is down or answers 4xx/5xx fails the job, which BullMQ keeps and tries again on
 * the schedule, across restarts. A line names the message and the outcome, never the relay's
 * credentials; the recipient's address only at debug.
 */
export function createNoticeWorker(options: NoticeWorkerOptions): NoticeWorker {
  const { logger, metrics } = options;
  const log = logger.child({ component: 'notices' });
  const relay = createRelayTransport(options.relayUrl, options.timeoutMs, options.clientName);
  const endpoint = relayEndpoint(options.relayUrl);
  const worker = new Worker<NoticeJobData>(noticeQueueName, (job) => handle(job), {
    connection: options.connection,
    prefix: options.keys.queuePrefix,
    concurrency: 2,
    autorun: false,
    settings: { backoffStrategy: (attemptsMade) => webhookRetryDelay(attemptsMade, options.schedule) },
  });
  worker.on('error', (err) => options.outage?.absorbs(err) || log.error({ err }, 'notice worker error'));
  worker.on('failed', (job, err) => {
    if (!job) return;
    const last = job.attemptsMade >= (job.opts.attempts ?? 1);
    metrics.senderNotices.inc({ outcome: last ? 'failed' : 'retry' });
    const fields = {
      queueId: job.data.messageId,
      relay: endpoint,
      attempt: job.attemptsMade,
      reason: err.message,
    };
    if (last) log.warn(fields, 'sender notice given up');
    else log.info(fields, 'sender notice not taken by the relay; tried again later');
  });

  async function handle(job: Job<NoticeJobData>): Promise<string> {
    const { messageId } = job.data;
    const record = await options.ledger.read(messageId);
    if (record === null) return 'record gone';
    const headers = await readHeaders(messageId);
    const decision = decideNotice({ record, modeOf: options.modeOf, headers });
    const jobLog = log.child({ queueId: messageId, jobId: job.id });
    if (!decision.send) {
      if (!NOT_ASKED.has(decision.reason)) metrics.senderNotices.inc({ outcome: 'suppressed' });
      jobLog.info({ reason: decision.reason }, 'no sender notice');
      return decision.reason;
    }
    if (!(await options.rate.admit(decision.to, String(job.id)))) {
      metrics.senderNotices.inc({ outcome: 'rate_limited' });
      jobLog.warn('no sender notice: the sender had its share of notices this hour');
      return 'rate_limited';
    }
    const text = composeNotice(decision.kind, record, decision.documents);
    await relay.send({
      envelopeFrom: options.envelopeFrom,
      to: decision.to,
      from: options.from,
      ...text,
      inReplyTo: record.messageId !== null && /^[^\s<>]+$/.test(record.messageId) ? record.messageId : null,
      messageId: `notice-${messageId}@${domainOf(options.from)}`,
    });
    metrics.senderNotices.inc({ outcome: 'sent' });
    jobLog.info(
      { kind: decision.kind, documents: decision.documents.length, relay: endpoint },
      'sender notice sent',
    );
    jobLog.debug({ to: decision.to }, 'sender notice recipient');
    return 'sent';
  }

  /** The received message's header block from its raw copy; null when the copy is gone or has no end of header in reach. */
  async function readHeaders(messageId: string): Promise<LoopHeaders | null> {
    const key = options.keys.message(messageId).raw;
    const chunks: Buffer[] = [];
    for (let field = 0; field < HEADER_CHUNKS_MAX; field += 1) {
      const chunk = await options.redis.hgetBuffer(key, String(field));
      if (chunk === null) break;
      chunks.push(chunk);
      const bytes = Buffer.concat(chunks);
      const end = headerBlockEnd(bytes);
      if (end !== -1) return readLoopHeaders(bytes.subarray(0, end));
    }
    // A message that is all header (no body) ends without the empty line.
    if (chunks.length > 0 && chunks.length < HEADER_CHUNKS_MAX) return readLoopHeaders(Buffer.concat(chunks));
    return null;
  }

  let closing: Promise<void> | undefined;
  return {
    async start() {
      void worker.run().catch((err: unknown) => log.error({ err }, 'notice worker stopped'));
      await worker.waitUntilReady();
    },
    close() {
      closing ??= worker.close().finally(() => relay.close());
      return closing;
    },
  };
}

/** The domain of the From address, for the notices' Message-ID. */
function domainOf(from: string): string {
  const address = /<([^<>]+)>\s*$/.exec(from)?.[1] ?? from.trim();
  return address.slice(address.lastIndexOf('@') + 1);
}
