import { describe, expect, it } from 'vitest';
import { leafRole, normalizeContentId, normalizeDisposition } from '../../../src/mail/describe-leaf.ts';

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
