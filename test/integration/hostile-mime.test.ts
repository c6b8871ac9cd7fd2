import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HostileGateway, startHostileGateway } from '../../harness/hostile-gateway.ts';
import { type HostileMessage, hostileRows } from '../../harness/hostile-messages.ts';
import type { Reply } from '../../harness/smtp-session.ts';
import { STALL_BOUND_MS } from '../../harness/stall-probe.ts';

/**
 * Messages built to exhaust the MIME walk (harness/hostile-messages.ts), each sent
 * through SMTP while a probe connection times the gateway's event loop with NOOP round
 * trips: the gateway serves every session from one thread, so a step that is synchronous in
 * proportion to a hostile input stalls every other sender. A stall of seconds fails the test
 * (the one timing bound: it proves a stall cannot happen, it does not measure speed;
 * `npm run bench` reports the figures). It is counted in the CPU the event loop spent while a
 * NOOP waited, not in wall time, so a machine whose cores are taken by others does not fail
 * it. The caps refuse with the reply naming the limit; nothing is uploaded.
 */
describe('hostile MIME', () => {
  let gateway: HostileGateway;

  // The daemon, its Redis, DNS and mock API take seconds to start, more on busy cores.
  beforeAll(async () => {
    gateway = await startHostileGateway('all');
  }, 60_000);
  afterAll(async () => gateway?.close());

  /** Deliver `message`; fails on a stall of STALL_BOUND_MS or more. */
  async function deliverWatched(message: HostileMessage): Promise<Reply> {
    const { reply, worstRoundTripMs, worstBusyMs } = await gateway.deliver(message);
    expect(
      worstBusyMs,
      `the most CPU the event loop spent while one NOOP waited, in ms (its slowest round trip: ${Math.round(worstRoundTripMs)} ms)`,
    ).toBeLessThan(STALL_BOUND_MS);
    return reply;
  }

  it.each(hostileRows('limit'))(
    'refuses %s with the reply naming the limit, without a stall',
    async (_name, message) => {
      const before = gateway.uploads();
      expect((await deliverWatched(message)).text).toMatch(message.reply);
      expect(gateway.uploads()).toBe(before);
    },
  );

  // Bodies are read whole (only candidates stop at maxPartSize), so these walk every byte.
  it.each(hostileRows('walk'))('parses %s without a stall', async (_name, message) => {
    expect((await deliverWatched(message)).text).toMatch(message.reply);
  });

  // An open workspace admits any sender; the hostile header only has to be read in time.
  it.each(hostileRows('from'))(
    'reads %s without a stall (the address parser sees at most 64 KiB)',
    async (_name, message) => {
      expect((await deliverWatched(message)).text).toMatch(message.reply);
    },
  );
});
