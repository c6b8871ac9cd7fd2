/**
 * The stream names in the directory of a Compound File (MS-CFB), as far as the first bytes
 * of the file reach. DOC and XLS are both compound files, and file-type calls both `cfb`:
 * what tells them apart is the name of the main stream, `WordDocument` for Word and
 * `Workbook` (or `Book` for Excel 5) for Excel.
 *
 * The directory is read through the file's own structure (header, FAT, directory chain)
 * rather than by searching the bytes for the UTF-16 names, because a Word document's text
 * is itself UTF-16 and may well contain the word "Workbook".
 */

// MS-CFB 2.2: the header is one 512-byte block; these are its field offsets.
const SIGNATURE = Buffer.from('d0cf11e0a1b11ae1', 'hex');
const SECTOR_SHIFT_OFFSET = 30;
const FIRST_DIRECTORY_SECTOR_OFFSET = 48;
const FIRST_DIFAT_SECTOR_OFFSET = 68;
const DIFAT_OFFSET = 76;
/** The header holds the locations of the first 109 FAT sectors; later ones need DIFAT sectors. */
const HEADER_DIFAT_ENTRIES = 109;
/** MS-CFB 2.6.1: a directory entry is 128 bytes, its name at most 32 UTF-16 code units. */
const ENTRY_SIZE = 128;
const NAME_BYTES = 64;
/** MS-CFB 2.6.1: where an entry's stream size is (8 bytes; version 3 files use the low 4). */
const SIZE_OFFSET = 120;
const END_OF_CHAIN = 0xfffffffe;
/** Sector numbers at or above this are markers (free, end of chain, FAT, DIFAT), not sectors. */
const MAX_REGULAR_SECTOR = 0xfffffffa;

/** Entry types that carry a name (storage, stream, root); 0 is an unused slot. */
const NAMED_ENTRY_TYPES = new Set([1, 2, 5]);

export interface CfbDirectory {
  /** Names of the entries read. */
  names: string[];
  /** Whether the whole directory was within the bytes given; if not, `names` may miss some. */
  complete: boolean;
  /** The largest stream size an entry read states, in bytes: a file cannot hold a stream larger than itself. */
  largestStream: number;
}

/** The directory entries found in `head`, or null when `head` is not a compound file. */
export function cfbDirectory(head: Buffer): CfbDirectory | null {
  if (head.length < 512 || !head.subarray(0, SIGNATURE.length).equals(SIGNATURE)) return null;
  const shift = head.readUInt16LE(SECTOR_SHIFT_OFFSET);
  // Version 3 files use 512-byte sectors, version 4 files 4096-byte ones; nothing else exists.
  if (shift !== 9 && shift !== 12) return null;
  const sectorSize = 1 << shift;
  const sectorOffset = (sector: number) => (sector + 1) * sectorSize;

  const perFatSector = sectorSize / 4;
  const fatSectors = fatSectorList(head, sectorSize, sectorOffset);
  const nextSector = (sector: number): number | null => {
    const fatSector = fatSectors[Math.floor(sector / perFatSector)];
    if (fatSector === undefined || fatSector >= MAX_REGULAR_SECTOR) return null;
    const at = sectorOffset(fatSector) + (sector % perFatSector) * 4;
    return at + 4 <= head.length ? head.readUInt32LE(at) : null;
  };

  const names: string[] = [];
  let largestStream = 0;
  // Each sector is read once, so a FAT whose chain loops ends the walk instead of repeating it.
  const seen = new Set<number>();
  let sector: number | null = head.readUInt32LE(FIRST_DIRECTORY_SECTOR_OFFSET);
  while (sector !== null && sector < MAX_REGULAR_SECTOR && !seen.has(sector)) {
    seen.add(sector);
    const start = sectorOffset(sector);
    if (start + sectorSize > head.length) break;
    for (let at = start; at < start + sectorSize; at += ENTRY_SIZE) {
      const name = entryName(head, at);
      if (name === null) continue;
      names.push(name);
      const size =
        shift === 9 ? head.readUInt32LE(at + SIZE_OFFSET) : Number(head.readBigUInt64LE(at + SIZE_OFFSET));
      largestStream = Math.max(largestStream, size);
    }
    sector = nextSector(sector);
  }
  return { names, complete: sector === END_OF_CHAIN, largestStream };
}

/**
 * Where the FAT sectors are: the first 109 are listed in the header, the rest in a chain of
 * DIFAT sectors (MS-CFB 2.5), each listing one sector's worth less one and then the next.
 * Only what lies within `head` is read, each DIFAT sector once.
 */
function fatSectorList(head: Buffer, sectorSize: number, sectorOffset: (sector: number) => number): number[] {
  const list: number[] = [];
  for (let i = 0; i < HEADER_DIFAT_ENTRIES; i++) list.push(head.readUInt32LE(DIFAT_OFFSET + i * 4));
  const perSector = sectorSize / 4 - 1;
  const seen = new Set<number>();
  let difat = head.readUInt32LE(FIRST_DIFAT_SECTOR_OFFSET);
  while (difat < MAX_REGULAR_SECTOR && !seen.has(difat)) {
    seen.add(difat);
    const start = sectorOffset(difat);
    if (start + sectorSize > head.length) break;
    for (let i = 0; i < perSector; i++) list.push(head.readUInt32LE(start + i * 4));
    difat = head.readUInt32LE(start + perSector * 4);
  }
  return list;
}

function entryName(head: Buffer, at: number): string | null {
  if (!NAMED_ENTRY_TYPES.has(head.readUInt8(at + 66))) return null;
  // The length counts the terminating NUL, in bytes.
  const length = head.readUInt16LE(at + NAME_BYTES);
  if (length < 2 || length > NAME_BYTES || length % 2 !== 0) return null;
  return head.toString('utf16le', at, at + length - 2);
}
