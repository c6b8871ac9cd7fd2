import type { Readable } from 'node:stream';
import { startClamdScan } from './clamd-instream.ts';
import { type RspamdEnvelope, startRspamdCheck } from './rspamd-check.ts';
import type { MalwareAnswer, ScanAnswers, SpamAnswer } from './scan-answers.ts';
import type { ScanPolicy, ScanSettings } from './scan-settings-schema.ts';
import type { ScannerRun } from './scanner-run.ts';

/** Feeds `branch` with every chunk of `source` as it passes (src/intake/tee-stream.ts). */
export type Tee = (source: Readable, branch: ScannerRun<unknown>['input']) => Readable;

/** The scanners one message goes through. */
export interface Scan {
  /** `source` with every chunk also handed to each scanner, as it streams. */
  feed(source: Readable, tee: Tee): Readable;
  /** Each scanner's answer, once the message has ended; never rejects. */
  answers(): Promise<ScanAnswers>;
  /** Milliseconds each scanner kept the reply waiting after the last byte; null where it was not asked or did not get there. */
  waits(): { clamav: number | null; rspamd: number | null };
  /** Stops every scanner (the message was refused while it streamed). */
  abort(): void;
}

/**
 * The scanners a message goes through: clamd when scan.clamav is set, rspamd when scan.rspamd
 * is set and the transaction's spam policy is not `off`. Null when there is none.
 */
export function startScan(settings: ScanSettings, policy: ScanPolicy, envelope: RspamdEnvelope): Scan | null {
  const malware = settings.clamav ? startClamdScan(settings.clamav) : null;
  const spam = settings.rspamd && policy.spam !== 'off' ? startRspamdCheck(settings.rspamd, envelope) : null;
  if (malware === null && spam === null) return null;
  const runs = [malware, spam].filter((run) => run !== null);
  const answered: { clamav: number | null; rspamd: number | null } = { clamav: null, rspamd: null };
  const waitOf = (run: ScannerRun<unknown>, key: 'clamav' | 'rspamd') =>
    run.answer.then(() => {
      const ended = run.endedAt();
      if (ended !== null) answered[key] = performance.now() - ended;
    });
  return {
    feed: (source, tee) => runs.reduce<Readable>((stream, run) => tee(stream, run.input), source),
    async answers() {
      const [malwareAnswer, spamAnswer] = await Promise.all([
        malware ? malware.answer : Promise.resolve<MalwareAnswer | null>(null),
        spam ? spam.answer : Promise.resolve<SpamAnswer | null>(null),
        malware ? waitOf(malware, 'clamav') : null,
        spam ? waitOf(spam, 'rspamd') : null,
      ]);
      return { malware: malwareAnswer, spam: spamAnswer };
    },
    waits: () => ({ ...answered }),
    abort: () => {
      for (const run of runs) run.abort();
    },
  };
}
