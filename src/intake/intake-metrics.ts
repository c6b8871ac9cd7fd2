import { RefusalError } from '../errors.ts';
import type { AttachmentOutcome, GatewayMetrics, SenderAuthResult } from '../metrics.ts';
import type { SenderAuthentication } from '../sender/sender-policy.ts';
import type { Decision } from './decide.ts';

/**
 * What the intake counts per message, as pure functions of the decision (or of the refusal),
 * and the one function that adds them to the metrics.
 */

/**
 * The attachments of a committed message: one `queued` per upload (a document for two
 * workspaces is two), one `skipped_<kind>` per skipped part.
 */
export function attachmentOutcomes(decision: Pick<Decision, 'entries' | 'skipKinds'>): AttachmentOutcome[] {
  const queued = decision.entries.filter((entry) => entry.state === 'queued').map(() => 'queued' as const);
  return [...queued, ...decision.skipKinds.map((kind): AttachmentOutcome => `skipped_${kind}`)];
}

/**
 * What sender authentication came to for an admitted message, or null when no addressed
 * workspace asked for it: `fail` when a workspace's mode failed (another admitted the sender),
 * else `pass`. A temperror refuses the message, so it never reaches a decision.
 */
export function senderAuthResultOf(authentication: SenderAuthentication | null): SenderAuthResult | null {
  if (authentication === null) return null;
  const verdicts = Object.values(authentication.verdicts);
  if (verdicts.length === 0) return null;
  return verdicts.some((verdict) => verdict.outcome === 'fail') ? 'fail' : 'pass';
}

/** The result a refusal for the sender's authentication stands for; null for any other error. */
export function senderAuthRefusalResult(err: unknown): SenderAuthResult | null {
  if (!(err instanceof RefusalError)) return null;
  if (err.code === 'SENDER_NOT_AUTHENTICATED') return 'fail';
  if (err.code === 'SENDER_AUTHENTICATION_TEMPFAIL') return 'temperror';
  return null;
}

export function countSenderAuth(metrics: GatewayMetrics | undefined, result: SenderAuthResult | null): void {
  if (metrics && result !== null) metrics.senderAuth.inc({ result });
}

export function countAttachments(
  metrics: GatewayMetrics | undefined,
  outcomes: readonly AttachmentOutcome[],
) {
  for (const outcome of outcomes) metrics?.attachments.inc({ outcome });
}
