import type { DocumentOutcome, GatewayMetrics } from '../metrics.ts';
import type { EntryChange } from './settle-attempt.ts';

/**
 * The documents metric, counted where an entry's change is performed: the final upload
 * outcome (a retry's change leaves the entry queued and counts nothing), and `parsed` when
 * the upload's own answer (wait: true) says the service has parsed the document already.
 * Pure.
 */
export function documentOutcomesOf(change: EntryChange): DocumentOutcome[] {
  const outcomes: DocumentOutcome[] = [];
  if (change.state === 'uploaded' || change.state === 'rejected' || change.state === 'failed') {
    outcomes.push(change.state);
  }
  if (change.state === 'uploaded' && change.ready === true) outcomes.push('parsed');
  return outcomes;
}

export function countDocuments(
  metrics: GatewayMetrics | undefined,
  outcomes: readonly DocumentOutcome[],
): void {
  for (const outcome of outcomes) metrics?.documents.inc({ outcome });
}
