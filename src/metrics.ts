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

export const rateLimitKinds = ['connection', 'message_ip', 'message_sender', 'refused_recipients'] as const;
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
  'encrypted_pdf',
  'encrypted_smime',
  'signature',
] as const;
export type AttachmentOutcome = 'queued' | `skipped_${(typeof skippedAttachmentKinds)[number]}`;

/** Final upload outcomes, then the parse outcome of an uploaded document. */
export const documentOutcomes = ['uploaded', 'rejected', 'failed', 'parsed', 'parse_failed'] as const;
export type DocumentOutcome = (typeof documentOutcomes)[number];

export const queueStates = ['waiting', 'active', 'delayed', 'failed'] as const;
export type QueueState = (typeof queueStates)[number];

/** What a configuration reload came to: put in force, or refused (the running one stays). */
export const configReloadOutcomes = ['applied', 'refused'] as const;
export type ConfigReloadOutcome = (typeof configReloadOutcomes)[number];

/** What one webhook delivery attempt came to: a 2xx, another try later, or given up. */
export const webhookDeliveryOutcomes = ['delivered', 'retry', 'failed'] as const;
export type WebhookDeliveryOutcome = (typeof webhookDeliveryOutcomes)[number];

/**
 * What one sender notice came to: taken by the relay, tried again later, given up, held back
 * by a rule (RFC 3834, backscatter) where a workspace asked for it, or over the sender's hourly share.
 */
export const senderNoticeOutcomes = ['sent', 'retry', 'failed', 'suppressed', 'rate_limited'] as const;
export type SenderNoticeOutcome = (typeof senderNoticeOutcomes)[number];

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
  /**
   * Seconds since the route table from the service was last read whole; null while there is
   * none; absent without `discovery`.
   */
  discoveryAge?: () => number | null;
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
  configReloads: Counting<{ outcome: ConfigReloadOutcome }>;
  webhookDeliveries: Counting<{ outcome: WebhookDeliveryOutcome }>;
  senderNotices: Counting<{ outcome: SenderNoticeOutcome }>;
  /** Messages scanned, by scanner (clamav, rspamd) and verdict (README, "Scanning for malware and spam"). */
  scans: Counter<'scanner' | 'verdict'>;
  /** How long a scanner kept the reply waiting after the message's last byte. */
  scanSeconds: Histogram<'scanner'>;
  /** Adds sources for the scrape-time gauges (queue depth, Redis, paused uploads, discovery age). */
  observe(sources: ScrapeSources): void;
}

/** The refusal label of what an SMTP reply answered: its code, or `internal` for anything else. */
export function refusalReason(error: unknown): RefusalReason {
  // The codes are upper snake case (errors.ts), so lower-casing one yields its Lowercase<> type.
  return error instanceof RefusalError ? (error.code.toLowerCase() as Lowercase<RefusalCode>) : 'internal';
}

/**
 * prom-client defaults that are gauges named like counters, which `promtool check metrics`
 * refuses (and PromQL's rate() would misread). Nothing is lost without them: the gauges of the
 * same name without `_total` (ingest_gateway_nodejs_active_handles, …) count the same by type.
 */
const counterNamedGauges = [
  'ingest_gateway_nodejs_active_handles_total',
  'ingest_gateway_nodejs_active_requests_total',
  'ingest_gateway_nodejs_active_resources_total',
];

export function createMetrics(): GatewayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'ingest_gateway_' });
  for (const name of counterNamedGauges) registry.removeSingleMetric(name);
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

  new Gauge({
    name: 'ingest_gateway_discovery_age_seconds',
    help: 'Seconds since the route table from the parsing service (discovery) was last read whole; NaN while there is none',
    registers,
    collect() {
      this.reset();
      if (!sources.discoveryAge) return;
      this.set(sources.discoveryAge() ?? Number.NaN);
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
      'Clients refused by smtp.rateLimit, by kind: connection (421 at connect), message_ip or message_sender (450 at MAIL), refused_recipients (421 at RCPT, smtp.maxRefusedRecipients)',
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
    configReloads: counter(
      'ingest_gateway_config_reloads_total',
      'Configuration reloads (SIGHUP or a watched file changed), by outcome: applied, or refused (the running configuration stays)',
      'outcome',
      configReloadOutcomes,
    ),
    webhookDeliveries: counter(
      'ingest_gateway_webhook_deliveries_total',
      'Webhook delivery attempts, by outcome: delivered (a 2xx), retry (tried again later), failed (given up)',
      'outcome',
      webhookDeliveryOutcomes,
    ),
    senderNotices: counter(
      'ingest_gateway_sender_notices_total',
      'Notices to senders, by outcome: sent (the relay took it), retry (tried again later), failed (given up), suppressed (a loop or backscatter rule held it back), rate_limited (the sender had its hourly share)',
      'outcome',
      senderNoticeOutcomes,
    ),
    scans: new Counter({
      name: 'ingest_gateway_scans_total',
      help: 'Messages scanned, by scanner (clamav, rspamd) and verdict (clamav: clean, infected, too_large, unscanned; rspamd: its action, or unscanned)',
      labelNames: ['scanner', 'verdict'],
      registers,
    }),
    scanSeconds: new Histogram({
      name: 'ingest_gateway_scan_seconds',
      help: "Seconds a scanner kept the reply waiting after the message's last byte, by scanner",
      labelNames: ['scanner'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    observe(added) {
      Object.assign(sources, added);
    },
  };
}
