import { describe, expect, it } from 'vitest';
import { bodyDocumentName } from '../../../src/mail/body-document.ts';

describe('bodyDocumentName', () => {
  it.each<[string | null, 'html' | 'txt', string]>([
    ['Invoice 42', 'html', 'Invoice 42.html'],
    ['Order 2024/117', 'txt', 'Order 2024-117.txt'],
    ['..\\..\\etc\\passwd', 'html', '-..-etc-passwd.html'],
    ['Fwd: invoice.pdf', 'html', 'Fwd: invoice.pdf.html'],
    ['Rechnung M\u00e4rz \u202eLMTH.exe', 'html', 'Rechnung M\u00e4rz LMTH.exe.html'],
    [null, 'html', 'message.html'],
    ['', 'txt', 'message.txt'],
    ['  ...  ', 'html', 'message.html'],
    ['\u202e', 'html', 'message.html'],
  ])('%j as %s is %j', (subject, type, expected) => {
    expect(bodyDocumentName(subject, type)).toBe(expected);
  });

  it('cuts a long subject and keeps the extension', () => {
    const name = bodyDocumentName('Ü'.repeat(300), 'html');
    expect(name.endsWith('.html')).toBe(true);
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(200);
  });
});
