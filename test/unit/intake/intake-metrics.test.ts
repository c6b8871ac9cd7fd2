import { describe, expect, it } from 'vitest';
import { RefusalError } from '../../../src/errors.ts';
import {
  attachmentOutcomes,
  senderAuthRefusalResult,
  senderAuthResultOf,
} from '../../../src/intake/intake-metrics.ts';
import type { AttachmentEntry } from '../../../src/record/message-record.ts';
import type { AuthenticationResults } from '../../../src/sender/authentication-results.ts';
import type { SenderAuthentication, SenderVerdict } from '../../../src/sender/sender-policy.ts';

const entry = (state: AttachmentEntry['state']) => ({ state }) as AttachmentEntry;

describe('attachmentOutcomes', () => {
  it('counts one queued per upload and one skipped_<kind> per skipped part', () => {
    expect(
      attachmentOutcomes({
        entries: [entry('queued'), entry('queued'), entry('skipped'), entry('skipped')],
        skipKinds: ['empty', 'inline_image'],
      }),
    ).toEqual(['queued', 'queued', 'skipped_empty', 'skipped_inline_image']);
  });

  it('counts nothing for a message with neither', () => {
    expect(attachmentOutcomes({ entries: [], skipKinds: [] })).toEqual([]);
  });
});

const pass: SenderVerdict = { outcome: 'pass', via: 'spf', domain: 'acme.example' };
const fail: SenderVerdict = { outcome: 'fail', reason: 'sender not authenticated: …' };
const results = {} as AuthenticationResults;
const authenticated = (verdicts: SenderAuthentication['verdicts']): SenderAuthentication => ({
  fromDomain: 'acme.example',
  results,
  verdicts,
});

describe('senderAuthResultOf', () => {
  it.each<[string, SenderAuthentication | null, 'pass' | 'fail' | null]>([
    ['no workspace asked for authentication', null, null],
    ['the one mode passed', authenticated({ aligned: pass }), 'pass'],
    ['both modes passed', authenticated({ aligned: pass, dmarc: pass }), 'pass'],
    ['one mode failed, another workspace admitted', authenticated({ aligned: pass, dmarc: fail }), 'fail'],
    ['no verdict at all', authenticated({}), null],
  ])('%s → %s', (_case, authentication, result) => {
    expect(senderAuthResultOf(authentication)).toBe(result);
  });
});

describe('senderAuthRefusalResult', () => {
  it.each<[string, unknown, 'fail' | 'temperror' | null]>([
    ['not authenticated', new RefusalError('SENDER_NOT_AUTHENTICATED', 'x'), 'fail'],
    ['a DNS failure', new RefusalError('SENDER_AUTHENTICATION_TEMPFAIL', 'x'), 'temperror'],
    ['not admitted by the allow-list', new RefusalError('SENDER_NOT_ADMITTED', 'x'), null],
    ['an internal failure', new Error('redis gone'), null],
  ])('%s → %s', (_case, err, result) => {
    expect(senderAuthRefusalResult(err)).toBe(result);
  });
});
