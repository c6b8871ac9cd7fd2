import { connect, type Socket } from 'node:net';
import { afterEach } from 'vitest';

export interface Reply {
  /** 0 once the connection is closed with no reply left. */
  code: number;
  /** The whole reply, lines joined with \n, codes included (`250 2.0.0 queued as …`). */
  text: string;
}

const connectionClosed: Reply = { code: 0, text: '(connection closed)' };

/** One complete reply at the start of the buffer: `NNN-` lines, then the `NNN ` line. */
const REPLY = /^(?:\d{3}-[^\r\n]*\r\n)*\d{3}(?: [^\r\n]*)?\r\n/;
/** A line that is no reply (a PROXY refusal's `* BAD …`): kept in the transcript only. */
const NOT_A_REPLY = /^[^\d][^\r\n]*\r?\n/;

/**
 * A raw SMTP client for tests: every reply is read exactly as the server sent it, so tests
 * can assert the reply codes and texts of the README's table of replies. It writes exactly the
 * bytes it is given (no dot-stuffing or line-ending repair, except in `data()`), each write flushed
 * to the socket before the next (so an attack test decides what arrives in which TCP segment), and
 * it keeps the whole transcript, including lines that are not SMTP replies.
 */
export class SmtpSession {
  readonly socket: Socket;
  /** Resolves when the connection is closed, by either side. */
  readonly closed: Promise<void>;
  /** Everything the server sent, as latin1 (one character per byte). */
  transcript = '';
  private buffer = '';
  private replies: Reply[] = [];
  private waiting: Array<(reply: Reply) => void> = [];
  private hasClosed = false;

  /** `localAddress`: the client's own address, another of 127/8 to look like another client. */
  constructor(port: number, host = '127.0.0.1', localAddress?: string) {
    this.socket = connect({ port, host, ...(localAddress ? { localAddress } : {}) });
    this.socket.setNoDelay(true);
    this.socket.on('error', () => undefined);
    this.socket.on('data', (chunk: Buffer) => this.receive(chunk.toString('latin1')));
    // Not events.once: it rejects on 'error', and a reset connection must still count as closed.
    this.closed = new Promise((resolve) => {
      this.socket.once('close', () => {
        this.hasClosed = true;
        for (const waiter of this.waiting.splice(0)) waiter(connectionClosed);
        resolve();
      });
    });
  }

  get isClosed(): boolean {
    return this.hasClosed;
  }

  /** The next reply the server sends (the greeting first, asked for or not); code 0 once closed. */
  reply(): Promise<Reply> {
    const ready = this.replies.shift();
    if (ready) return Promise.resolve(ready);
    if (this.hasClosed) return Promise.resolve(connectionClosed);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /**
   * Write a Buffer byte for byte, a string as UTF-8 (commands with SMTPUTF8 addresses);
   * resolves once they are handed to the kernel (or the socket is gone).
   */
  async write(bytes: string | Buffer): Promise<void> {
    if (!this.socket.writable) return;
    const data = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
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

  /** DATA with a dot-stuffed body, line ends made CRLF; resolves with the reply to the final dot. */
  async data(message: string | Buffer): Promise<Reply> {
    const go = await this.command('DATA');
    if (go.code !== 354) return go;
    const text = (Buffer.isBuffer(message) ? message.toString('latin1') : message).replace(/\r?\n/g, '\r\n');
    const stuffed = text.replace(/^\./gm, '..');
    const ending = stuffed.endsWith('\r\n') ? '.\r\n' : '\r\n.\r\n';
    await this.write(Buffer.from(stuffed + ending, 'latin1'));
    return this.reply();
  }

  /**
   * After 354, send a whole payload as is (dataPayload's: dot-stuffed, final dot included);
   * resolves with the reply to the final dot. Built beforehand, so sending costs no work here.
   */
  async sendPayload(payload: Buffer): Promise<Reply> {
    await this.write(payload);
    return this.reply();
  }

  /** End a DATA body sent with write() (already dot-stuffed); resolves with the reply to the final dot. */
  async endData(): Promise<Reply> {
    await this.write('\r\n.\r\n');
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
    if (this.hasClosed) return;
    if (this.socket.writable) this.socket.end('QUIT\r\n');
    const timer = setTimeout(() => this.socket.destroy(), 2000);
    await this.closed;
    clearTimeout(timer);
  }

  private receive(text: string): void {
    this.transcript += text;
    this.buffer += text;
    for (;;) {
      const match = REPLY.exec(this.buffer);
      if (!match) {
        const line = NOT_A_REPLY.exec(this.buffer);
        if (!line) return;
        this.buffer = this.buffer.slice(line[0].length);
        continue;
      }
      this.buffer = this.buffer.slice(match[0].length);
      this.deliver(parseReply(match[0]));
    }
  }

  private deliver(reply: Reply): void {
    const resolve = this.waiting.shift();
    if (resolve) resolve(reply);
    else this.replies.push(reply);
  }
}

/** A complete reply as received (latin1, CRLF line ends) to its code and its UTF-8 text. */
function parseReply(received: string): Reply {
  const lines = Buffer.from(received, 'latin1').toString('utf8').trimEnd().split('\r\n');
  return { code: Number(lines.at(-1)?.slice(0, 3)), text: lines.join('\n') };
}

/**
 * A factory of sessions for one test file, each closed after every test (registers the
 * afterEach hook), so a failed test leaves no socket open; `closeAll()` closes them sooner.
 */
export function clientsClosedAfterEach(): ((port: number) => SmtpSession) & { closeAll(): Promise<void> } {
  const open: SmtpSession[] = [];
  const closeAll = async () => {
    await Promise.all(open.splice(0).map((session) => session.close()));
  };
  afterEach(closeAll);
  const create = (port: number) => {
    const created = new SmtpSession(port);
    open.push(created);
    return created;
  };
  return Object.assign(create, { closeAll });
}

/**
 * `message` as DATA carries it: a dot doubled at the start of every line (RFC 5321 4.5.2), then
 * the final dot. Every other byte is kept, bare line ends included, for messages that test them.
 */
export function dataPayload(message: Buffer): Buffer {
  const stuffed = Buffer.from(message.toString('latin1').replace(/^\./gm, '..'), 'latin1');
  const end = stuffed.subarray(-2).toString('latin1') === '\r\n' ? '.\r\n' : '\r\n.\r\n';
  return Buffer.concat([stuffed, Buffer.from(end, 'latin1')]);
}

export interface Delivery {
  from?: string;
  to: string[];
  message: string | Buffer;
}

/** One whole transaction on a new connection; returns every reply in order. */
export async function deliver(
  port: number,
  delivery: Delivery,
): Promise<{ greeting: Reply; mail: Reply; rcpt: Reply[]; data: Reply | null }> {
  const session = new SmtpSession(port);
  try {
    const greeting = await session.reply();
    await session.command('EHLO client.test');
    const mail = await session.command(`MAIL FROM:<${delivery.from ?? 'sender@acme.example'}>`);
    const rcpt: Reply[] = [];
    for (const to of delivery.to) rcpt.push(await session.command(`RCPT TO:<${to}>`));
    const data = rcpt.some((reply) => reply.code === 250) ? await session.data(delivery.message) : null;
    return { greeting, mail, rcpt, data };
  } finally {
    await session.close();
  }
}

/** The queue id in a `250 2.0.0 queued as <id>` reply. */
export function queuedId(reply: Reply | null): string {
  const match = /queued as ([0-9a-z]+)/.exec(reply?.text ?? '');
  if (!match?.[1]) throw new Error(`not a queued reply: ${reply?.text}`);
  return match[1];
}
