import { beforeAll, describe, expect, it } from 'vitest';
import { sampleFile } from '../../../../harness/messages.ts';
import { pdfShowing, qpdf, qpdfSaysEncrypted } from '../../../../harness/qpdf.ts';
import { isEncryptedPdf } from '../../../../src/mail/detect/pdf-encryption.ts';

/** The whole file as both of its ends, as the walk has it for a part shorter than what it keeps. */
const whole = (file: Buffer) => ({ head: file, tail: file, tailStart: 0 });

/** Only the first and last `bytes` of the file, as the walk keeps them of a large part. */
function ends(file: Buffer, bytes: number) {
  const tailStart = Math.max(0, file.length - bytes);
  return { head: file.subarray(0, bytes), tail: file.subarray(tailStart), tailStart };
}

const ENCRYPT = ['--encrypt', 'user', 'owner'];
const WEAK = ['--allow-weak-crypto'];

// Every variant is made by qpdf from the committed sample, and qpdf's own --is-encrypted
// says what the detector must say.
const variants: ReadonlyArray<[string, string[], boolean]> = [
  ['rewritten, unencrypted', [], false],
  ['PDF 1.5 object streams (cross-reference stream), unencrypted', ['--object-streams=generate'], false],
  ['linearized, unencrypted', ['--linearize'], false],
  ['RC4 40-bit', [...WEAK, ...ENCRYPT, '40', '--'], true],
  ['RC4 128-bit', [...WEAK, ...ENCRYPT, '128', '--use-aes=n', '--'], true],
  ['AES-128', [...ENCRYPT, '128', '--use-aes=y', '--'], true],
  ['AES-256', [...ENCRYPT, '256', '--'], true],
  ['AES-256 with an empty user password', ['--encrypt', '', 'owner', '256', '--'], true],
  [
    'AES-256, object streams (the key in the cross-reference stream)',
    ['--object-streams=generate', ...ENCRYPT, '256', '--'],
    true,
  ],
  ['AES-256, linearized (the key in the first-page trailer)', ['--linearize', ...ENCRYPT, '256', '--'], true],
  [
    'AES-256, linearized with object streams',
    ['--linearize', '--object-streams=generate', ...ENCRYPT, '256', '--'],
    true,
  ],
  [
    'RC4 128-bit, empty user password, object streams',
    [...WEAK, '--object-streams=generate', '--encrypt', '', 'owner', '128', '--use-aes=n', '--'],
    true,
  ],
];

describe('isEncryptedPdf on PDFs written by qpdf', () => {
  it.each(variants)('%s (qpdf %s) → encrypted %s', async (_case, options, encrypted) => {
    const file = await qpdf(sampleFile('sample.pdf'), options);
    expect(await qpdfSaysEncrypted(file)).toBe(encrypted);
    expect(isEncryptedPdf(whole(file))).toBe(encrypted);
  });

  it('says no for a PDF without startxref (cut short)', async () => {
    const file = await qpdf(sampleFile('sample.pdf'), [...ENCRYPT, '256', '--']);
    const cut = file.subarray(0, file.lastIndexOf('startxref'));
    expect(isEncryptedPdf(whole(cut))).toBe(false);
  });
});

describe('isEncryptedPdf: "/Encrypt" on a page is not the key', () => {
  // The page's text stands uncompressed in the last bytes of the file, next to the real
  // trailer: a search of the file's end for "/Encrypt" would call these encrypted.
  const page = '/Encrypt 6 0 R trailer << /Encrypt 6 0 R >> startxref';

  it.each<[string, string[]]>([
    ['classic cross-reference table', ['--compress-streams=n']],
    ['cross-reference stream', ['--object-streams=generate', '--compress-streams=n']],
  ])('%s', async (_case, options) => {
    const file = await qpdf(await pdfShowing(page), options);
    const end = file.subarray(-4096).toString('latin1');
    expect(end).toContain('/Encrypt 6 0 R');
    expect(await qpdfSaysEncrypted(file)).toBe(false);
    expect(isEncryptedPdf(whole(file))).toBe(false);
  });
});

describe('isEncryptedPdf from the two ends of a large PDF', () => {
  const KEPT = 256 * 1024;
  let large: Buffer;
  beforeAll(async () => {
    // About 1 MB of page content, left uncompressed, between the two ends.
    large = await pdfShowing('Invoice 1', 100_000);
    expect(large.length).toBeGreaterThan(3 * KEPT);
  });

  it.each<[string, string[], boolean]>([
    ['unencrypted', ['--compress-streams=n'], false],
    ['AES-256', ['--compress-streams=n', ...ENCRYPT, '256', '--'], true],
    [
      'AES-256, cross-reference stream',
      ['--object-streams=generate', '--compress-streams=n', ...ENCRYPT, '256', '--'],
      true,
    ],
    [
      'AES-256, linearized (startxref points into the head)',
      ['--linearize', '--compress-streams=n', ...ENCRYPT, '256', '--'],
      true,
    ],
    [
      'RC4 128-bit, linearized with a cross-reference stream',
      [
        ...WEAK,
        '--linearize',
        '--object-streams=generate',
        '--compress-streams=n',
        ...ENCRYPT,
        '128',
        '--use-aes=n',
        '--',
      ],
      true,
    ],
  ])('%s (qpdf %s) → encrypted %s', async (_case, options, encrypted) => {
    const file = await qpdf(large, options);
    expect(file.length).toBeGreaterThan(3 * KEPT);
    expect(await qpdfSaysEncrypted(file)).toBe(encrypted);
    expect(isEncryptedPdf(ends(file, KEPT))).toBe(encrypted);
  });
});
