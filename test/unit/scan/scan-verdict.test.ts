import { describe, expect, it } from 'vitest';
import { RefusalError } from '../../../src/errors.ts';
import { parseRspamdAnswer } from '../../../src/scan/rspamd-check.ts';
import { parseClamdReply, type ScanAnswers } from '../../../src/scan/scan-answers.ts';
import type { ScanPolicy } from '../../../src/scan/scan-settings-schema.ts';
import { judgeScan, verdictLabels } from '../../../src/scan/scan-verdict.ts';
import { replyFor } from '../../../src/smtp/smtp-reply.ts';

const clean = { kind: 'clean' } as const;
const infected = { kind: 'infected', signature: 'Eicar-Test' } as const;
const tooLarge = { kind: 'too-large', reason: 'clamd: INSTREAM size limit exceeded. ERROR' } as const;
const clamdDown = { kind: 'unavailable', reason: 'clamd: connect ENOENT' } as const;
const rspamd = (action: 'no action' | 'reject' | 'soft reject' | 'greylist' | 'add header') =>
  ({ kind: 'checked', action, score: 3 }) as const;
const rspamdDown = { kind: 'unavailable', reason: 'rspamd: connect ECONNREFUSED' } as const;
const refuse: ScanPolicy = { malware: 'refuse', spam: 'refuse' };
const tag: ScanPolicy = { malware: 'refuse', spam: 'tag' };

/** The SMTP reply a verdict comes to, or "accepted". */
function reply(
  answers: ScanAnswers,
  policy: ScanPolicy,
  unavailable: 'tempfail' | 'accept' = 'tempfail',
): string {
  try {
    judgeScan(answers, policy, unavailable);
    return 'accepted';
  } catch (err) {
    if (!(err instanceof RefusalError)) throw err;
    const { responseCode, message } = replyFor(err);
    return `${responseCode} ${message}`;
  }
}

describe('judgeScan: the reply each verdict comes to', () => {
  it.each([
    [
      'malware found',
      { malware: infected, spam: rspamd('no action') },
      refuse,
      'tempfail',
      '550 5.7.1 malware found: Eicar-Test',
    ],
    [
      'malware outranks spam',
      { malware: infected, spam: rspamd('reject') },
      refuse,
      'tempfail',
      '550 5.7.1 malware found: Eicar-Test',
    ],
    [
      'rspamd reject',
      { malware: clean, spam: rspamd('reject') },
      refuse,
      'tempfail',
      '550 5.7.1 message refused as spam (score 3)',
    ],
    [
      'rspamd soft reject',
      { malware: clean, spam: rspamd('soft reject') },
      refuse,
      'tempfail',
      '451 4.7.1 message deferred by the spam filter, please try again later',
    ],
    [
      'rspamd greylist',
      { malware: null, spam: rspamd('greylist') },
      refuse,
      'tempfail',
      '451 4.7.1 greylisted, please try again later',
    ],
    [
      'add header is no refusal',
      { malware: clean, spam: rspamd('add header') },
      refuse,
      'tempfail',
      'accepted',
    ],
    ['tag takes reject', { malware: clean, spam: rspamd('reject') }, tag, 'tempfail', 'accepted'],
    ['tag takes greylist', { malware: clean, spam: rspamd('greylist') }, tag, 'tempfail', 'accepted'],
    [
      'clamd down',
      { malware: clamdDown, spam: rspamd('no action') },
      refuse,
      'tempfail',
      '451 4.7.1 malware scan unavailable, please try again later',
    ],
    ['clamd down, accept', { malware: clamdDown, spam: rspamd('no action') }, refuse, 'accept', 'accepted'],
    [
      'rspamd down',
      { malware: clean, spam: rspamdDown },
      refuse,
      'tempfail',
      '451 4.7.1 spam scan unavailable, please try again later',
    ],
    ['rspamd down, tag', { malware: clean, spam: rspamdDown }, tag, 'tempfail', 'accepted'],
    ['rspamd down, accept', { malware: clean, spam: rspamdDown }, refuse, 'accept', 'accepted'],
    [
      'too large for clamd',
      { malware: tooLarge, spam: null },
      refuse,
      'tempfail',
      '552 5.3.4 message is larger than the malware scanner reads',
    ],
    ['too large for clamd, accept', { malware: tooLarge, spam: null }, refuse, 'accept', 'accepted'],
    [
      'a definite reject outranks clamd down',
      { malware: clamdDown, spam: rspamd('reject') },
      refuse,
      'tempfail',
      '550 5.7.1 message refused as spam (score 3)',
    ],
  ] as const)('%s', (_name, answers, policy, unavailable, expected) => {
    expect(reply(answers, policy, unavailable)).toBe(expected);
  });

  it('records what was found, and why a scan is missing', () => {
    expect(judgeScan({ malware: clamdDown, spam: rspamd('reject') }, tag, 'accept')).toEqual({
      record: {
        malware: { verdict: 'unscanned', signature: null, reason: 'clamd: connect ENOENT' },
        spam: { action: 'reject', score: 3, policy: 'tag', reason: null },
      },
      hold: null,
    });
    expect(judgeScan({ malware: null, spam: null }, refuse, 'tempfail')).toEqual({
      record: { malware: null, spam: null },
      hold: null,
    });
  });

  it('holds what hold would otherwise refuse with 550, and answers 451 as refuse does', () => {
    const holding: ScanPolicy = { malware: 'hold', spam: 'hold' };
    expect(judgeScan({ malware: infected, spam: rspamd('reject') }, holding, 'tempfail')).toEqual({
      record: {
        malware: { verdict: 'infected', signature: 'Eicar-Test', reason: null },
        spam: { action: 'reject', score: 3, policy: 'hold', reason: null },
      },
      hold: 'malware',
    });
    expect(judgeScan({ malware: clean, spam: rspamd('reject') }, holding, 'tempfail').hold).toBe('spam');
    expect(judgeScan({ malware: clean, spam: rspamd('no action') }, holding, 'tempfail').hold).toBeNull();
    expect(reply({ malware: clean, spam: rspamd('greylist') }, holding)).toBe(
      '451 4.7.1 greylisted, please try again later',
    );
    expect(reply({ malware: clean, spam: rspamdDown }, holding)).toBe(
      '451 4.7.1 spam scan unavailable, please try again later',
    );
    // Malware held, spam refused: the message is held, not refused as spam.
    const malwareHeld: ScanPolicy = { malware: 'hold', spam: 'refuse' };
    expect(judgeScan({ malware: infected, spam: rspamd('reject') }, malwareHeld, 'tempfail').hold).toBe(
      'malware',
    );
  });

  it('labels the metric by scanner and verdict', () => {
    expect(verdictLabels({ malware: tooLarge, spam: rspamd('soft reject') })).toEqual([
      { scanner: 'clamav', verdict: 'too_large' },
      { scanner: 'rspamd', verdict: 'soft_reject' },
    ]);
    expect(verdictLabels({ malware: clamdDown, spam: rspamdDown })).toEqual([
      { scanner: 'clamav', verdict: 'unscanned' },
      { scanner: 'rspamd', verdict: 'unscanned' },
    ]);
  });
});

describe("the scanners' answers", () => {
  it.each([
    ['stream: OK\0', clean],
    ['stream: Win.Test.EICAR_HDB-1 FOUND\0', { kind: 'infected', signature: 'Win.Test.EICAR_HDB-1' }],
    [
      'INSTREAM size limit exceeded. ERROR\0',
      { kind: 'too-large', reason: 'clamd: INSTREAM size limit exceeded. ERROR' },
    ],
    [
      "stream: Can't allocate memory ERROR\0",
      { kind: 'unavailable', reason: "clamd: stream: Can't allocate memory ERROR" },
    ],
    ['', { kind: 'unavailable', reason: 'clamd closed the connection without an answer' }],
  ])('clamd %j', (text, answer) => {
    expect(parseClamdReply(text)).toEqual(answer);
  });

  it('reads rspamd action and score, and refuses anything else', () => {
    expect(parseRspamdAnswer('{"action":"reject","score":15.5,"symbols":{}}')).toEqual({
      kind: 'checked',
      action: 'reject',
      score: 15.5,
    });
    expect(parseRspamdAnswer('{"action":"discard","score":1}').kind).toBe('unavailable');
    expect(parseRspamdAnswer('<html>').kind).toBe('unavailable');
  });
});
