/** The part of mbox-reader (postalsys/mbox-reader) the replay command uses. */
declare module 'mbox-reader' {
  import type { Readable } from 'node:stream';

  export interface MboxMessage {
    /** The sender of the message's `From ` separator line. */
    returnPath: string | undefined;
    /** The message without its separator line, `>From ` lines unescaped, lines joined with LF. */
    content: Buffer;
  }

  /** The messages of an mbox, one at a time: the next is read when the loop asks for it. */
  export function mboxReader(source: Readable, options?: { gz?: boolean }): AsyncGenerator<MboxMessage>;
}
