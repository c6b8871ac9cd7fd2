import { connect, type Socket } from 'node:net';
import { type MalwareAnswer, parseClamdReply } from './scan-answers.ts';
import type { ClamavSettings } from './scan-settings-schema.ts';
import { createScannerRun, describe, type ScannerRun } from './scanner-run.ts';

/** clamd's replies are one short line; past this a peer is no clamd. Bytes. */
const MAX_REPLY_BYTES = 4096;

/** A connection to clamd, on its Unix socket or TCP port. */
export function connectClamd(settings: ClamavSettings): Socket {
  return settings.socket !== undefined
    ? connect({ path: settings.socket })
    : connect({ host: settings.host ?? '127.0.0.1', port: settings.port ?? 3310 });
}

/**
 * One message through clamd's INSTREAM command (clamd(8)): `zINSTREAM\0`, then each chunk
 * as a 4-byte big-endian length and its bytes, then a zero length; clamd answers one
 * NUL-terminated line. Each chunk goes to the socket as it is (header and chunk in one
 * writev, no copy), and the next is asked for only once the socket has taken it, so a slow
 * clamd holds the DATA stream back instead of the gateway buffering the message.
 *
 * clamd may answer before the end: past its StreamMaxLength it replies `INSTREAM size limit
 * exceeded. ERROR` and closes. The reply is read all along, so that answer is taken as
 * soon as it comes and the rest of the message is no longer sent (a client that only
 * reads after its last write sees a broken pipe instead).
 */
export function startClamdScan(settings: ClamavSettings): ScannerRun<MalwareAnswer> {
  const socket = connectClamd(settings);
  const reply: Buffer[] = [];
  let replyBytes = 0;
  const { run, settle } = createScannerRun<MalwareAnswer>('clamd', settings.timeout, {
    write(chunk) {
      // A failed write stays pending: the socket's error handler settles the answer.
      return new Promise((resolve) => {
        const length = Buffer.allocUnsafe(4);
        length.writeUInt32BE(chunk.length, 0);
        socket.cork();
        socket.write(length);
        socket.write(chunk, (err) => {
          if (!err) resolve();
        });
        socket.uncork();
      });
    },
    end: () => socket.write(Buffer.alloc(4)),
    close: () => socket.destroy(),
    unavailable: (reason) => ({ kind: 'unavailable', reason }),
  });
  const answered = () => settle(parseClamdReply(Buffer.concat(reply).toString('utf8')));
  socket.on('data', (data: Buffer) => {
    reply.push(data);
    replyBytes += data.length;
    if (data.includes(0) || replyBytes > MAX_REPLY_BYTES) answered();
  });
  // clamd closes after its answer; a close without one is no answer either.
  let sending = false;
  /** A broken pipe mid-message, being explained by a PING. */
  let broken = false;
  socket.on('end', answered);
  socket.on('close', () => {
    if (!broken) answered();
  });
  socket.on('error', (err) => {
    // A reply already read (the size limit) explains a broken pipe that follows it.
    if (replyBytes > 0) return answered();
    if (!sending) return settle({ kind: 'unavailable', reason: `clamd: ${describe(err)}` });
    // Node drops a reply that arrives with a broken pipe. clamd closes an INSTREAM mid-message
    // only past its StreamMaxLength (or when it dies): a clamd that still answers PING said
    // "size limit exceeded".
    broken = true;
    void pingClamd(settings, settings.timeout).then((problem) =>
      settle(
        problem === null
          ? { kind: 'too-large', reason: 'clamd: stopped reading mid-message (INSTREAM size limit exceeded)' }
          : { kind: 'unavailable', reason: `clamd: ${describe(err)}` },
      ),
    );
  });
  socket.on('connect', () => {
    sending = true;
  });
  socket.write('zINSTREAM\0');
  return run;
}

/** Whether clamd answers PING with PONG, within `timeout` ms: for readiness. */
export function pingClamd(settings: ClamavSettings, timeout: number): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = connectClamd(settings);
    let text = '';
    const done = (problem: string | null) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(problem);
    };
    const timer = setTimeout(() => done(`no answer within ${timeout} ms`), timeout);
    socket.on('data', (data: Buffer) => {
      text += data.toString('utf8');
      if (text.includes('\0'))
        done(text.startsWith('PONG') ? null : `answered ${JSON.stringify(text.replace(/\0/g, ''))}`);
    });
    socket.on('error', (err) => done(describe(err)));
    socket.on('close', () => done(text.startsWith('PONG') ? null : 'closed without PONG'));
    socket.write('zPING\0');
  });
}
