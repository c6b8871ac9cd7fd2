import type { WalkResult } from '../mail/walk-message.ts';
import { parseFromHeader } from '../sender/parse-from-header.ts';
import { type Decision, deliveryHash, type Transaction } from './decide.ts';

/** What is known of a message for the postmaster once DATA has ended. */
export interface KeepInput {
  queueId: string;
  walk: WalkResult;
  transaction: Transaction;
  size: number;
  rawSha256: string;
  now: string;
  publicUrl: string;
}

/**
 * Mail for the postmaster (RFC 5321 4.5.1): a record that keeps the message for the operator
 * and uploads nothing (docs/architecture.md, "Mail for the postmaster"). Unlike decide.ts it
 * never refuses: no allow-list, no sender authentication and no document is asked of it, since
 * a postmaster address is where a sender reports that its mail to the gateway went wrong.
 * Pure.
 */
export function keepForPostmaster(input: KeepInput): Decision {
  const { walk, transaction, queueId } = input;
  const sender = parseFromHeader(walk.fromHeaders);
  const senderAddress = sender.ok ? sender.address.address : null;
  return {
    summary: {
      id: queueId,
      messageId: walk.messageId,
      receivedAt: input.now,
      remoteAddress: transaction.remoteAddress,
      envelope: { mailFrom: transaction.mailFrom, rcptTo: [...transaction.rcptTo] },
      from: senderAddress,
      subject: walk.subject,
      sourceEmail: `${input.publicUrl}/v1/messages/${queueId}/raw`,
      sourceEmailAddress: senderAddress,
      size: input.size,
      workspaces: [],
      authentication: null,
      ...(transaction.via ? { via: transaction.via } : {}),
      keptFor: 'postmaster',
    },
    entries: [],
    deliveryHash: deliveryHash(input.rawSha256, transaction.rcptTo),
    skipKinds: [],
  };
}
