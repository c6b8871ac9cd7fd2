import { readFileSync } from 'node:fs';

const fixtures = new URL('../fixtures/', import.meta.url);

/** A committed sample file (test/fixtures). */
export function sampleFile(name: string): Buffer {
  return readFileSync(new URL(name, fixtures));
}
