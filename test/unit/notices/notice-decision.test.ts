import { describe, expect, it } from 'vitest';
import type { LoopHeaders } from '../../../src/notices/loop-headers.ts';
import {
  decideNotice,
  envelopeSenderAuthenticated,
  isAutomaticSender,
  type NoticeDecision,
} from '../../../src/notices/notice-decision.ts';
import type { NotifySender } from '../../../src/notices/notice-settings-schema.ts';
import type { AttachmentEntry, MessageRecord } from '../../../src/record/message-record.ts';

const entry = (patch: Partial<AttachmentEntry>): AttachmentEntry => ({
  entry: 0,
  part: 1,
  fileName: 'invoice.pdf',
  contentType: 'application/pdf',
  detectedType: 'application/pdf',
  size: 10,
  sha256: 'a'.repeat(64),
  workspace: 'ws-a',
  state: 'uploaded',
  reason: null,
  documentIdentifier: 'doc-1',
  attempts: 1,
  warnings: [],
  updatedAt: '2026-11-28T10:00:01.000Z',
  ...patch,
});

const unsupported = entry({
  entry: 9,
  fileName: 'logo.gif',
  workspace: null,
  state: 'skipped',
  reason: 'unsupported type image/gif (declared image/gif)',
  documentIdentifier: null,
});
const inlineImage = entry({
  entry: 8,
  workspace: null,
  state: 'skipped',
  reason: 'inline image referenced by the message body',
  documentIdentifier: null,
});

/** SPF passed for the envelope sender's domain: the record of an authenticated sender. */
const authenticated: MessageRecord['authentication'] = {
  fromDomain: 'supplier.example',
  results: { spf: { result: 'pass', domain: 'supplier.example' }, dkim: [], dmarc: null, arc: null },
  verdicts: { aligned: { outcome: 'pass', via: 'spf', domain: 'supplier.example' } },
};

const record = (patch: Partial<MessageRecord> = {}): MessageRecord => ({
  id: 'm1',
  messageId: 'abc@supplier.example',
  receivedAt: '2026-11-28T10:00:00.000Z',
  remoteAddress: '192.0.2.1',
  envelope: { mailFrom: 'ap@supplier.example', rcptTo: ['invoices@ingest.example'] },
  from: 'ap@supplier.example',
  subject: 'Invoice 1001',
  sourceEmail: 'http://127.0.0.1:8025/v1/messages/m1/raw',
  sourceEmailAddress: 'ap@supplier.example',
  size: 1000,
  workspaces: [{ identifier: 'ws-a', admitted: true, reason: null }],
  authentication: null,
  status: 'enqueued',
  attachments: [entry({})],
  ...patch,
});

const plain: LoopHeaders = { autoSubmitted: null, precedence: null, listFields: [] };
const modes =
  (table: Record<string, NotifySender>) =>
  (workspace: string): NotifySender =>
    table[workspace] ?? 'never';
const always = modes({ 'ws-a': 'always' });
const onProblem = modes({ 'ws-a': 'onProblem' });

const outcome = (decision: NoticeDecision) =>
  decision.send ? `send ${decision.kind}` : `none: ${decision.reason}`;

describe('decideNotice: who gets a notice', () => {
  const held = (reason: NonNullable<MessageRecord['hold']>['reason'], patch: Partial<MessageRecord> = {}) =>
    record({
      state: 'held',
      hold: { reason, workspace: 'ws-a' },
      attachments: [entry({ state: 'held', documentIdentifier: null })],
      ...patch,
    });

  it.each<[string, MessageRecord, (workspace: string) => NotifySender, LoopHeaders | null, string]>([
    // The workspace's setting.
    ['never (the default): nothing', record(), modes({}), plain, 'none: not_wanted'],
    ['always, every document taken: a receipt', record(), always, plain, 'send receipt'],
    ['onProblem, every document taken: nothing', record(), onProblem, plain, 'none: not_wanted'],
    [
      'onProblem, one rejected: a problem notice',
      record({ attachments: [entry({}), entry({ entry: 1, state: 'rejected' })] }),
      onProblem,
      plain,
      'send problem',
    ],
    [
      'onProblem, one failed after every attempt',
      record({ attachments: [entry({ state: 'failed' })] }),
      onProblem,
      plain,
      'send problem',
    ],
    [
      'onProblem, an attached file of an unsupported type skipped',
      record({ attachments: [entry({}), unsupported] }),
      onProblem,
      plain,
      'send problem',
    ],
    [
      'onProblem, only an inline image skipped: nothing',
      record({ attachments: [entry({}), inlineImage] }),
      onProblem,
      plain,
      'none: not_wanted',
    ],
    [
      'a document still uploading: not yet',
      record({ attachments: [entry({ state: 'rejected' }), entry({ entry: 1, state: 'uploading' })] }),
      always,
      plain,
      'none: not_settled',
    ],
    // RFC 3834: no answer to what is itself automatic.
    [
      'null envelope sender',
      record({ envelope: { mailFrom: null, rcptTo: [] } }),
      always,
      plain,
      'none: null_sender',
    ],
    [
      'empty envelope sender',
      record({ envelope: { mailFrom: '', rcptTo: [] } }),
      always,
      plain,
      'none: null_sender',
    ],
    [
      'MAILER-DAEMON',
      record({ envelope: { mailFrom: 'MAILER-DAEMON@mx.example', rcptTo: [] } }),
      always,
      plain,
      'none: automatic_sender',
    ],
    [
      'Auto-Submitted: auto-replied',
      record(),
      always,
      { ...plain, autoSubmitted: 'auto-replied' },
      'none: auto_submitted',
    ],
    [
      'Auto-Submitted: auto-generated',
      record(),
      always,
      { ...plain, autoSubmitted: 'auto-generated' },
      'none: auto_submitted',
    ],
    [
      'Auto-Submitted: no (a person sent it)',
      record(),
      always,
      { ...plain, autoSubmitted: 'no' },
      'send receipt',
    ],
    ['Precedence: bulk', record(), always, { ...plain, precedence: 'bulk' }, 'none: bulk_precedence'],
    ['Precedence: junk', record(), always, { ...plain, precedence: 'junk' }, 'none: bulk_precedence'],
    ['Precedence: list', record(), always, { ...plain, precedence: 'list' }, 'none: bulk_precedence'],
    ['Precedence: first-class', record(), always, { ...plain, precedence: 'first-class' }, 'send receipt'],
    ['List-Id', record(), always, { ...plain, listFields: ['list-id'] }, 'none: mailing_list'],
    [
      'List-Unsubscribe',
      record(),
      always,
      { ...plain, listFields: ['list-unsubscribe'] },
      'none: mailing_list',
    ],
    ['the header could not be read', record(), always, null, 'none: header_unreadable'],
    // Held mail.
    [
      'held, sender authenticated',
      held('sender_not_listed', { authentication: authenticated }),
      always,
      plain,
      'send held',
    ],
    [
      'held, onProblem: a hold is a problem',
      held('sender_not_listed', { authentication: authenticated }),
      onProblem,
      plain,
      'send held',
    ],
    [
      'held, no authentication on the record (backscatter)',
      held('sender_not_listed'),
      always,
      plain,
      'none: unauthenticated_sender',
    ],
    [
      'held, authentication failed',
      held('sender_not_listed', {
        authentication: {
          ...authenticated,
          results: { ...authenticated.results, spf: { result: 'fail', domain: 'supplier.example' } },
          verdicts: { aligned: { outcome: 'fail', reason: 'SPF failed' } },
        },
      }),
      always,
      plain,
      'none: unauthenticated_sender',
    ],
    [
      'held as malware',
      held('malware', { authentication: authenticated }),
      always,
      plain,
      'none: held_as_malware_or_spam',
    ],
    [
      'held as spam',
      held('spam', { authentication: authenticated }),
      always,
      plain,
      'none: held_as_malware_or_spam',
    ],
    [
      'released after a malware hold',
      record({ state: 'released', hold: { reason: 'malware', workspace: 'ws-a' } }),
      always,
      plain,
      'none: held_as_malware_or_spam',
    ],
    [
      'released after a sender hold: told as any message',
      record({ state: 'released', hold: { reason: 'sender_not_listed', workspace: 'ws-a' } }),
      always,
      plain,
      'send receipt',
    ],
    [
      'discarded',
      record({ state: 'discarded', hold: { reason: 'sender_not_listed', workspace: 'ws-a' } }),
      always,
      plain,
      'none: discarded',
    ],
    // Mail that is no supplier's.
    [
      'kept for the postmaster',
      record({ keptFor: 'postmaster', attachments: [] }),
      always,
      plain,
      'none: postmaster',
    ],
    ['replayed from a file', record({ via: 'replay' }), always, plain, 'none: replayed'],
  ])('%s', (_name, message, modeOf, headers, expected) => {
    expect(outcome(decideNotice({ record: message, modeOf, headers }))).toBe(expected);
  });

  it('lists the documents of the workspaces it speaks for and the attached files skipped, in record order', () => {
    const message = record({
      attachments: [
        entry({ entry: 0, workspace: 'ws-a', fileName: 'a.pdf' }),
        entry({ entry: 1, workspace: 'ws-b', fileName: 'b.pdf', state: 'rejected' }),
        inlineImage,
        unsupported,
      ],
      workspaces: [
        { identifier: 'ws-a', admitted: true, reason: null },
        { identifier: 'ws-b', admitted: true, reason: null },
      ],
    });
    const decision = decideNotice({
      record: message,
      modeOf: modes({ 'ws-a': 'onProblem' }),
      headers: plain,
    });
    expect(decision).toMatchObject({
      send: true,
      kind: 'problem',
      to: 'ap@supplier.example',
      workspaces: ['ws-a'],
    });
    expect(decision.send && decision.documents.map((d) => d.fileName)).toEqual(['a.pdf', 'logo.gif']);
  });

  it('speaks for one workspace only when the other does not notify', () => {
    const message = record({
      attachments: [
        entry({ entry: 0, workspace: 'ws-a' }),
        entry({ entry: 1, workspace: 'ws-b', state: 'failed' }),
      ],
    });
    expect(outcome(decideNotice({ record: message, modeOf: onProblem, headers: plain }))).toBe(
      'none: not_wanted',
    );
    expect(
      outcome(decideNotice({ record: message, modeOf: modes({ 'ws-b': 'onProblem' }), headers: plain })),
    ).toBe('send problem');
  });
});

describe('isAutomaticSender', () => {
  it.each([
    ['MAILER-DAEMON@mx.example', true],
    ['mailer-daemon@mx.example', true],
    ['owner-invoices@lists.example', true],
    ['invoices-request@lists.example', true],
    ['ap@supplier.example', false],
    ['requests@supplier.example', false],
  ])('%s: %s', (address, expected) => {
    expect(isAutomaticSender(address)).toBe(expected);
  });
});

describe('envelopeSenderAuthenticated', () => {
  const mailFrom = (address: string) => ({ mailFrom: address, rcptTo: [] });
  it.each<[string, Pick<MessageRecord, 'envelope' | 'authentication'>, boolean]>([
    [
      'SPF passed for its domain',
      { envelope: mailFrom('ap@supplier.example'), authentication: authenticated },
      true,
    ],
    [
      'SPF passed for another domain, the verdict for another From domain',
      { envelope: mailFrom('ap@forged.example'), authentication: authenticated },
      false,
    ],
    [
      'DKIM verdict passed for the From domain it shares',
      {
        envelope: mailFrom('ap@Supplier.Example'),
        authentication: {
          ...authenticated,
          results: { ...authenticated.results, spf: { result: 'softfail', domain: 'supplier.example' } },
          verdicts: { dmarc: { outcome: 'pass', via: 'dkim', domain: 'supplier.example' } },
        },
      },
      true,
    ],
    [
      'no authentication recorded',
      { envelope: mailFrom('ap@supplier.example'), authentication: null },
      false,
    ],
    ['null sender', { envelope: { mailFrom: null, rcptTo: [] }, authentication: authenticated }, false],
  ])('%s: %s', (_name, message, expected) => {
    expect(envelopeSenderAuthenticated(message)).toBe(expected);
  });
});
