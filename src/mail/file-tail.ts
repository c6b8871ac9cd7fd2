/**
 * The last bytes of a part as it streams past, for a check that reads a file's end (a PDF's
 * trailer, detect/pdf-encryption.ts). It holds the chunks themselves, never copies them while
 * they pass: the chunks of the current block, and the previous block once the current one
 * reached `bytes`, so at most about twice `bytes` is held and only the end is joined.
 */
export class FileTail {
  readonly #bytes: number;
  #previous: Buffer[] = [];
  #current: Buffer[] = [];
  #currentBytes = 0;

  /** @param bytes how many of the last bytes to keep at least */
  constructor(bytes: number) {
    this.#bytes = bytes;
  }

  push(chunk: Buffer): void {
    this.#current.push(chunk);
    this.#currentBytes += chunk.length;
    if (this.#currentBytes < this.#bytes) return;
    this.#previous = this.#current;
    this.#current = [];
    this.#currentBytes = 0;
  }

  /** The last `bytes` bytes seen (all of them when fewer passed). */
  bytes(): Buffer {
    const joined = Buffer.concat([...this.#previous, ...this.#current]);
    return joined.subarray(Math.max(0, joined.length - this.#bytes));
  }
}
