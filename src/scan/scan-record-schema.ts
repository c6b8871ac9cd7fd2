import * as z from 'zod/mini';
import { RSPAMD_ACTIONS } from './scan-answers.ts';

/** Why a message is held, of the reasons scanning gives. */
export const HOLD_REASONS = ['malware', 'spam'] as const;
export type HoldReason = (typeof HOLD_REASONS)[number];

const described = <T extends z.ZodMiniType>(schema: T, description: string): T =>
  schema.check(z.describe(description));

/** What the message record says of the scan (README, "Scanning for malware and spam"). */
export const scanRecordSchema = described(
  z.object({
    malware: described(
      z.nullable(
        z.object({
          verdict: described(
            z.enum(['clean', 'infected', 'unscanned']),
            'infected: held (malware: hold); unscanned: clamd did not answer, or the message was larger than it reads, and scan.unavailable is accept',
          ),
          signature: described(z.nullable(z.string()), 'The signature clamd found'),
          reason: described(z.nullable(z.string()), 'Why the message is unscanned'),
        }),
      ),
      "clamd's verdict; null when scan.clamav is not configured",
    ),
    spam: described(
      z.nullable(
        z.object({
          action: described(
            z.nullable(z.enum(RSPAMD_ACTIONS)),
            "rspamd's action; null when rspamd did not answer (see reason)",
          ),
          score: described(z.nullable(z.number()), "rspamd's score"),
          policy: described(
            z.enum(['refuse', 'hold', 'tag']),
            "The workspace's spam policy that was applied",
          ),
          reason: described(z.nullable(z.string()), 'Why the message is unscanned'),
        }),
      ),
      "rspamd's verdict; null when scan.rspamd is not configured or the workspace's spam policy is off",
    ),
  }),
  "The scanners' verdicts (scan section); absent when no scanner is configured",
);

export type ScanRecord = z.output<typeof scanRecordSchema>;
