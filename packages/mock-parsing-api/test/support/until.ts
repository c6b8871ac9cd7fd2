import { setTimeout as sleep } from 'node:timers/promises';

/** Milliseconds between two reads of a state the mock reaches on its own. */
const POLL_INTERVAL_MS = 20;
/** A bound, not a wait: past it the test fails with the last state instead of hanging. */
const GIVE_UP_AFTER_MS = 10_000;

/** Resolves with the first value `read` gives that `holds` accepts. */
export async function until<T>(read: () => Promise<T>, holds: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + GIVE_UP_AFTER_MS;
  for (;;) {
    const value = await read();
    if (holds(value)) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting; last state: ${JSON.stringify(value)}`);
    await sleep(POLL_INTERVAL_MS);
  }
}
