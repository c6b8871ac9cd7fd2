import { pingClamd } from './clamd-instream.ts';
import { pingRspamd } from './rspamd-check.ts';
import type { ScanSettings } from './scan-settings-schema.ts';

/** How long readiness waits for a scanner's PING, ms: a probe must answer within its own timeout. */
const PING_TIMEOUT_MS = 2000;

/**
 * Each configured scanner's health for /readyz: `ok`, or what went wrong (clamd's PING,
 * rspamd's GET /ping). Empty when no scanner is configured.
 */
export async function checkScanners(settings: ScanSettings): Promise<Record<string, string>> {
  const checks: Promise<[string, string | null]>[] = [];
  if (settings.clamav) {
    const clamav = settings.clamav;
    checks.push(
      pingClamd(clamav, Math.min(clamav.timeout, PING_TIMEOUT_MS)).then((problem) => ['clamav', problem]),
    );
  }
  if (settings.rspamd) {
    const rspamd = settings.rspamd;
    checks.push(
      pingRspamd(rspamd, Math.min(rspamd.timeout, PING_TIMEOUT_MS)).then((problem) => ['rspamd', problem]),
    );
  }
  const results = await Promise.all(checks);
  return Object.fromEntries(results.map(([name, problem]) => [name, problem ?? 'ok']));
}
