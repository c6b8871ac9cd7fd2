import { connect } from 'node:net';

/** Resolves once the MTA `name` on `port` answers with its 220 greeting (at most 15 s). */
export async function waitForGreeting(port: number, name: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const greeted = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('data', (chunk) => {
        socket.end('QUIT\r\n');
        resolve(chunk.toString().startsWith('220'));
      });
      socket.once('error', () => resolve(false));
    });
    if (greeted) return;
    if (Date.now() > deadline) throw new Error(`${name} did not greet on port ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Resolves once process `pid` has exited (at most 10 s); a pid that is not a number is gone. */
export async function waitForExit(pid: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Number.isInteger(pid) && Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A private MTA instance in front of the gateway, as the relay tests drive it (postfix.ts, exim.ts). */
export interface TestMta<Queued> {
  /** Where clients submit mail (SMTP). */
  port: number;
  dir: string;
  /** Attempt every deferred message now, whatever its retry time. */
  flush(): Promise<void>;
  /** The messages in the queue, as the MTA lists them. */
  queue(): Promise<Queued[]>;
  /** Resolves once the queue holds exactly one message, deferred, for exactly `recipients`. */
  waitForDeferred(recipients: string[], timeoutMs?: number): Promise<void>;
  /** The instance's log, as written so far. */
  log(): Promise<string>;
  /** Resolves once the log has a line matching `pattern`; rejects after `timeoutMs` with the log. */
  waitForLog(pattern: RegExp, timeoutMs?: number): Promise<string>;
  stop(): Promise<void>;
}

/** TestMta.waitForLog over an instance's `log`. */
export async function waitForLogLine(
  log: () => Promise<string>,
  pattern: RegExp,
  timeoutMs = 60_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await log();
    if (pattern.test(text)) return text;
    if (Date.now() > deadline) throw new Error(`no log line matched ${pattern} in ${timeoutMs} ms:\n${text}`);
    await new Promise((done) => setTimeout(done, 200));
  }
}

/** Resolves once `read` gives what `want` is, compared as JSON; rejects after `timeoutMs` with what it gave. */
export async function waitForQueue(
  read: () => Promise<unknown>,
  want: unknown,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const wanted = JSON.stringify(want);
  for (;;) {
    const queued = JSON.stringify(await read());
    if (queued === wanted) return;
    if (Date.now() > deadline) throw new Error(`queue is ${queued}, not ${wanted}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}
