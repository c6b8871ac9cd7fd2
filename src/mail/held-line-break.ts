/**
 * A leaf's first body chunk when it is one line break alone, held until what follows shows
 * whose it is. RFC 2046 5.1.1 gives the line break before a boundary to the boundary, and
 * mailsplit does so, except for a part whose body is empty: there it hands the line break
 * that ends the blank line after the headers to the body and starts the boundary chunk
 * with `--`. Taken as it came, an empty part before another part was a 2-byte file, while
 * the same part last (whose boundary chunk keeps its line break) was empty.
 */
export class HeldLineBreak {
  private held: Buffer | null = null;

  /** Hold a leaf's first body chunk if it is one line break alone; returns whether it was held. */
  hold(chunk: Buffer): boolean {
    if (!isLineBreak(chunk)) return false;
    this.held = Buffer.from(chunk);
    return true;
  }

  /** What follows is the leaf's (more body, a new node, the end): the held line break, if any, is its body. */
  release(): Buffer | null {
    const held = this.held;
    this.held = null;
    return held;
  }

  /**
   * A boundary line follows: the held line break is the leaf's body when the boundary brings
   * a line break of its own, else it was the boundary's and is dropped.
   */
  beforeBoundary(boundary: Buffer): Buffer | null {
    const held = startsWithLineBreak(boundary) ? this.held : null;
    this.held = null;
    return held;
  }
}

function isLineBreak(chunk: Buffer): boolean {
  return (
    (chunk.length === 1 && chunk[0] === 0x0a) ||
    (chunk.length === 2 && chunk[0] === 0x0d && chunk[1] === 0x0a)
  );
}

function startsWithLineBreak(chunk: Buffer): boolean {
  return chunk[0] === 0x0d || chunk[0] === 0x0a;
}
