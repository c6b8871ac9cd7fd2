import type { SenderAuthenticationMode, SenderWorkspace } from './sender-settings-schema.ts';

/**
 * A workspace's admission policy (docs/architecture.md, "One verdict per transaction") as a key:
 * how it authenticates the header From and which senders its allow-list names. After DATA one reply
 * speaks for every recipient of the transaction, so a transaction holds only workspaces with one
 * key: those give every sender the same answer, and the reply is right for each of them. Rules
 * compare as written, so two spellings of one rule count as two policies; that costs the sending
 * server a second transaction, never a wrong reply.
 */
export function admissionPolicyKey(
  workspace: SenderWorkspace,
  defaultMode: SenderAuthenticationMode,
): string {
  const mode = workspace.senderAuthentication ?? defaultMode;
  const rules = [...new Set(workspace.whitelistIngestAddresses ?? [])].sort();
  // Holding or refusing an unlisted sender is part of the one answer the transaction gets.
  const unlisted = workspace.unlistedSenders ?? 'refuse';
  return JSON.stringify({ mode, rules, unlisted });
}
