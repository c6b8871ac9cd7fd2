import { describe, expect, it } from 'vitest';
import { composeTestMail, parseHeaderField, queueIdOf } from '../../../src/cli/test-mail.ts';

describe('parseHeaderField', () => {
  it.each([
    { text: 'X-Ticket: 4711', field: { key: 'X-Ticket', value: '4711' } },
    { text: 'X-Empty:', field: { key: 'X-Empty', value: '' } },
    { text: 'X-Colons: a: b: c', field: { key: 'X-Colons', value: 'a: b: c' } },
    { text: '  X-Spaced  :  v  ', field: { key: 'X-Spaced', value: 'v' } },
  ])('$text → $field', ({ text, field }) => {
    expect(parseHeaderField(text)).toEqual(field);
  });

  it.each([
    { text: 'X-Ticket', problem: 'expected "Name: value"' },
    { text: ': value', problem: 'expected "Name: value"' },
    { text: 'X Ticket: 1', problem: '"X Ticket" is not a header field name' },
    { text: 'X-Ticket\u00e9: 1', problem: 'is not a header field name' },
    { text: 'X-Inject: a\r\nBcc: victim@example.org', problem: 'the value of X-Inject has a line break' },
  ])('refuses $text', ({ text, problem }) => {
    const result = parseHeaderField(text);
    expect('problem' in result ? result.problem : '').toContain(problem);
  });
});

describe('composeTestMail', () => {
  const base = {
    from: 'a@example.org',
    to: ['b@example.org'],
    cc: [],
    subject: 'S',
    headers: [],
    attach: [],
  };

  it('says what it is when given no body', () => {
    expect(composeTestMail({ ...base, attach: ['/tmp/x/invoice.pdf'] })).toEqual({
      from: 'a@example.org',
      to: ['b@example.org'],
      subject: 'S',
      text: 'Sent with ingest-gateway send: 1 attachment(s).',
      attachments: [{ path: '/tmp/x/invoice.pdf', filename: 'invoice.pdf' }],
    });
  });

  it('keeps every recipient, every header in order, and both bodies', () => {
    const mail = composeTestMail({
      ...base,
      to: ['b@example.org', 'c@example.org'],
      cc: ['d@example.org'],
      headers: [
        { key: 'X-Tag', value: 'one' },
        { key: 'X-Tag', value: 'two' },
      ],
      body: 'plain',
      html: '<p>rich</p>',
    });
    expect(mail).toMatchObject({
      to: ['b@example.org', 'c@example.org'],
      cc: ['d@example.org'],
      headers: [
        { key: 'X-Tag', value: 'one' },
        { key: 'X-Tag', value: 'two' },
      ],
      text: 'plain',
      html: '<p>rich</p>',
    });
  });

  it('sends only the HTML body when only --html is given', () => {
    const mail = composeTestMail({ ...base, html: '<p>only</p>' });
    expect(mail.html).toBe('<p>only</p>');
    expect(mail.text).toBeUndefined();
  });
});

describe('queueIdOf', () => {
  it.each([
    { reply: '250 2.0.0 queued as 0mwu6m2gw0tce6w7lks', id: '0mwu6m2gw0tce6w7lks' },
    { reply: '250 2.0.0 Ok: queued as 4F1x2', id: null },
    { reply: '250 OK id=1rAbc-000123-4X', id: null },
  ])('$reply → $id', ({ reply, id }) => {
    expect(queueIdOf(reply)).toBe(id);
  });
});
