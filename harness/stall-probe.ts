import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseProcStat } from './proc-stat.ts';
import { type Reply, SmtpSession } from './smtp-session.ts';

/**
 * How long the gateway's event loop is held up, measured from outside it: a second SMTP
 * connection sends NOOP, waits for the reply, pauses, and sends the next, keeping the slowest
 * round trip. smtp-server answers NOOP on the loop that also reads every other session's
 * DATA, so a round trip lasts at least as long as any synchronous step the gateway runs while
 * it is in flight. The gateway must run in its own process (harness/daemon-process.ts):
 * an event-loop monitor in the test's process also counts the test's own work of building
 * and sending the message, and fails with busy cores for reasons outside the gateway.
 *
 * A round trip is wall time, so it also counts the gateway's wait for a core: on a machine
 * with every core taken it stretches by however many processes share them. Given the
 * gateway's pid, the probe also reads how much CPU the gateway's main thread (the event loop)
 * used while each NOOP waited (Linux /proc): the work that held the NOOP up, whatever the
 * machine's load. That is what the tests bound.
 */

/**
 * The one timing bound of the tests, in ms of the gateway's main thread's CPU while one NOOP
 * waited: that long means the gateway stalled every other sender. It proves a stall cannot
 * happen, it does not measure speed: the hostile messages cost tens of ms on an idle machine
 * (an unbounded step cost seconds).
 */
export const STALL_BOUND_MS = 2000;

/** Pause between one NOOP's reply and the next NOOP, in ms: a stall longer than this is seen. */
const PROBE_INTERVAL_MS = 10;

export interface StallProbe {
  /** Stops once the round trip in flight is back; resolves with the slowest one, in ms. */
  stop(): Promise<number>;
  /**
   * With the gateway's pid: the most CPU its main thread used while one NOOP waited, in ms
   * (10 ms resolution); NaN without it. Final once stop() has resolved.
   */
  readonly worstBusyMs: number;
}

/** CPU time (user and system) of a process's main thread so far, in ms. */
function mainThreadCpuMs(pid: number): number {
  const { userMs, systemMs } = parseProcStat(readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8'));
  return userMs + systemMs;
}

/**
 * Opens the probe connection to the gateway's SMTP port and starts the NOOP round trips;
 * with `pid`, the gateway's process, it also reads the CPU each round trip cost the gateway.
 */
export async function startStallProbe(port: number, pid?: number): Promise<StallProbe> {
  const session = new SmtpSession(port);
  await expectCode(session.reply(), 220, 'greeting');
  await expectCode(session.command('EHLO probe.test'), 250, 'EHLO');
  let running = true;
  let worst = 0;
  let worstBusy = pid === undefined ? Number.NaN : 0;
  const roundTrips = (async () => {
    while (running) {
      const cpuBefore = pid === undefined ? 0 : mainThreadCpuMs(pid);
      const sent = performance.now();
      await expectCode(session.command('NOOP'), 250, 'NOOP');
      worst = Math.max(worst, performance.now() - sent);
      if (pid !== undefined) worstBusy = Math.max(worstBusy, mainThreadCpuMs(pid) - cpuBefore);
      if (running) await sleep(PROBE_INTERVAL_MS);
    }
  })();
  // Kept as a value until stop() rethrows it, so a dropped probe connection is not unhandled.
  const failure = roundTrips.then(
    () => null,
    (err: unknown) => err,
  );
  return {
    async stop() {
      running = false;
      const err = await failure;
      await session.close();
      if (err !== null) throw err;
      return worst;
    },
    get worstBusyMs() {
      return worstBusy;
    },
  };
}

export interface ProbedDelivery {
  readonly to: string;
  /** The DATA payload, dot-stuffed and with its final dot (smtp-session.ts's dataPayload). */
  readonly payload: Buffer;
}

/** What a probed delivery got: the reply to its final dot, and the probe's worst figures. */
export interface ProbedOutcome {
  reply: Reply;
  /** The slowest NOOP round trip, ms of wall time. */
  worstRoundTripMs: number;
  /** The most CPU the gateway's main thread used while one NOOP waited, ms (see StallProbe). */
  worstBusyMs: number;
}

/**
 * One transaction on a new connection while a probe watches the gateway (`pid`, its process),
 * from before the connection opens until the reply to the final dot.
 */
export async function deliverProbed(
  port: number,
  pid: number,
  delivery: ProbedDelivery,
): Promise<ProbedOutcome> {
  const probe = await startStallProbe(port, pid);
  const outcome = await transaction(port, delivery).then(
    (reply) => ({ reply }),
    (error: unknown) => ({ error }),
  );
  const worstRoundTripMs = await probe.stop();
  if ('error' in outcome) throw outcome.error;
  return { reply: outcome.reply, worstRoundTripMs, worstBusyMs: probe.worstBusyMs };
}

async function transaction(port: number, delivery: ProbedDelivery): Promise<Reply> {
  const session = new SmtpSession(port);
  try {
    await expectCode(session.reply(), 220, 'greeting');
    await expectCode(session.command('EHLO client.test'), 250, 'EHLO');
    await expectCode(session.command('MAIL FROM:<ann@acme.example>'), 250, 'MAIL');
    await expectCode(session.command(`RCPT TO:<${delivery.to}>`), 250, 'RCPT');
    await expectCode(session.command('DATA'), 354, 'DATA');
    return await session.sendPayload(delivery.payload);
  } finally {
    await session.close();
  }
}

async function expectCode(reply: Promise<Reply>, code: number, step: string): Promise<void> {
  const { code: got, text } = await reply;
  if (got !== code) throw new Error(`${step}: expected ${code}, got ${text}`);
}
