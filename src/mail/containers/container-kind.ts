import { cfbDirectory } from '../detect/cfb-directory.ts';
import type { ContainerKind } from './contained-file.ts';
import { isTnef } from './read-tnef.ts';

/** Declared types and name endings that say "Outlook item" when the bytes cannot tell. */
const OUTLOOK_TYPES = new Set(['application/vnd.ms-outlook', 'application/x-msg']);

/**
 * Which container a part of no supported type is, from its first bytes
 * (docs/architecture.md, "Attachment selection"): TNEF by its signature, whatever it is called; an
 * Outlook item by the stream names of its compound file (`__substg1.0_…`), or by its name or type
 * when the directory lies beyond the head; a ZIP archive when its bytes show plain ZIP (DOCX, XLSX
 * and ODT are zips that file-type names, and are documents).
 */
export function containerKind(evidence: {
  head: Buffer;
  bytesType: string | null;
  declaredType: string;
  fileName: string | null;
}): ContainerKind | null {
  const { head, bytesType } = evidence;
  if (isTnef(head)) return 'tnef';
  if (bytesType === 'application/zip') return 'zip';
  if (bytesType === 'application/x-cfb') {
    const directory = cfbDirectory(head);
    if (
      directory?.names.some((name) => name.startsWith('__substg1.0_') || name === '__properties_version1.0')
    ) {
      return 'outlook-item';
    }
    if (directory?.complete !== true && namedOutlookItem(evidence.declaredType, evidence.fileName)) {
      return 'outlook-item';
    }
  }
  return null;
}

function namedOutlookItem(declaredType: string, fileName: string | null): boolean {
  return OUTLOOK_TYPES.has(declaredType) || /\.msg\s*$/i.test(fileName ?? '');
}
