import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { SMTPServer } from 'smtp-server';

/**
 * The Node floor of the benchmark: smtp-server reading each message's DATA to its end and
 * throwing it away, with no parsing and no storage. What it accepts it counts (the 250s), so
 * the benchmark checks the load on the server's side too.
 *
 * Given a Redis URL it is the floor of storing once instead: every chunk of DATA as it comes
 * written into a hash of its own message (HSET, one field per chunk, pipelined), the 250 given
 * once Redis has acknowledged them all; still no parsing, no hashing, no queue.
 *
 *   node bench/peers/drain-server.ts [port] [redis URL]
 *
 * Run as its own process: prints `{"port": N}` once listening; answers each `count` line on
 * stdin with `{"accepted": N}`; closes on `close` or at the end of stdin.
 */

export interface DrainServer {
  readonly server: SMTPServer;
  /** Messages answered 250 so far. */
  accepted(): number;
  listen(port: number): Promise<number>;
  close(): Promise<void>;
}

export function createDrainServer(store?: Redis): DrainServer {
  let accepted = 0;
  let stored = 0;
  const server = new SMTPServer({
    // As the gateway runs under the benchmark: no AUTH, no TLS, and no wait before the banner
    // (smtp.greetingDelay 0 in the bench configuration; Haraka runs without early_talker), so
    // one message per connection compares the servers, not a 100 ms timer.
    greetingDelay: 0,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    size: 64 * 1024 * 1024,
    // The load opens 20 connections at once; smtp-server's default allows any number.
    onData(stream, _session, callback) {
      if (store !== undefined) {
        stored += 1;
        const key = `drain:{${stored}}:raw`;
        const writes: Promise<unknown>[] = [];
        stream.on('data', (chunk: Buffer) => {
          writes.push(store.hset(key, String(writes.length), chunk));
        });
        stream.on('end', () => {
          Promise.all(writes).then(
            () => {
              accepted += 1;
              callback(null);
            },
            (err: unknown) => callback(err instanceof Error ? err : new Error(String(err))),
          );
        });
        return;
      }
      stream.on('end', () => {
        accepted += 1;
        callback(null);
      });
      stream.resume();
    },
  });
  server.on('error', (err) => {
    process.stderr.write(`drain server: ${err.message}\n`);
  });
  return {
    server,
    accepted: () => accepted,
    listen(port) {
      return new Promise((resolve, reject) => {
        server.server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          const address = server.server.address();
          resolve(typeof address === 'object' && address ? address.port : port);
        });
      });
    },
    close() {
      return new Promise<void>((resolve) => server.close(() => resolve())).then(() => {
        store?.disconnect();
      });
    },
  };
}

if (import.meta.main) {
  const redisUrl = process.argv[3];
  const drain = createDrainServer(redisUrl === undefined ? undefined : new Redis(redisUrl));
  const port = await drain.listen(Number(process.argv[2] ?? 0));
  process.stdout.write(`${JSON.stringify({ port })}\n`);
  const commands = createInterface({ input: process.stdin });
  for await (const line of commands) {
    if (line === 'count') process.stdout.write(`${JSON.stringify({ accepted: drain.accepted() })}\n`);
    if (line === 'close') break;
  }
  await drain.close();
}
