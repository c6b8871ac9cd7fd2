import type { WalkResult } from '../mail/walk-message.ts';
import type { MessageSummary } from '../record/message-record.ts';
import type { FromHeaderResult } from '../sender/parse-from-header.ts';

/** What is known of every accepted message once DATA has ended, whatever is decided of it. */
export interface FactsInput {
  queueId: string;
  walk: WalkResult;
  /** The envelope, as the transaction (decide.ts) holds it. */
  transaction: {
    readonly remoteAddress: string | null;
    readonly mailFrom: string | null;
    readonly rcptTo: readonly string[];
    readonly via?: 'replay';
  };
  /** Bytes of the message as received. */
  size: number;
  /** When it was received, ISO 8601. */
  now: string;
  /** Base URL for the raw-message link recorded as sourceEmail. */
  publicUrl: string;
}

/** What a message's record says of it whatever is decided: its ids, envelope, sender, subject and size. */
export type MessageFacts = Pick<
  MessageSummary,
  | 'id'
  | 'messageId'
  | 'receivedAt'
  | 'remoteAddress'
  | 'envelope'
  | 'from'
  | 'subject'
  | 'sourceEmail'
  | 'sourceEmailAddress'
  | 'size'
  | 'via'
>;

/** The facts of the record for the message `input` describes, from the sender its From header gave. */
export function messageFacts(input: FactsInput, sender: FromHeaderResult): MessageFacts {
  const { queueId, walk, transaction } = input;
  const senderAddress = sender.ok ? sender.address.address : null;
  return {
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
    ...(transaction.via ? { via: transaction.via } : {}),
  };
}
