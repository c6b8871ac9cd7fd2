import { Writable } from 'node:stream';

/**
 * One scanner reading one message as it streams (docs/architecture.md, "Scanning"): `input`
 * takes the raw bytes the DATA stream hands it, `answer` is what the scanner said.
 */
export interface ScannerRun<Answer> {
  /**
   * Takes the message chunk by chunk, each passed on to the scanner before the next is asked
   * for (its backpressure is the scanner's). Never emits an error: once the scanner has
   * answered or failed it is destroyed, and whoever feeds it stops (see tee-stream.ts).
   */
  readonly input: Writable;
  /** Settles once, never rejects: the scanner's answer, or why there is none. */
  readonly answer: Promise<Answer>;
  /** When the end of the message was handed to the scanner (performance.now()), for the wait it adds. */
  endedAt(): number | null;
  /** Stops the scan (the message was refused meanwhile); the answer says it was not scanned. */
  abort(): void;
}

export interface ScannerConnection<Answer> {
  /** Hands one chunk to the scanner; resolves once the scanner has taken it. */
  write(chunk: Buffer): Promise<void>;
  /** The message has ended: tell the scanner so (it answers then). */
  end(): void;
  /** Releases the connection; called once, when the answer is settled. */
  close(): void;
  /** The answer of a scanner that did not answer, with the reason. */
  unavailable(reason: string): Answer;
}

export interface ScannerRunControl<Answer> {
  run: ScannerRun<Answer>;
  /** The scanner's answer (or failure): the first call wins, later ones are ignored. */
  settle(answer: Answer): void;
}

/**
 * The part both scanners share: a Writable over a scanner connection, and a deadline. The
 * deadline (`timeout` ms) runs only while the gateway waits on the scanner: for it to take
 * a chunk, and for its answer after the last one; a sender that is slow to send is not the
 * scanner's fault (smtp.socketTimeout bounds that).
 */
export function createScannerRun<Answer>(
  name: string,
  timeout: number,
  connection: ScannerConnection<Answer>,
): ScannerRunControl<Answer> {
  let resolve: (answer: Answer) => void = () => undefined;
  const answer = new Promise<Answer>((done) => {
    resolve = done;
  });
  let settled = false;
  let timer: NodeJS.Timeout | undefined;
  let endedAt: number | null = null;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(
      () => settle(connection.unavailable(`${name} did not answer within ${timeout} ms`)),
      timeout,
    );
  };
  const disarm = () => clearTimeout(timer);

  const input = new Writable({
    // One chunk at a time: the next waits until the scanner has taken this one.
    highWaterMark: 0,
    write(chunk: Buffer, _encoding, callback) {
      if (settled) return callback();
      arm();
      connection.write(chunk).then(
        () => {
          if (!settled) disarm();
          callback();
        },
        (err: unknown) => {
          settle(connection.unavailable(`${name}: ${describe(err)}`));
          callback();
        },
      );
    },
    final(callback) {
      if (!settled) {
        endedAt = performance.now();
        arm();
        connection.end();
      }
      callback();
    },
  });
  // Destroyed with an error by whoever feeds it (the source failed): the scan is over.
  input.on('error', (err) => settle(connection.unavailable(`${name}: ${describe(err)}`)));

  function settle(result: Answer): void {
    if (settled) return;
    settled = true;
    disarm();
    resolve(result);
    connection.close();
    if (!input.destroyed) input.destroy();
  }

  return {
    run: {
      input,
      answer,
      endedAt: () => endedAt,
      abort: () => settle(connection.unavailable(`${name}: scan stopped, the message was refused`)),
    },
    settle,
  };
}

/** An error's message (Node's system errors name their code in it), for the record and the log; never a stack. */
export function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
