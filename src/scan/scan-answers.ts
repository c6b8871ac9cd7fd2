/**
 * What the scanners said about one message, before any workspace policy is applied
 * (scan-verdict.ts applies it).
 */

/** clamd's answer to INSTREAM. */
export type MalwareAnswer =
  | { kind: 'clean' }
  | { kind: 'infected'; signature: string }
  /** Longer than clamd's StreamMaxLength: clamd stopped reading and scanned nothing. */
  | { kind: 'too-large'; reason: string }
  | { kind: 'unavailable'; reason: string };

/** The actions rspamd's /checkv2 answers with (rspamd's "actions" documentation). */
export const RSPAMD_ACTIONS = [
  'no action',
  'greylist',
  'add header',
  'rewrite subject',
  'soft reject',
  'reject',
] as const;
export type RspamdAction = (typeof RSPAMD_ACTIONS)[number];

/** rspamd's answer to /checkv2. */
export type SpamAnswer =
  | { kind: 'checked'; action: RspamdAction; score: number }
  | { kind: 'unavailable'; reason: string };

/** Each scanner's answer; null where the scanner was not asked. */
export interface ScanAnswers {
  malware: MalwareAnswer | null;
  spam: SpamAnswer | null;
}

/**
 * clamd's reply to INSTREAM (NUL-terminated with the `z` prefix), as an answer:
 * `stream: OK`, `stream: <signature> FOUND`, `INSTREAM size limit exceeded. ERROR`, or
 * another `... ERROR`. Pure.
 */
export function parseClamdReply(reply: string): MalwareAnswer {
  const text = reply.replace(/\0/g, '').trim();
  const found = text.match(/^stream: (.+) FOUND$/);
  if (found?.[1] !== undefined) return { kind: 'infected', signature: found[1] };
  if (text === 'stream: OK') return { kind: 'clean' };
  if (/size limit exceeded/i.test(text)) return { kind: 'too-large', reason: `clamd: ${text}` };
  return {
    kind: 'unavailable',
    reason: text === '' ? 'clamd closed the connection without an answer' : `clamd: ${text}`,
  };
}
