import { describe, expect, it } from 'vitest';
import { type EnvelopeChoice, replayEnvelope } from '../../../../src/cli/replay/replay-envelope.ts';

const served = new Set(['documents@ingest.test', 'invoices@ingest.test']);
const choice: EnvelopeChoice = {
  separatorSender: null,
  isServed: (address) => served.has(address.toLowerCase()),
};

const head = (...lines: string[]) =>
  Buffer.from(`${lines.join('\r\n')}\r\n\r\nbody\r\nTo: late@ingest.test\r\n`);

describe('replayEnvelope', () => {
  it.each([
    {
      name: 'the ingest addresses among To and Cc',
      head: head(
        'From: Ann <ann@acme.example>',
        'To: bob@acme.example, documents@ingest.test',
        'Cc: Invoices@Ingest.Test',
      ),
      envelope: { mailFrom: 'ann@acme.example', rcptTo: ['documents@ingest.test', 'Invoices@Ingest.Test'] },
    },
    {
      name: 'Delivered-To and X-Original-To before To',
      head: head('Delivered-To: invoices@ingest.test', 'From: ann@acme.example', 'To: documents@ingest.test'),
      envelope: { mailFrom: 'ann@acme.example', rcptTo: ['invoices@ingest.test'] },
    },
    {
      name: 'Return-Path before From',
      head: head(
        'Return-Path: <bounces@acme.example>',
        'From: ann@acme.example',
        'To: documents@ingest.test',
      ),
      envelope: { mailFrom: 'bounces@acme.example', rcptTo: ['documents@ingest.test'] },
    },
    {
      name: 'the null sender of a bounce',
      head: head('Return-Path: <>', 'From: MAILER-DAEMON@mx.example', 'To: documents@ingest.test'),
      envelope: { mailFrom: null, rcptTo: ['documents@ingest.test'] },
    },
    {
      name: 'no ingest address: the first address, for RCPT to refuse',
      head: head('From: ann@acme.example', 'To: bob@acme.example, carol@acme.example'),
      envelope: { mailFrom: 'ann@acme.example', rcptTo: ['bob@acme.example'] },
    },
    {
      name: 'no address at all, and no header past the header block',
      head: head('From: ann@acme.example', 'Subject: none'),
      envelope: { mailFrom: 'ann@acme.example', rcptTo: [] },
    },
    {
      name: 'folded headers and groups, LF line ends',
      head: Buffer.from(
        'From: ann@acme.example\nTo: team: documents@ingest.test,\n  x@acme.example;\n\nbody\n',
      ),
      envelope: { mailFrom: 'ann@acme.example', rcptTo: ['documents@ingest.test'] },
    },
  ])('$name', ({ head: block, envelope }) => {
    expect(replayEnvelope(block, choice)).toEqual(envelope);
  });

  it('takes the mbox separator sender when there is no Return-Path, and the options over everything', () => {
    const block = head('From: ann@acme.example', 'To: documents@ingest.test');
    expect(replayEnvelope(block, { ...choice, separatorSender: 'sender@acme.example' }).mailFrom).toBe(
      'sender@acme.example',
    );
    expect(replayEnvelope(block, { ...choice, to: ['x@ingest.test'], from: 'y@acme.example' })).toEqual({
      mailFrom: 'y@acme.example',
      rcptTo: ['x@ingest.test'],
    });
  });
});
