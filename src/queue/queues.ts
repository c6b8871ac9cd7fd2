import type { Queue } from 'bullmq';
import type { Logger } from '../logger.ts';
import type { KeySpace } from '../record/keys.ts';
import type { RedisClient } from '../redis/connections.ts';
import type { RedisOutageLog } from '../redis/outage-log.ts';
import { type CompletionJobData, createCompletionQueue } from './completion-queue.ts';
import { createNoticeQueue, type NoticeJobData } from './notice-queue.ts';
import { createUploadQueue, type UploadJobData, type UploadQueueOptions } from './upload-queue.ts';
import { createWebhookQueue, type WebhookJobData } from './webhook-queue.ts';

/**
 * The BullMQ queues of one Redis connection, each built once, on first use, with its error
 * listener: a Queue without one turns a Redis error into an unhandled 'error' event.
 */
export interface Queues {
  readonly uploads: Queue<UploadJobData>;
  readonly completion: Queue<CompletionJobData>;
  readonly webhooks: Queue<WebhookJobData>;
  readonly notices: Queue<NoticeJobData>;
  /** Closes the queues that were built. Idempotent; every queue is closed even if one fails. */
  close(): Promise<void>;
}

export interface QueuesOptions {
  connection: RedisClient;
  keys: KeySpace;
  /** upload.attempts and the retention of finished jobs, for the upload queue's job options. */
  attempts: UploadQueueOptions['attempts'];
  retention: UploadQueueOptions['retention'];
  /** Tries per webhook delivery (webhook-backoff.ts's webhookAttempts of the events section); default 1. */
  webhookAttempts?: number;
  /** Tries per sender notice (webhookAttempts of the notices section's schedule); default 1. */
  noticeAttempts?: number;
  logger: Logger;
  /**
   * The process's account of Redis outages: an error it absorbs (Redis away, already logged
   * once for the outage) is not logged again per queue. Null: every error is logged.
   */
  outage: RedisOutageLog | null;
  /** Who uses these queues, for the error log line: "HTTP API and intake", "worker". */
  user: string;
}

export function openQueues(options: QueuesOptions): Queues {
  const { connection, keys, logger, outage, user } = options;
  const built: Queue[] = [];
  const wire = <Q extends Queue>(name: string, queue: Q): Q => {
    queue.on(
      'error',
      (err) => outage?.absorbs(err) || logger.error({ err, queue: name }, `${name} queue error (${user})`),
    );
    built.push(queue);
    return queue;
  };
  let uploads: Queue<UploadJobData> | undefined;
  let completion: Queue<CompletionJobData> | undefined;
  let webhooks: Queue<WebhookJobData> | undefined;
  let notices: Queue<NoticeJobData> | undefined;
  let closing: Promise<void> | undefined;
  return {
    get uploads() {
      uploads ??= wire(
        'upload',
        createUploadQueue({ connection, keys, attempts: options.attempts, retention: options.retention }),
      );
      return uploads;
    },
    get completion() {
      completion ??= wire('completion', createCompletionQueue({ connection, keys }));
      return completion;
    },
    get webhooks() {
      webhooks ??= wire(
        'webhook',
        createWebhookQueue({
          connection,
          keys,
          attempts: options.webhookAttempts ?? 1,
          retention: options.retention,
        }),
      );
      return webhooks;
    },
    get notices() {
      notices ??= wire(
        'notice',
        createNoticeQueue({
          connection,
          keys,
          attempts: options.noticeAttempts ?? 1,
          retention: options.retention,
        }),
      );
      return notices;
    },
    close() {
      closing ??= Promise.allSettled(built.map((queue) => queue.close())).then((results) => {
        const failed = results.find((result) => result.status === 'rejected');
        if (failed) throw failed.reason;
      });
      return closing;
    },
  };
}
