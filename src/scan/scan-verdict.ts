import { RefusalError } from '../errors.ts';
import type { ScanAnswers } from './scan-answers.ts';
import type { HoldReason, ScanRecord } from './scan-record-schema.ts';
import type { ScanPolicy, ScanSettings } from './scan-settings-schema.ts';

/** What the record says of the scan, and why the message is held (null: it is taken as usual). */
export interface ScanVerdict {
  record: ScanRecord;
  hold: HoldReason | null;
}

/**
 * What the scanners' answers do to the message under the transaction's policy (README,
 * "Scanning for malware and spam"): throws the RefusalError it is answered with, or returns
 * what the record says of the scan and whether the message is held. Pure.
 *
 * A definite answer outranks a missing one: malware found, then rspamd's reject, then a
 * message too large for clamd, then soft reject, greylist and a scanner that did not answer.
 * `hold` takes what `refuse` would refuse with 550 (malware, rspamd's reject); what it would
 * answer with 451 it answers so too, since the sender retries and the verdict may change.
 */
export function judgeScan(
  answers: ScanAnswers,
  policy: ScanPolicy,
  unavailable: ScanSettings['unavailable'],
): ScanVerdict {
  const { malware, spam } = answers;
  const spamApplies = policy.spam === 'refuse' || policy.spam === 'hold';
  let hold: HoldReason | null = null;
  if (malware?.kind === 'infected') {
    if (policy.malware !== 'hold')
      throw new RefusalError('MALWARE_FOUND', `malware found: ${malware.signature}`);
    hold = 'malware';
  }
  if (hold === null && spam?.kind === 'checked' && spamApplies && spam.action === 'reject') {
    if (policy.spam !== 'hold') {
      throw new RefusalError('SPAM_REJECTED', `message refused as spam (score ${spam.score})`);
    }
    hold = 'spam';
  }
  // Too large for clamd is no passing state: retrying sends the same bytes, so only accept takes it.
  if (malware?.kind === 'too-large' && unavailable === 'tempfail') {
    throw new RefusalError('TOO_LARGE_TO_SCAN', 'message is larger than the malware scanner reads');
  }
  if (spam?.kind === 'checked' && spamApplies && spam.action === 'soft reject') {
    throw new RefusalError('SPAM_DEFERRED', 'message deferred by the spam filter, please try again later');
  }
  if (spam?.kind === 'checked' && spamApplies && spam.action === 'greylist') {
    throw new RefusalError('SPAM_DEFERRED', 'greylisted, please try again later');
  }
  if (unavailable === 'tempfail' && malware?.kind === 'unavailable') {
    throw new RefusalError('SCAN_UNAVAILABLE', 'malware scan unavailable, please try again later');
  }
  // A tag policy refuses nothing, so a spam scan that did not answer costs the sender nothing.
  if (unavailable === 'tempfail' && spamApplies && spam?.kind === 'unavailable') {
    throw new RefusalError('SCAN_UNAVAILABLE', 'spam scan unavailable, please try again later');
  }
  const spamPolicy = policy.spam === 'off' ? 'refuse' : policy.spam;
  const record: ScanRecord = {
    malware:
      malware === null
        ? null
        : malware.kind === 'clean'
          ? { verdict: 'clean', signature: null, reason: null }
          : malware.kind === 'infected'
            ? { verdict: 'infected', signature: malware.signature, reason: null }
            : { verdict: 'unscanned', signature: null, reason: malware.reason },
    spam:
      spam === null
        ? null
        : spam.kind === 'checked'
          ? { action: spam.action, score: spam.score, policy: spamPolicy, reason: null }
          : { action: null, score: null, policy: spamPolicy, reason: spam.reason },
  };
  return { record, hold };
}

/** The label of a scanner's answer in ingest_gateway_scans_total. */
export function verdictLabels(answers: ScanAnswers): { scanner: 'clamav' | 'rspamd'; verdict: string }[] {
  const labels: { scanner: 'clamav' | 'rspamd'; verdict: string }[] = [];
  const { malware, spam } = answers;
  if (malware !== null) {
    const verdict =
      malware.kind === 'too-large'
        ? 'too_large'
        : malware.kind === 'unavailable'
          ? 'unscanned'
          : malware.kind;
    labels.push({ scanner: 'clamav', verdict });
  }
  if (spam !== null) {
    labels.push({
      scanner: 'rspamd',
      verdict: spam.kind === 'checked' ? spam.action.replace(' ', '_') : 'unscanned',
    });
  }
  return labels;
}
