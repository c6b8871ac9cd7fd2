import { describe, expect, it } from 'vitest';
import { type RefusalCode, RefusalError } from '../../../src/errors.ts';
import { acceptedReply, replyFor } from '../../../src/smtp/smtp-reply.ts';

describe('replyFor', () => {
  it.each<[RefusalCode, number, string]>([
    ['RECIPIENT_UNKNOWN', 550, '5.1.1'],
    ['SENDER_NOT_ADMITTED', 550, '5.7.1'],
    ['MESSAGE_TOO_LARGE', 552, '5.3.4'],
    ['TOO_MANY_ATTACHMENTS', 550, '5.7.0'],
    ['PART_TOO_LARGE', 552, '5.3.4'],
    ['NO_SUPPORTED_ATTACHMENT', 550, '5.6.0'],
    ['MIME_LIMIT', 550, '5.6.0'],
    ['SHUTTING_DOWN', 421, '4.3.2'],
    ['CONNECTION_RATE_EXCEEDED', 421, '4.7.0'],
    ['MESSAGE_RATE_EXCEEDED', 450, '4.7.1'],
    ['REFUSED_RECIPIENTS_EXCEEDED', 421, '4.7.0'],
    ['UNKNOWN_PARAMETER', 555, '5.5.4'],
    ['UTF8_ADDRESS_WITHOUT_SMTPUTF8', 553, '5.6.7'],
    ['TOO_MANY_RECIPIENTS', 452, '4.5.3'],
    ['OTHER_SUBADDRESS', 452, '4.5.3'],
    ['TLS_REQUIRED', 530, '5.7.0'],
    ['BARE_LINE_ENDING', 550, '5.6.0'],
    ['COMMAND_LINE_TOO_LONG', 500, '5.5.2'],
    ['SESSION_TIME_EXCEEDED', 421, '4.4.2'],
    ['PROXY_NOT_TRUSTED', 421, '4.7.0'],
  ])('%s → %i %s with the reason', (code, responseCode, enhanced) => {
    const reply = replyFor(new RefusalError(code, 'the reason'));
    expect(reply).toEqual({ responseCode, message: `${enhanced} the reason`, internal: false });
  });

  it.each([
    ['an Error', new Error('ECONNREFUSED 127.0.0.1:6379')],
    ['a string', 'boom'],
    ['undefined', undefined],
  ])('%s → 451 4.3.0 without its detail', (_name, error) => {
    const reply = replyFor(error);
    expect(reply.responseCode).toBe(451);
    expect(reply.message).toMatch(/^4\.3\.0 /);
    expect(reply.message).not.toContain('ECONNREFUSED');
    expect(reply.internal).toBe(true);
  });

  it('names the queue id when accepted', () => {
    expect(acceptedReply('abc123')).toBe('2.0.0 queued as abc123');
  });
});
