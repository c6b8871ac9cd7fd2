import { SMTPServer } from 'smtp-server';

/** A plain SMTP server that keeps what it receives: where a relay MTA sends its bounces. */
export interface BounceSink {
  port: number;
  /** Each message received, as its raw text. */
  messages: string[];
  close(): Promise<void>;
}

export async function startBounceSink(): Promise<BounceSink> {
  const messages: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        messages.push(Buffer.concat(chunks).toString());
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  if (typeof address !== 'object' || address === null) throw new Error('sink has no port');
  return {
    port: address.port,
    messages,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Resolves with `probe`'s first defined value; rejects after `timeoutMs` naming `what`. */
export async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
