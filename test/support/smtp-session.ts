import { once } from 'node:events';
import { connect, type Socket } from 'node:net';

export interface Reply {
  code: number;
  /** The whole reply, lines joined with \n, codes included (`250 2.0.0 queued as …`). */
  text: string;
}

/**
 * A raw SMTP client for tests: every command's reply is read exactly as the server sent it,
 * so tests can assert the reply codes and texts of DESIGN.md.
 */
export class SmtpSession {
  readonly greeting: Promise<Reply>;
  private readonly socket: Socket;
  private buffer = '';
  private waiting: Array<(reply: Reply) => void> = [];
  private replies: Reply[] = [];
  private closed = false;

  constructor(port: number, host = '127.0.0.1') {
    this.socket = connect(port, host);
    this.socket.setEncoding('utf8');
    this.socket.on('data', (text: string) => this.receive(text));
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => {
      this.closed = true;
      for (const resolve of this.waiting.splice(0)) resolve({ code: 0, text: '(connection closed)' });
    });
    this.greeting = this.nextReply();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private receive(text: string): void {
    this.buffer += text;
    for (;;) {
      const match = /^(?:\d{3}-[^\r\n]*\r\n)*\d{3}(?: [^\r\n]*)?\r\n/.exec(this.buffer);
      if (!match) return;
      this.buffer = this.buffer.slice(match[0].length);
      const lines = match[0].trimEnd().split('\r\n');
      const reply = { code: Number(lines.at(-1)?.slice(0, 3)), text: lines.join('\n') };
      const resolve = this.waiting.shift();
      if (resolve) resolve(reply);
      else this.replies.push(reply);
    }
  }

  private nextReply(): Promise<Reply> {
    const ready = this.replies.shift();
    if (ready) return Promise.resolve(ready);
    if (this.closed) return Promise.resolve({ code: 0, text: '(connection closed)' });
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async command(line: string): Promise<Reply> {
    this.socket.write(`${line}\r\n`);
    return this.nextReply();
  }

  /** DATA with a dot-stuffed body; resolves with the reply to the final dot. */
  async data(message: string | Buffer): Promise<Reply> {
    const go = await this.command('DATA');
    if (go.code !== 354) return go;
    const text = (Buffer.isBuffer(message) ? message.toString('latin1') : message).replace(/\r?\n/g, '\r\n');
    const stuffed = text.replace(/^\./gm, '..');
    const ending = stuffed.endsWith('\r\n') ? '.\r\n' : '\r\n.\r\n';
    if (!this.socket.write(Buffer.from(stuffed + ending, 'latin1'))) await once(this.socket, 'drain');
    return this.nextReply();
  }

  /** Send part of a DATA body as is (already dot-stuffed, CRLF line ends). */
  write(bytes: string | Buffer): void {
    this.socket.write(bytes);
  }

  /**
   * After 354, send a whole payload as is (dataPayload's: dot-stuffed, final dot included);
   * resolves with the reply to the final dot. Built beforehand, so sending costs no work here.
   */
  sendPayload(payload: Buffer): Promise<Reply> {
    this.socket.write(payload);
    return this.nextReply();
  }

  /** End a DATA body written with write(); resolves with the reply to the final dot. */
  async endData(): Promise<Reply> {
    this.socket.write('\r\n.\r\n');
    return this.nextReply();
  }

  async close(): Promise<void> {
    if (!this.closed) {
      this.socket.write('QUIT\r\n');
      this.socket.end();
      await once(this.socket, 'close');
    }
  }
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
    const greeting = await session.greeting;
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
