import { parseFromHeader } from '../sender/parse-from-header.ts';
import { type Decision, deliveryHash } from './decide.ts';
import { type FactsInput, messageFacts } from './message-facts.ts';

/** What is known of a message for the postmaster once DATA has ended. */
export interface KeepInput extends FactsInput {
  rawSha256: string;
}

/**
 * Mail for the postmaster (RFC 5321 4.5.1): a record that keeps the message for the operator
 * and uploads nothing (docs/architecture.md, "Mail for the postmaster"). Unlike decide.ts it
 * never refuses: no allow-list, no sender authentication and no document is asked of it, since
 * a postmaster address is where a sender reports that its mail to the gateway went wrong.
 * Pure.
 */
export function keepForPostmaster(input: KeepInput): Decision {
  return {
    summary: {
      ...messageFacts(input, parseFromHeader(input.walk.fromHeaders)),
      workspaces: [],
      authentication: null,
      keptFor: 'postmaster',
    },
    entries: [],
    deliveryHash: deliveryHash(input.rawSha256, input.transaction.rcptTo),
    skipKinds: [],
  };
}
