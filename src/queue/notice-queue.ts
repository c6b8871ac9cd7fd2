import { Queue } from 'bullmq';
import type { KeySpace } from '../record/keys.ts';
import type { RedisClient } from '../redis/connections.ts';

/** BullMQ queue name; its keys are `<prefix>:{queue}:notices:…`. */
export const noticeQueueName = 'notices';

/**
 * When a message may be due a notice to its sender: it was held, or its last document has
 * settled. The notice worker reads the record and decides (src/notices).
 */
export type NoticeOccasion = 'held' | 'settled';

/** One notice to consider: the job names the message, never its sender or its text. */
export interface NoticeJobData {
  messageId: string;
  occasion: NoticeOccasion;
}

/**
 * One job per message, whatever the occasion: a message gets at most one notice, and the
 * workers that settle its last two documents at once both add the same job, which BullMQ
 * takes once. BullMQ ids may not hold `:`.
 */
export const noticeJobId = (messageId: string): string => `notice-${messageId}`;

/**
 * What the intake and the upload workers tell about a message: it is held, or one of its
 * documents settled (the implementation checks whether it was the last, src/notices).
 */
export interface NoticeTrigger {
  held(messageId: string, workspace: string): Promise<void>;
  documentSettled(messageId: string): Promise<void>;
}

export interface NoticeQueueOptions {
  connection: RedisClient;
  keys: KeySpace;
  /** Tries per notice, the first included (webhook-backoff.ts spreads them over notices.retryFor). */
  attempts: number;
  /** retention: seconds finished notices are kept (a kept one makes a repeat a no-op). */
  retention: { completedJobs: number; failedJobs: number };
}

export function createNoticeQueue(options: NoticeQueueOptions): Queue<NoticeJobData> {
  return new Queue<NoticeJobData>(noticeQueueName, {
    connection: options.connection,
    prefix: options.keys.queuePrefix,
    defaultJobOptions: {
      attempts: options.attempts,
      // The delay comes from the notice worker's backoff strategy.
      backoff: { type: 'notice' },
      removeOnComplete: { age: options.retention.completedJobs },
      removeOnFail: { age: options.retention.failedJobs },
    },
  });
}

/** Adds the notice job of a message; a second add for the same message adds nothing. */
export async function queueNotice(
  queue: Queue<NoticeJobData>,
  messageId: string,
  occasion: NoticeOccasion,
): Promise<void> {
  await queue.add(occasion, { messageId, occasion }, { jobId: noticeJobId(messageId) });
}
