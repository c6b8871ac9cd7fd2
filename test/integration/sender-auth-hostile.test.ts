import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HostileGateway, startHostileGateway } from '../support/hostile-gateway.ts';
import { AUTHENTICATED_RECIPIENT, hostileRows } from '../support/hostile-messages.ts';
import { composeMessage, uniquePdf } from '../support/messages.ts';
import { deliver } from '../support/smtp-session.ts';
import { STALL_BOUND_MS } from '../support/stall-probe.ts';

/**
 * Sender authentication reads the DATA stream beside the MIME walk; a hostile message must not
 * cost more because a workspace authenticates senders. The gateway runs in its own process,
 * timed by a probe connection's NOOP round trips: a coarse bound of seconds and of hundreds of
 * MiB proves nothing stalls or piles up (before the fix: 2.6 s and +1 GiB).
 */
describe('sender authentication under hostile input', () => {
  let gateway: HostileGateway;

  beforeAll(async () => {
    gateway = await startHostileGateway('all');
  });
  afterAll(async () => gateway?.close());

  it.each(hostileRows('sender-auth'))(
    'refuses %s at the walk limit, and authentication stops there too',
    async (_name, message) => {
      const { rss: before } = await gateway.memoryMiB();
      const { reply, worstRoundTripMs } = await gateway.deliver(message);
      const { peak } = await gateway.memoryMiB();
      expect(reply.text).toMatch(message.reply);
      expect(worstRoundTripMs, 'the slowest NOOP round trip on the probe connection, in ms').toBeLessThan(
        STALL_BOUND_MS,
      );
      // The peak of the daemon's own memory while it read the message; unfixed,
      // authentication alone added ~1 GiB.
      expect(peak - before, "the daemon's peak memory growth, in MiB").toBeLessThan(300);
      expect(gateway.uploads()).toBe(0);
    },
  );

  it('refuses a message with more DKIM signatures than it will check, saying so', async () => {
    const lines = Array.from(
      { length: 20 },
      (_, i) => `DKIM-Signature: v=1; a=rsa-sha256; d=d${i}.example; s=s; bh=x; b=y`,
    );
    const body = await composeMessage({
      from: 'ann@acme.example',
      attachments: [{ filename: 'signed.pdf', content: uniquePdf('signed') }],
    });
    const message = Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n`), body]);
    const { data } = await deliver(gateway.smtpPort, { to: [AUTHENTICATED_RECIPIENT], message });
    expect(data?.text).toBe(
      '550 5.7.1 sender not authenticated: more than 16 DKIM or ARC signatures, none was checked',
    );
    expect(gateway.uploads()).toBe(0);
  });
});
