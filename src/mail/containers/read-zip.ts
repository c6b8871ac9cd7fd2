import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { type ContainedEntry, ContainerError, type ContainerLimits } from './contained-file.ts';

/**
 * The files of a ZIP archive, one at a time, read with yauzl from bytes already in memory.
 *
 * yauzl reads the central directory and checks each entry against it: an entry that
 * inflates to more than its stated size fails (validateEntrySizes), so the stated sizes can
 * be held to the bounds before anything is inflated. The bounds against zip bombs: the count
 * of entries, each file's size, the ratio of each entry's size to its compressed size, and
 * the total the files come to. Breaking the first or the last two makes the whole archive a
 * ContainerError (it is skipped); an oversized or encrypted file is skipped on its own.
 */
export async function* readZip(bytes: Buffer, limits: ContainerLimits): AsyncGenerator<ContainedEntry> {
  const zip = await open(bytes);
  try {
    if (zip.entryCount > limits.maxEntries) {
      throw new ContainerError(
        `it holds ${zip.entryCount} entries, more than the ${limits.maxEntries} this server reads`,
      );
    }
    const entries = await listEntries(zip);
    let total = 0;
    for (const entry of entries) {
      const ratio = entry.compressedSize === 0 ? 0 : entry.uncompressedSize / entry.compressedSize;
      if (ratio > limits.maxRatio) {
        throw new ContainerError(
          `"${entry.fileName}" inflates ${Math.round(ratio)} times its compressed size, more than the ${limits.maxRatio} times this server takes (a zip bomb)`,
        );
      }
      if (entry.uncompressedSize <= limits.maxFileSize && !entry.isEncrypted())
        total += entry.uncompressedSize;
    }
    if (total > limits.maxTotalSize) {
      throw new ContainerError(
        `its files come to ${total} bytes, more than the ${limits.maxTotalSize} this server unpacks from one archive`,
      );
    }
    for (const entry of entries) {
      const name = entry.fileName;
      if (entry.isEncrypted()) {
        yield { name, size: entry.uncompressedSize, skip: 'encrypted in the archive, so it cannot be read' };
      } else if (entry.uncompressedSize > limits.maxFileSize) {
        yield {
          name,
          size: entry.uncompressedSize,
          skip: `larger than the ${limits.maxFileSize} bytes this server takes per file`,
        };
      } else if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
        yield {
          name,
          size: entry.uncompressedSize,
          skip: `compressed by method ${entry.compressionMethod}, which this server does not read`,
        };
      } else {
        yield { name, declaredType: null, bytes: await readEntry(zip, entry) };
      }
    }
  } finally {
    zip.close();
  }
}

function open(bytes: Buffer): Promise<ZipFile> {
  return new Promise((resolve, reject) => {
    // Entries are read one at a time, when asked for; names are checked for `..` and absolute paths.
    yauzl.fromBuffer(
      bytes,
      { lazyEntries: true, validateEntrySizes: true, strictFileNames: false },
      (err, zip) => {
        if (err) reject(new ContainerError(`it is not a readable ZIP archive: ${err.message}`));
        else resolve(zip);
      },
    );
  });
}

/** The file entries (not directories) of the central directory, which entryCount has bounded. */
function listEntries(zip: ZipFile): Promise<Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: Entry[] = [];
    zip.on('entry', (entry: Entry) => {
      if (!entry.fileName.endsWith('/')) entries.push(entry);
      zip.readEntry();
    });
    zip.once('end', () => resolve(entries));
    zip.once('error', (err: Error) => reject(new ContainerError(`its directory is damaged: ${err.message}`)));
    zip.readEntry();
  });
}

function readEntry(zip: ZipFile, entry: Entry): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (err, stream) => {
      if (err) {
        reject(new ContainerError(`"${entry.fileName}" cannot be read: ${err.message}`));
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.once('end', () => resolve(Buffer.concat(chunks)));
      stream.once('error', (streamErr: Error) =>
        reject(new ContainerError(`"${entry.fileName}" cannot be read: ${streamErr.message}`)),
      );
    });
  });
}
