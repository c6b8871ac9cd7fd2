import { createReadStream } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { mboxReader } from 'mbox-reader';

/** One message to replay, read from a file when it is its turn. */
export interface MailSource {
  /** The file, and for a message of an mbox `#n`, its place in the file from 1. */
  readonly label: string;
  /** The first bytes of the message, enough for its header block (at most `headBytes`). */
  head(): Promise<Buffer>;
  /** The message's bytes, from its first header line, as the file keeps them. */
  open(): Readable;
  /** The sender on an mbox message's `From ` separator line, the envelope sender it was delivered with. */
  readonly separatorSender: string | null;
}

/** The separator line every mbox starts with (RFC 4155). */
const MBOX_START = Buffer.from('From ');
const LINE_END = Buffer.from('\n');

/**
 * The messages of the given paths, in order: a file starting with `From ` is an mbox (each of
 * its messages in turn), any other file one message (.eml), and a folder every `*.eml` file
 * below it, in name order. An mbox is read as the loop goes, one message at a time.
 */
export async function* mailSources(paths: readonly string[], headBytes: number): AsyncGenerator<MailSource> {
  for (const path of paths) {
    if ((await stat(path)).isDirectory()) {
      for (const file of await emlFilesBelow(path)) yield fileSource(file, headBytes);
    } else if (await startsWith(path, MBOX_START)) {
      yield* mboxSources(path);
    } else {
      yield fileSource(path, headBytes);
    }
  }
}

async function emlFilesBelow(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.toLowerCase().endsWith('.eml'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

async function startsWith(path: string, prefix: Buffer): Promise<boolean> {
  return (await readHead(path, prefix.length)).equals(prefix);
}

async function readHead(path: string, bytes: number): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await file.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

function fileSource(path: string, headBytes: number): MailSource {
  return {
    label: path,
    head: () => readHead(path, headBytes),
    open: () => createReadStream(path),
    separatorSender: null,
  };
}

async function* mboxSources(path: string): AsyncGenerator<MailSource> {
  let n = 0;
  for await (const message of mboxReader(createReadStream(path))) {
    n += 1;
    // The line end before the blank line that separates it from the next: the message's own.
    const content = Buffer.concat([message.content, LINE_END]);
    yield {
      label: `${path}#${n}`,
      head: () => Promise.resolve(content),
      open: () => Readable.from([content]),
      separatorSender:
        message.returnPath && message.returnPath !== 'MAILER-DAEMON' ? message.returnPath : null,
    };
  }
}
