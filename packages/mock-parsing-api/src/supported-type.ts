import { extname } from 'node:path';
import { fileTypeFromBuffer } from 'file-type';

/**
 * Whether the mock accepts a file, as the service does for its supported formats: PDF, DOC,
 * DOCX, TXT, RTF, HTML, PNG, JPG, TIFF, ODT, XLS, XLSX (README.md, "Processing").
 * Binary formats by their bytes; text formats, which have no magic number, by the declared
 * content type or the extension. Kept simple on purpose: a fake, not a type detector.
 */

/** file-type's `ext` for the supported binary formats. DOC and XLS are both OLE2 (`cfb`). */
const BINARY_TYPES = new Set(['pdf', 'doc', 'xls', 'cfb', 'docx', 'xlsx', 'odt', 'rtf', 'png', 'jpg', 'tif']);
const TEXT_CONTENT_TYPES = new Set(['text/plain', 'text/html']);
const TEXT_EXTENSIONS = new Set(['.txt', '.html', '.htm']);

export type TypeCheck = { supported: true; type: string } | { supported: false; detail: string };

export async function checkSupportedType(
  bytes: Buffer,
  contentType: string,
  fileName: string,
): Promise<TypeCheck> {
  const detected = await fileTypeFromBuffer(bytes);
  if (detected) {
    return BINARY_TYPES.has(detected.ext)
      ? { supported: true, type: detected.ext }
      : { supported: false, detail: `Unsupported file type: ${detected.mime}.` };
  }
  const declared = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  const extension = extname(fileName).toLowerCase();
  if (TEXT_CONTENT_TYPES.has(declared) || TEXT_EXTENSIONS.has(extension)) {
    return {
      supported: true,
      type: declared === 'text/html' || extension.startsWith('.htm') ? 'html' : 'txt',
    };
  }
  return { supported: false, detail: 'Unsupported file type: the content is not a supported document.' };
}
