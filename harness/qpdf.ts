import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Debian's qpdf, which writes PDFs as real tools do: encrypted ones (`--encrypt`), PDF 1.5
 * files with object streams and a cross-reference stream, linearized ones. Tests make their
 * PDFs with it rather than write PDF syntax by hand. Installs the package when missing, as
 * the other suites do for redis-server and Postfix.
 */
export function ensureQpdf(): void {
  if (existsSync('/usr/bin/qpdf')) return;
  execFileSync('apt-get', ['install', '-y', '-qq', 'qpdf'], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    stdio: 'ignore',
  });
}

/**
 * `qpdf [options] in.pdf out.pdf` on `input`, returning the written file. `options` are
 * qpdf's own, e.g. `['--encrypt', 'user', 'owner', '256', '--']`.
 */
export async function qpdf(input: Buffer, options: readonly string[]): Promise<Buffer> {
  ensureQpdf();
  const dir = await mkdtemp(join(tmpdir(), 'qpdf-'));
  try {
    const source = join(dir, 'in.pdf');
    const target = join(dir, 'out.pdf');
    await writeFile(source, input);
    await run('qpdf', [...options, source, target]);
    return await readFile(target);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Whether qpdf reads `input` as encrypted (`qpdf --is-encrypted` exits 0, else 2). */
export async function qpdfSaysEncrypted(input: Buffer): Promise<boolean> {
  ensureQpdf();
  const dir = await mkdtemp(join(tmpdir(), 'qpdf-'));
  try {
    const source = join(dir, 'in.pdf');
    await writeFile(source, input);
    try {
      await run('qpdf', ['--is-encrypted', source]);
      return true;
    } catch (err) {
      if ((err as { code?: unknown }).code === 2) return false;
      throw err;
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * An unencrypted one-page PDF whose page shows `text` (a PDF string literal's content: keep
 * parentheses balanced), its content stream followed by `paddingLines` comment lines so the
 * file can be made larger than what the walk keeps of its ends. The objects are the
 * committed sample's; qpdf checks and rewrites the file, leaving the stream uncompressed so
 * the text stands in the file's bytes as written.
 */
export async function pdfShowing(text: string, paddingLines = 0): Promise<Buffer> {
  const content = `BT /F1 12 Tf 20 40 Td (${text}) Tj ET\n${'% padding\n'.repeat(paddingLines)}`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let file = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(Buffer.byteLength(file, 'latin1'));
    file += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(file, 'latin1');
  const rows = offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('');
  file += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${rows}`;
  file += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return qpdf(Buffer.from(file, 'latin1'), ['--compress-streams=n']);
}
