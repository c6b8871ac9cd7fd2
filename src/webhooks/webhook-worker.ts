import { type Job, UnrecoverableError, Worker } from 'bullmq';
import { request } from 'undici';
import type { Logger } from '../logger.ts';
import type { GatewayMetrics } from '../metrics.ts';
import { type WebhookSchedule, webhookRetryDelay } from '../queue/webhook-backoff.ts';
import { type WebhookJobData, webhookQueueName } from '../queue/webhook-queue.ts';
import type { KeySpace } from '../record/keys.ts';
import type { RedisClient } from '../redis/connections.ts';
import type { RedisOutageLog } from '../redis/outage-log.ts';
import { signatureHeader, signDelivery } from './sign-delivery.ts';

export interface WebhookWorkerOptions {
  connection: RedisClient;
  keys: KeySpace;
  /** The secret of the receiver at `url` in the configuration in force; undefined when it is gone. */
  secretFor: (url: string) => string | undefined;
  schedule: Pick<WebhookSchedule, 'baseMs' | 'capMs'>;
  /** events.timeout: milliseconds one request may take. */
  timeoutMs: number;
  metrics: GatewayMetrics;
  logger: Logger;
  outage: RedisOutageLog | null;
  /** Deliveries in flight at once; default 4. */
  concurrency?: number;
}

export interface WebhookWorker {
  start(): Promise<void>;
  close(): Promise<void>;
}

/** A receiver's answer other than 2xx, or no answer: tried again on the schedule. */
class DeliveryError extends Error {}

/**
 * Posts each queued event to its receiver, signed, until a 2xx; BullMQ keeps the delivery
 * across restarts and retries it with webhook-backoff.ts's delay. Never logs the secret or
 * the body: a line names the event id, the receiver's origin and the outcome.
 */
export function createWebhookWorker(options: WebhookWorkerOptions): WebhookWorker {
  const { logger, metrics } = options;
  const log = logger.child({ component: 'webhooks' });
  const worker = new Worker<WebhookJobData>(webhookQueueName, (job) => deliver(job), {
    connection: options.connection,
    prefix: options.keys.queuePrefix,
    concurrency: options.concurrency ?? 4,
    autorun: false,
    settings: {
      backoffStrategy: (attemptsMade) => webhookRetryDelay(attemptsMade, options.schedule),
    },
  });
  worker.on('error', (err) => options.outage?.absorbs(err) || log.error({ err }, 'webhook worker error'));
  worker.on('failed', (job, err) => {
    if (!job) return;
    const last = err instanceof UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1);
    metrics.webhookDeliveries.inc({ outcome: last ? 'failed' : 'retry' });
    const fields = {
      eventId: job.data.event.id,
      receiver: originOf(job.data.url),
      attempt: job.attemptsMade,
    };
    if (last) log.warn({ ...fields, reason: err.message }, 'webhook delivery given up');
    else log.info({ ...fields, reason: err.message }, 'webhook delivery failed; tried again later');
  });
  worker.on('completed', (job) => {
    metrics.webhookDeliveries.inc({ outcome: 'delivered' });
    log.debug({ eventId: job.data.event.id, receiver: originOf(job.data.url) }, 'webhook delivered');
  });

  async function deliver(job: Job<WebhookJobData>): Promise<void> {
    const { url, event } = job.data;
    const secret = options.secretFor(url);
    if (secret === undefined) throw new UnrecoverableError('the receiver is no longer configured');
    const body = JSON.stringify(event);
    const signature = signDelivery(secret, body, Math.floor(Date.now() / 1000));
    let status: number;
    try {
      const answer = await request(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [signatureHeader]: signature,
          'user-agent': 'ingest-gateway',
        },
        body,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      status = answer.statusCode;
      await answer.body.dump();
    } catch (err) {
      throw new DeliveryError(`no answer: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (status < 200 || status > 299) throw new DeliveryError(`the receiver answered HTTP ${status}`);
  }

  let closing: Promise<void> | undefined;
  return {
    async start() {
      void worker.run().catch((err: unknown) => log.error({ err }, 'webhook worker stopped'));
      await worker.waitUntilReady();
    },
    close() {
      closing ??= worker.close();
      return closing;
    },
  };
}

/** The receiver's scheme, host and port: its path may carry a token of its own. */
function originOf(url: string): string {
  return URL.parse(url)?.origin ?? 'invalid URL';
}
