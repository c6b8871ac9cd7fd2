import type { Logger } from '../logger.ts';
import type { GatewayMetrics } from '../metrics.ts';
import { type ScanPolicy, type ScanSettings, scanPolicyOf } from '../scan/scan-settings-schema.ts';
import { judgeScan, type ScanVerdict, verdictLabels } from '../scan/scan-verdict.ts';
import { type Scan, startScan } from '../scan/start-scan.ts';
import type { Transaction } from './decide.ts';

/**
 * The transaction's scan policy: its workspaces share one, since the route table makes the
 * scan policy part of the admission policy (one verdict per transaction).
 */
function policyOf(transaction: Transaction): ScanPolicy {
  return scanPolicyOf(transaction.workspaces[0]?.config ?? {});
}

/** Starts the configured scanners for one message as DATA begins; null when there is none. */
export function scanMessage(settings: ScanSettings, transaction: Transaction, queueId: string): Scan | null {
  return startScan(settings, policyOf(transaction), {
    ip: transaction.remoteAddress,
    helo: transaction.helo,
    mailFrom: transaction.mailFrom,
    rcptTo: transaction.rcptTo,
    queueId,
  });
}

/**
 * Waits for the scanners' answers once DATA has ended, counts and logs them, and applies the
 * transaction's policy: the record's `scan` and whether the message is held, or the
 * RefusalError the message is answered with.
 */
export async function verdictOf(
  scan: Scan,
  settings: ScanSettings | undefined,
  transaction: Transaction,
  metrics: GatewayMetrics | undefined,
  logger: Logger,
): Promise<ScanVerdict> {
  const answers = await scan.answers();
  for (const labels of verdictLabels(answers)) metrics?.scans.inc(labels);
  const waits = scan.waits();
  for (const scanner of ['clamav', 'rspamd'] as const) {
    const wait = waits[scanner];
    if (wait !== null) metrics?.scanSeconds.observe({ scanner }, wait / 1000);
  }
  logger.info({ scan: answers }, 'message scanned');
  return judgeScan(answers, policyOf(transaction), settings?.unavailable ?? 'tempfail');
}
