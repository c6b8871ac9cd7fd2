import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { type RefusalCode, RefusalError } from './errors.ts';

/**
 * The gateway's Prometheus metrics, one registry per process (tests build their own), handed
 * to each component that counts. Every label takes values from a fixed set below, never free
 * text: each value is a time series the Prometheus server keeps.
 */

/** Where in the SMTP session a refusal was sent; `session`: outside any one command (edge-server.ts). */
export type RefusalStage = 'connect' | 'mail' | 'rcpt' | 'data' | 'session';
/** A RefusalCode in lower snake case, or `internal` for a failure answered 451 4.3.0. */
export type RefusalReason = Lowercase<RefusalCode> | 'internal';

export const rateLimitKinds = ['connection', 'message_ip', 'message_sender'] as const;
export type RateLimitKind = (typeof rateLimitKinds)[number];

/** The verdict sender authentication came to for one message (sender-policy.ts). */
export const senderAuthResults = ['pass', 'fail', 'temperror'] as const;
export type SenderAuthResult = (typeof senderAuthResults)[number];

/** Why a part was not uploaded: the kinds of select-attachments.ts. */
export const skippedAttachmentKinds = [
  'unsupported_type',
  'empty',
  'inline_image',
  'report',
  'pointer',
  'container',
  'oversized',
] as const;
export type AttachmentOutcome = 'queued' | `skipped_${(typeof skippedAttachmentKinds)[number]}`;

/** Final upload outcomes, then the parse outcome of an uploaded document. */
export const documentOutcomes = ['uploaded', 'rejected', 'failed', 'parsed', 'parse_failed'] as const;
export type DocumentOutcome = (typeof documentOutcomes)[number];

export const queueStates = ['waiting', 'active', 'delayed', 'failed'] as const;
export type QueueState = (typeof queueStates)[number];

/** Why the upload workers stopped taking jobs (upload-worker.ts). */
export type UploadsPausedReason = 'api_key_refused';

/** A counter whose labels are checked against their value sets at compile time. */
export interface Counting<Labels extends Record<string, string>> {
  inc(labels: Labels, value?: number): void;
}

/** The upload queue's depth at one scrape. */
export interface QueueDepth {
  counts: Record<QueueState, number>;
  /** Age of the oldest waiting job in seconds; 0 when none waits. */
  oldestWaitingSeconds: number;
}

/** What the gauges read at each scrape; each is registered once the gateway has built it. */
export interface ScrapeSources {
  /** null when the queue could not be read in time: its gauges are then left out of that scrape. */
  queueDepth?: () => Promise<QueueDepth | null>;
  /** Whether the intake connection to Redis is ready. */
  redisUp?: () => boolean;
  /** Why uploads are paused, or null; absent in a role without upload workers. */
  uploadsPaused?: () => UploadsPausedReason | null;
}

export interface GatewayMetrics {
  registry: Registry;
  smtpMessages: Counter<'outcome' | 'code'>;
  smtpRefusals: Counting<{ stage: RefusalStage; reason: RefusalReason }>;
  rateLimited: Counting<{ kind: RateLimitKind }>;
  senderAuth: Counting<{ result: SenderAuthResult }>;
  attachments: Counting<{ outcome: AttachmentOutcome }>;
  documents: Counting<{ outcome: DocumentOutcome }>;
  uploads: Counter<'outcome'>;
  uploadSeconds: Histogram;
  /** Adds sources for the scrape-time gauges (queue depth, Redis, paused uploads). */
  observe(sources: ScrapeSources): void;
}

/** The refusal label of what an SMTP reply answered: its code, or `internal` for anything else. */
export function refusalReason(error: unknown): RefusalReason {
  // The codes are upper snake case (errors.ts), so lower-casing one yields its Lowercase<> type.
  return error instanceof RefusalError ? (error.code.toLowerCase() as Lowercase<RefusalCode>) : 'internal';
}

export function createMetrics(): GatewayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'ingest_gateway_' });
  const sources: ScrapeSources = {};
  const registers = [registry];

  /** A counter whose label values are all known: each starts at 0, so rate() and alerts see it at once. */
  function counter<Label extends string>(
    name: string,
    help: string,
    label: Label,
    values: readonly string[],
  ): Counter<Label> {
    const made = new Counter({ name, help, labelNames: [label], registers });
    for (const value of values) made.labels(value).inc(0);
    return made;
  }

  new Gauge({
    name: 'ingest_gateway_queue_jobs',
    help: 'Upload jobs in the queue by state (waiting, active, delayed, failed), read from Redis at scrape',
    labelNames: ['state'],
    registers,
    async collect() {
      this.reset();
      const depth = await sources.queueDepth?.();
      if (!depth) return;
      for (const state of queueStates) this.set({ state }, depth.counts[state]);
    },
  });
  new Gauge({
    name: 'ingest_gateway_queue_oldest_waiting_seconds',
    help: 'Seconds since the oldest waiting upload job was added; 0 when none waits, NaN when the queue could not be read',
    registers,
    async collect() {
      if (!sources.queueDepth) return;
      const depth = await sources.queueDepth();
      // Without labels the gauge is written at every scrape: NaN, not a stale or made-up age.
      this.set(depth ? depth.oldestWaitingSeconds : Number.NaN);
    },
  });
  new Gauge({
    name: 'ingest_gateway_redis_up',
    help: 'Whether the intake connection to Redis is ready (1) or not (0)',
    registers,
    collect() {
      this.reset();
      if (sources.redisUp) this.set(sources.redisUp() ? 1 : 0);
    },
  });
  new Gauge({
    name: 'ingest_gateway_uploads_paused',
    help: 'Whether the upload workers are paused (1) or not (0), by reason: api_key_refused (HTTP 401/403 until a reload)',
    labelNames: ['reason'],
    registers,
    collect() {
      this.reset();
      if (!sources.uploadsPaused) return;
      const paused = sources.uploadsPaused();
      this.set({ reason: 'api_key_refused' }, paused === 'api_key_refused' ? 1 : 0);
    },
  });

  return {
    registry,
    smtpMessages: new Counter({
      name: 'ingest_gateway_smtp_messages_total',
      help: 'DATA transactions by outcome (accepted, refused, failed) and reply code',
      labelNames: ['outcome', 'code'],
      registers,
    }),
    smtpRefusals: new Counter({
      name: 'ingest_gateway_smtp_refusals_total',
      help: 'SMTP refusals by stage (connect, mail, rcpt, data, session) and reason (the refusal code, or internal for 451 4.3.0)',
      labelNames: ['stage', 'reason'],
      registers,
    }),
    rateLimited: counter(
      'ingest_gateway_rate_limited_total',
      'Clients refused by smtp.rateLimit, by kind: connection (421 at connect), message_ip or message_sender (450 at MAIL)',
      'kind',
      rateLimitKinds,
    ),
    senderAuth: counter(
      'ingest_gateway_sender_auth_total',
      'Messages whose sender was authenticated (SPF, DKIM, DMARC, ARC), by result: pass, fail, temperror (a DNS failure, 451)',
      'result',
      senderAuthResults,
    ),
    attachments: counter(
      'ingest_gateway_attachments_total',
      'Attachments of accepted messages, by outcome: queued (one per workspace) or skipped_<reason>',
      'outcome',
      ['queued', ...skippedAttachmentKinds.map((kind) => `skipped_${kind}`)],
    ),
    documents: counter(
      'ingest_gateway_documents_total',
      'Documents by outcome: uploaded, rejected or failed (final upload outcomes), then parsed or parse_failed',
      'outcome',
      documentOutcomes,
    ),
    uploads: new Counter({
      name: 'ingest_gateway_uploads_total',
      help: 'Upload attempts by outcome (uploaded, rejected, retry, failed, unauthorized)',
      labelNames: ['outcome'],
      registers,
    }),
    uploadSeconds: new Histogram({
      name: 'ingest_gateway_upload_seconds',
      help: 'Duration of one POST /v3/documents, in seconds',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    observe(added) {
      Object.assign(sources, added);
    },
  };
}
