import { describe, expect, it } from 'vitest';
import {
  exclusionOf,
  leafRole,
  normalizeContentId,
  normalizeDisposition,
} from '../../../src/mail/describe-leaf.ts';

describe('leafRole', () => {
  it.each<[string, 'inline' | 'attachment' | null, string | null, 'body' | 'candidate']>([
    ['text/plain', null, null, 'body'],
    ['text/html', null, null, 'body'],
    ['text/plain', 'inline', null, 'body'],
    ['text/html', 'inline', null, 'body'],
    ['text/plain', 'attachment', null, 'candidate'],
    ['text/html', 'attachment', null, 'candidate'],
    ['text/plain', null, 'notes.txt', 'candidate'],
    ['text/html', 'inline', 'page.html', 'candidate'],
    ['text/calendar', null, null, 'candidate'],
    ['text/enriched', 'inline', null, 'candidate'],
    ['application/pdf', 'inline', null, 'candidate'],
    ['image/png', null, null, 'candidate'],
  ])('%s, disposition %s, name %s → %s', (declaredType, disposition, fileName, role) => {
    expect(leafRole(declaredType, disposition, fileName)).toBe(role);
  });
});

describe('normalizeDisposition', () => {
  it.each<[string | false, 'inline' | 'attachment' | null]>([
    [false, null],
    ['', null],
    ['inline', 'inline'],
    ['attachment', 'attachment'],
    ['form-data', 'attachment'],
    ['x-unknown', 'attachment'],
  ])('%j → %s', (value, disposition) => {
    expect(normalizeDisposition(value)).toBe(disposition);
  });
});

describe('normalizeContentId', () => {
  it.each<[string, string | null]>([
    ['<logo@acme.example>', 'logo@acme.example'],
    ['  < logo@acme.example >  ', 'logo@acme.example'],
    ['logo@acme.example', 'logo@acme.example'],
    ['<Image001.PNG@01D9C0A1.2B3C4D50>', 'Image001.PNG@01D9C0A1.2B3C4D50'],
    ['', null],
    ['<>', null],
  ])('%j → %s', (value, id) => {
    expect(normalizeContentId(value)).toBe(id);
  });
});

describe('exclusionOf', () => {
  it.each<[string, string[], string | null]>([
    ['application/pdf', ['multipart/mixed'], null],
    ['text/plain', [], null],
    ['message/rfc822', ['multipart/mixed'], null],
    [
      'message/external-body',
      ['multipart/alternative', 'multipart/mixed'],
      'a pointer to content stored elsewhere (message/external-body), not the content',
    ],
    [
      'message/delivery-status',
      ['multipart/report'],
      'a delivery report (message/delivery-status), not a document',
    ],
    [
      'message/delivery-status',
      ['multipart/mixed'],
      'a delivery report (message/delivery-status), not a document',
    ],
    [
      'message/global-delivery-status',
      ['multipart/report'],
      'a delivery report (message/global-delivery-status), not a document',
    ],
    [
      'message/disposition-notification',
      ['multipart/report'],
      'a read receipt (message/disposition-notification), not a document',
    ],
    [
      'text/rfc822-headers',
      ['multipart/report'],
      'the headers of a returned message (text/rfc822-headers), not a document',
    ],
    [
      'message/global-headers',
      [],
      'the headers of a returned message (message/global-headers), not a document',
    ],
    [
      'message/feedback-report',
      ['multipart/report'],
      'an abuse report (message/feedback-report), not a document',
    ],
    [
      'text/plain',
      ['multipart/report'],
      'part of a report (multipart/report) about another message, not a document',
    ],
    [
      'application/pdf',
      ['multipart/mixed', 'multipart/report'],
      'part of a report (multipart/report) about another message, not a document',
    ],
    [
      'message/rfc822',
      ['multipart/report'],
      'a message returned by a report (multipart/report): its attachments are not documents sent to this address',
    ],
  ])('%s inside %j → %s', (declaredType, ancestors, reason) => {
    expect(exclusionOf(declaredType, ancestors)).toBe(reason);
  });
});
