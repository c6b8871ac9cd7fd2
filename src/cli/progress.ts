import type { Output } from './workspace/command-io.ts';

/**
 * How far a long operation is (`failed retry --all`, `workspace sync` over many workspaces),
 * shown on one line of a terminal and rewritten in place. Not on a terminal (a pipe, a file,
 * CI), it writes nothing: a log is no place for carriage returns, and the result lines say
 * what was done anyway.
 */
export interface Progress {
  /**
   * `done` of `total` steps are finished. At `total` the line is cleared: the command prints
   * its result next, on the same stream or on stdout of the same terminal.
   */
  advance(done: number, total: number): void;
  /** Clears the line if it is still shown (the operation ended early, with an error). */
  end(): void;
}

export interface ProgressOptions {
  stream: Output;
  /** Whether the stream is a terminal; the composition root knows (isTTY). */
  terminal: boolean;
  /** What is being done, e.g. "retrying failed uploads". */
  label: string;
}

/** Carriage return, then "erase in line" (ECMA-48 EL 2): the line is rewritten in place. */
const rewriteLine = '\r\u001b[2K';

export function createProgress({ stream, terminal, label }: ProgressOptions): Progress {
  if (!terminal) return { advance: () => undefined, end: () => undefined };
  let shown = false;
  return {
    advance(done, total) {
      shown = done < total;
      stream.write(`${rewriteLine}${label}: ${done}/${total}${shown ? '' : rewriteLine}`);
    },
    end() {
      if (shown) stream.write(rewriteLine);
      shown = false;
    },
  };
}
