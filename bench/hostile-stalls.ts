/**
 * Hostile-MIME stall benchmark: how long each message of harness/hostile-messages.ts
 * (the set test/integration/hostile-mime.test.ts and sender-auth-hostile.test.ts send) holds
 * up the gateway's event loop, as the slowest NOOP round trip on a second SMTP connection
 * while it arrives (harness/stall-probe.ts). Prints one line per message and the overall
 * worst; asserts nothing. The target is under 100 ms for each on an idle machine (the 50 ms of
 * docs/architecture.md, "Performance targets", is for ordinary mail under the intake load).
 *
 *   npm run bench -- hostile
 *   BENCH_HOSTILE_ROUNDS=5 npm run bench -- hostile   # each message sent 5 times (default 3)
 *
 * The gateway runs as its own process (`ingest-gateway start --role smtp`, so uploads do not
 * run in the loop that is timed); each message is built before its probe starts, so the
 * sender's work is not counted.
 */
import { startHostileGateway } from '../harness/hostile-gateway.ts';
import { hostileMessages } from '../harness/hostile-messages.ts';

export async function hostileStallsBenchmark(env: NodeJS.ProcessEnv): Promise<void> {
  const rounds = Number(env.BENCH_HOSTILE_ROUNDS ?? 3);
  const gateway = await startHostileGateway('smtp');
  let overall = { ms: 0, name: '' };
  try {
    console.log(
      `hostile MIME: slowest NOOP round trip on a probe connection, over ${rounds} deliveries each`,
    );
    for (const message of hostileMessages) {
      let worst = 0;
      for (let round = 0; round < rounds; round++) {
        const { reply, worstRoundTripMs } = await gateway.deliver(message);
        if (!message.reply.test(reply.text)) {
          throw new Error(`${message.name}: expected a reply matching ${message.reply}, got ${reply.text}`);
        }
        worst = Math.max(worst, worstRoundTripMs);
      }
      console.log(`  ${worst.toFixed(0).padStart(5)} ms  ${message.name}`);
      if (worst > overall.ms) overall = { ms: worst, name: message.name };
    }
    console.log(`hostile MIME: worst ${overall.ms.toFixed(0)} ms (${overall.name})`);
  } finally {
    await gateway.close();
  }
}
