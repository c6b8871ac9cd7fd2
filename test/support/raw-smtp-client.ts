import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterEach } from 'vitest';
import type { Reply } from './smtp-session.ts';

/**
 * A bare TCP client for attacks on the SMTP edge: it writes exactly the bytes it is given
 * (no dot-stuffing, no line-ending repair), each write flushed to the socket before the next
 * (so a test decides what arrives in which TCP segment), and it keeps the whole transcript,
 * including lines that are not SMTP replies (a PROXY refusal's `* BAD`).
 */
export class RawSmtpClient {
  readonly socket: Socket;
  /** Resolves when the connection is closed, by either side. */
  readonly closed: Promise<void>;
  /** Everything the server sent, as latin1. */
  transcript = '';
  private buffer = '';
  private replies: Reply[] = [];
  private waiting: Array<(reply: Reply) => void> = [];
  private isClosed = false;

  constructor(port: number, host = '127.0.0.1') {
    this.socket = connect(port, host);
    this.socket.setNoDelay(true);
    this.socket.on('error', () => undefined);
    this.socket.on('data', (chunk: Buffer) => this.receive(chunk.toString('latin1')));
    this.closed = once(this.socket, 'close').then(() => {
      this.isClosed = true;
      for (const resolve of this.waiting.splice(0)) resolve({ code: 0, text: '(connection closed)' });
    });
  }

  get hasClosed(): boolean {
    return this.isClosed;
  }

  /** The next reply the server sends (asked for or not); code 0 once the connection closed. */
  reply(): Promise<Reply> {
    const ready = this.replies.shift();
    if (ready) return Promise.resolve(ready);
    if (this.isClosed) return Promise.resolve({ code: 0, text: '(connection closed)' });
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Write the bytes; resolves once they are handed to the kernel (or the socket is gone). */
  async write(bytes: string | Buffer): Promise<void> {
    if (!this.socket.writable) return;
    const data = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes;
    await new Promise<void>((resolve) => {
      try {
        this.socket.write(data, () => resolve());
      } catch {
        // The server hung up between the check and the write.
        resolve();
      }
    });
  }

  /** One command line (CRLF added) and its reply. */
  async command(line: string): Promise<Reply> {
    await this.write(`${line}\r\n`);
    return this.reply();
  }

  /** Every reply that is still to come until the server closes the connection. */
  async rest(): Promise<Reply[]> {
    const replies: Reply[] = [];
    for (;;) {
      const reply = await this.reply();
      if (reply.code === 0) return replies;
      replies.push(reply);
    }
  }

  /**
   * QUIT and wait for the server to close: smtp-server forgets the connection on QUIT before
   * it hangs up, so a test that opens the next one right after is not counted against
   * maxClients for this one. Destroyed after 2 s if the server does not close (a bound, not
   * a wait: a server that answers closes at once).
   */
  async close(): Promise<void> {
    if (this.isClosed) return;
    if (this.socket.writable) this.socket.end('QUIT\r\n');
    const timer = setTimeout(() => this.socket.destroy(), 2000);
    await this.closed;
    clearTimeout(timer);
  }

  private receive(text: string): void {
    this.transcript += text;
    this.buffer += text;
    for (;;) {
      const match = /^(?:\d{3}-[^\r\n]*\r\n)*\d{3}(?: [^\r\n]*)?\r\n/.exec(this.buffer);
      if (!match) {
        // A line that is no reply (`* BAD …`) is kept in the transcript only.
        const line = /^[^\d][^\r\n]*\r?\n/.exec(this.buffer);
        if (!line) return;
        this.buffer = this.buffer.slice(line[0].length);
        continue;
      }
      this.buffer = this.buffer.slice(match[0].length);
      const lines = match[0].trimEnd().split('\r\n');
      const reply = { code: Number(lines.at(-1)?.slice(0, 3)), text: lines.join('\n') };
      const resolve = this.waiting.shift();
      if (resolve) resolve(reply);
      else this.replies.push(reply);
    }
  }
}

/**
 * A factory of clients for one test file, each closed after every test (registers the
 * afterEach hook), so a failed test leaves no socket open; `closeAll()` closes them sooner.
 */
export function clientsClosedAfterEach(): ((port: number) => RawSmtpClient) & { closeAll(): Promise<void> } {
  const open: RawSmtpClient[] = [];
  const closeAll = async () => {
    await Promise.all(open.splice(0).map((item) => item.close()));
  };
  afterEach(closeAll);
  const create = (port: number) => {
    const created = new RawSmtpClient(port);
    open.push(created);
    return created;
  };
  return Object.assign(create, { closeAll });
}
