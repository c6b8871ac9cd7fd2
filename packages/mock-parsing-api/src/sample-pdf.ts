/**
 * A plain (uncompressed) PDF 1.4 with `pages` empty pages and a correct xref table, for the
 * mock's page-count and conversion rules (README.md: a PDF over 10 pages is parsed with a
 * warning, one without `%%EOF` fails conversion). `label` makes the bytes differ between calls (a
 * comment line, ignored by readers); `endMarker: false` leaves out the final `%%EOF`, as a
 * file cut short in transfer would.
 */
export function pdfWithPages(pages: number, options: { label?: string; endMarker?: boolean } = {}): Buffer {
  const kids = Array.from({ length: pages }, (_, index) => `${index + 3} 0 R`).join(' ');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`,
    ...Array.from({ length: pages }, () => '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 100] >>'),
  ];
  let text = `%PDF-1.4\n%${options.label ?? 'generated'}\n`;
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(Buffer.byteLength(text, 'latin1'));
    text += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(text, 'latin1');
  text += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) text += `${String(offset).padStart(10, '0')} 00000 n \n`;
  text += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n`;
  if (options.endMarker ?? true) text += '%%EOF\n';
  return Buffer.from(text, 'latin1');
}
