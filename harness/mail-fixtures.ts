import { createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { MAX_HEADER_BYTES, type WalkLimits } from '../src/mail/walk-limits.ts';

const mailDir = new URL('../test/fixtures/mail/', import.meta.url);
const filesDir = new URL('../test/fixtures/files/', import.meta.url);

/** A fixture message from test/fixtures/mail, as the stream the SMTP layer would hand over. */
export function mailFixture(name: string): Readable {
  return createReadStream(new URL(name, mailDir));
}

/** The raw text of a fixture message. */
export function mailFixtureText(name: string): string {
  return readFileSync(new URL(name, mailDir), 'latin1');
}

/** A sample file from test/fixtures/files. */
export function fileFixture(name: string): Buffer {
  return readFileSync(new URL(name, filesDir));
}

export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The gateway's defaults (src/config/schema.ts), for tests that are not about limits. */
export const defaultLimits: WalkLimits = {
  maxDepth: 3,
  maxParts: 100,
  maxHeaderBytes: MAX_HEADER_BYTES,
  maxPartSize: 20_000_000,
};
