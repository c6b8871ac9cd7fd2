import type { Queue } from 'bullmq';
import { type NoticeJobData, type NoticeTrigger, queueNotice } from '../queue/notice-queue.ts';
import type { MessageLedger } from '../record/message-ledger.ts';
import { wantedNotice } from './notice-decision.ts';
import type { NotifySender } from './notice-settings-schema.ts';

/**
 * Queues a message's notice when it may be due one: at hold time when the holding workspace
 * notifies, and once the last document settled when a workspace wants to hear of the outcome.
 * The notice worker decides the rest (the received header, the sender, the rate). Loads no
 * mail client: the SMTP role uses it.
 */
export function createNoticeTrigger(options: {
  queue: () => Queue<NoticeJobData>;
  ledger: MessageLedger;
  /** The workspace's notifySender in the configuration in force. */
  modeOf: (workspace: string) => NotifySender;
}): NoticeTrigger {
  const { ledger, modeOf } = options;
  return {
    async held(messageId, workspace) {
      if (modeOf(workspace) === 'never') return;
      await queueNotice(options.queue(), messageId, 'held');
    },
    async documentSettled(messageId) {
      const record = await ledger.read(messageId);
      if (record === null || 'reason' in wantedNotice(record, modeOf)) return;
      await queueNotice(options.queue(), messageId, 'settled');
    },
  };
}

/** The notifySender of each workspace of a configuration, `never` for one not in it. */
export function notifySenderOf(
  workspaces: readonly { identifier: string; notifySender?: NotifySender | undefined }[],
): (workspace: string) => NotifySender {
  return (workspace) => workspaces.find((ws) => ws.identifier === workspace)?.notifySender ?? 'never';
}
