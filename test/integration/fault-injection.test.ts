import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createMockApi, type MockApi, type MockFault } from '@ingest-gateway/mock-parsing-api';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemon, writeDaemonConfig } from '../../harness/daemon-process.ts';
import { LogSink } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { createLogger } from '../../src/logger.ts';
import { uploadQueueName } from '../../src/queue/upload-queue.ts';
import { createKeySpace } from '../../src/record/keys.ts';
import { createMessageLedger } from '../../src/record/message-ledger.ts';

/**
 * The gateway's promise under fire: once it answers 250, every supported attachment of the
 * message reaches the parsing API exactly once, whatever crashes in between. While messages
 * arrive, the suite SIGKILLs and restarts the gateway, restarts Redis (AOF on), and makes the
 * API fail (500, 503, 429 with Retry-After, hangs past the client's timeout, dropped
 * connections before and after the request is read, uploads committed after the client
 * timed out), at moments drawn from a seeded generator; and at moments it aims for:
 * - Redis SIGKILLed right after the API answered a POST, before the worker recorded it;
 * - the gateway SIGKILLed while a slow upstream holds a POST it then commits (close to
 *   `api.timeout`), so the document appears while no gateway is running;
 * - a POST the client gives up on (`api.timeout`) that the service commits half a second
 *   later, after the retry began (the commit is waited out before counting).
 * It runs once with each shape of the document list (full Documents; bare Metas one per
 * page), since the lookup of an earlier upload is what every retry relies on. Replay a run
 * with FAULT_SEED=<seed> (and FAULT_MESSAGES=<n> per run); each run prints its line.
 */
const seed = Number(process.env.FAULT_SEED ?? 20_261_122);
const messageCount = Number(process.env.FAULT_MESSAGES ?? 80);
const senders = 6;
const apiKey = 'fault-suite-key';
/** api.timeout of the gateway under test, ms: the slow upstream's hold is set against it. */
const apiTimeout = 2000;
/** Messages the aimed-at events that need an upload in flight send themselves. */
const eventMail = 3;
/**
 * How long an aimed-at event waits for the POST it acts on, ms: a bound, not a wait. The POST
 * comes in seconds, later on busy cores behind a restarted daemon or Redis; an event that gave
 * up would not be counted, and the run would fail for the machine's speed.
 */
const eventPostWithinMs = 60_000;

/** mulberry32: a small seeded generator, so a run's faults can be replayed. */
function generator(start: number): () => number {
  let state = start >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface ListShape {
  items: 'document' | 'meta';
  pageSize: number | null;
}

describe('fault injection', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });

  it.each<{ name: string; list: ListShape; salt: number }>([
    { name: 'full Documents', list: { items: 'document', pageSize: null }, salt: 0 },
    { name: 'bare Metas, one per page', list: { items: 'meta', pageSize: 1 }, salt: 1 },
  ])(
    'uploads every attachment of every accepted message exactly once, the list answering $name',
    async ({ list, salt }) => {
      const runSeed = (seed + salt) >>> 0;
      // Separate streams: the plan, the chaos and the senders' pauses each replay from the seed
      // whatever the others drew (the machine's timing can still order events differently).
      const random = generator(runSeed);
      const chaosRandom = generator(runSeed ^ 0x9e3779b9);
      const senderRandom = generator(runSeed ^ 0x85ebca6b);
      const redis: TestRedis = await startRedis({ config: { appendonly: 'yes', appendfsync: 'always' } });
      cleanups.push(() => redis.close());
      const mock: MockApi = createMockApi({
        apiKey,
        logger: createLogger({ level: 'silent', destination: new LogSink() }),
        documentList: list,
      });
      const { url } = await mock.start({ host: '127.0.0.1', port: 0 });
      cleanups.push(() => mock.close());
      const dir = await mkdtemp(join(tmpdir(), 'fault-suite-'));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      const configPath = join(dir, 'gateway.yaml');
      const config = await writeDaemonConfig(configPath, {
        smtp: { closeTimeout: 3000 },
        redis: { url: redis.url },
        api: { baseUrl: url, apiKey, timeout: apiTimeout },
        // Short backoff and stall detection keep the run to seconds; the logic is the production one.
        upload: { concurrency: 4, attempts: 40, retryBaseDelay: 50, retryMaxDelay: 1000, stalledAfter: 2000 },
        workspaces: [{ identifier: 'ws', ingestEmail: 'documents@ingest.test' }],
      });

      // The plan: each message has one to three distinct PDFs, named for the message and part.
      // The last ones are the aimed-at events' own mail (eventMail), so each has an upload to act on.
      const plan = Array.from({ length: messageCount + eventMail }, (_, i) =>
        Array.from({ length: 1 + Math.floor(random() * 3) }, (_, k) => `m${i}-a${k}.pdf`),
      );
      const counts = {
        kills: 0,
        heldKills: 0,
        lateCommits: 0,
        redisRestarts: 0,
        redisAfterPost: 0,
        faults: 0,
        replies: new Map<number, number>(),
      };

      let daemon: DaemonProcess = await startDaemon(configPath);
      let daemonDown = false;
      // Every daemon's log, so a duplicate can be traced across the restarts it spans.
      const earlierLines: string[] = [];
      const restartDaemon = async () => {
        daemonDown = true;
        daemon.signal('SIGKILL');
        await daemon.exited;
        earlierLines.push(...daemon.lines, `--- SIGKILL at ${new Date().toISOString()} ---`);
        counts.kills++;
        daemon = await startDaemon(configPath);
        daemonDown = false;
      };
      cleanups.push(async () => {
        daemon.signal('SIGKILL');
        await daemon.exited;
      });
      const restartRedis = async () => {
        await redis.stop();
        await pause(200 + chaosRandom() * 800);
        await redis.start();
        counts.redisRestarts++;
      };

      // An aimed-at event's own message, so an upload comes however far the other mail has got.
      let eventMailSent = 0;
      const sendEventMail = () => deliverMessage(messageCount + eventMailSent++, { yieldToEvents: false });

      /** Redis SIGKILLed right after the mock answered a POST: before the worker can record it. */
      const killRedisAfterNextPost = async () => {
        const answered = new Promise<void>((resolve) => {
          const stop = mock.onUpload(() => {
            stop();
            // onUpload runs as the answer is written; the kill follows in the next turn.
            setImmediate(resolve);
          });
        });
        const mail = sendEventMail();
        const gaveUp = new AbortController();
        const seen = await Promise.race([
          answered.then(() => true),
          sleep(eventPostWithinMs, false, { signal: gaveUp.signal }).catch(() => false),
        ]);
        gaveUp.abort();
        if (seen) {
          await restartRedis();
          counts.redisAfterPost++;
        }
        await mail;
      };

      /** A POST the client gives up on (api.timeout) and the mock commits half a second later. */
      const commitLate = async () => {
        mock.clearFaults();
        mock.enqueueFault({ commitDelayMs: apiTimeout + 500, times: 2 });
        await sendEventMail();
        if (await heldPost(url, eventPostWithinMs)) counts.lateCommits++;
      };

      /** The gateway SIGKILLed while the mock holds a POST it commits later, close to api.timeout. */
      const killWhileUpstreamHolds = async () => {
        mock.clearFaults();
        mock.enqueueFault({ commitDelayMs: apiTimeout - 200, times: 2 });
        await sendEventMail();
        const held = await heldPost(url, eventPostWithinMs);
        // Half-way through the hold: the upload was sent, its document does not exist yet.
        await pause(apiTimeout / 2 - 200);
        await restartDaemon();
        if (held) counts.heldKills++;
      };

      // Chaos, until every message is accepted: the aimed-at kills, SIGKILLs and Redis restarts
      // at points of the run drawn from the seed (so every run has them), faults at random
      // moments throughout.
      const accepted = new Map<number, string>();
      const point = () => Math.floor(messageCount * (0.1 + 0.8 * random()));
      type Scheduled = {
        at: number;
        kind: 'kill' | 'redis' | 'redis-after-post' | 'held-kill' | 'late-commit';
      };
      const scheduled: Scheduled[] = [
        ...Array.from({ length: 2 }, () => ({ at: point(), kind: 'kill' as const })),
        { at: point(), kind: 'redis' as const },
        { at: point(), kind: 'redis-after-post' as const },
        { at: point(), kind: 'held-kill' as const },
        { at: point(), kind: 'late-commit' as const },
      ].sort((a, b) => a.at - b.at);
      let sending = true;
      const eventDue = () => {
        const due = scheduled[0];
        return due !== undefined && accepted.size >= due.at;
      };
      const faultKinds: MockFault[] = [
        { status: 500, times: 4 },
        { status: 503, times: 6 },
        { status: 429, retryAfter: 1, times: 3 },
        { hang: true, times: 2 },
        { drop: 'before', times: 3 },
        { drop: 'after', times: 3 },
        // Timed out at the client, committed at the service after the retry's lookup began.
        { commitDelayMs: apiTimeout + 500, times: 2 },
      ];
      const faultOffset = Math.floor(random() * faultKinds.length);
      const chaos = (async () => {
        while (sending) {
          await pause(60 + chaosRandom() * 180);
          const due = scheduled[0];
          if (due && accepted.size >= due.at) {
            scheduled.shift();
            if (due.kind === 'kill') await restartDaemon();
            else if (due.kind === 'redis') await restartRedis();
            else if (due.kind === 'redis-after-post') await killRedisAfterNextPost();
            else if (due.kind === 'late-commit') await commitLate();
            else await killWhileUpstreamHolds();
          } else if (counts.faults < 2 * faultKinds.length && chaosRandom() < 0.5) {
            // Every kind in turn, from a seeded starting point, so each run meets all of them
            // twice; more would only lengthen the run.
            const fault = faultKinds[(faultOffset + counts.faults) % faultKinds.length];
            if (fault) mock.enqueueFault(fault);
            counts.faults++;
          }
        }
      })();

      // Senders: a sending server retries whatever is not a 250, until it is.
      const deliverMessage = async (i: number, { yieldToEvents }: { yieldToEvents: boolean }) => {
        const files = plan[i] ?? [];
        const message = await composeMessage({
          subject: `message ${i}`,
          attachments: files.map((name) => ({ filename: name, content: uniquePdf(name) })),
        });
        for (let attempt = 0; !accepted.has(i); attempt++) {
          if (attempt > 500) throw new Error(`message ${i} was never accepted`);
          // Down, or an aimed-at event is due and not begun: the senders wait, so no event is
          // overtaken by the end of the mail (each event sends its own mail to act on).
          while (daemonDown || (yieldToEvents && eventDue())) await pause(50);
          const { data } = await deliver(daemon.smtpPort, { to: ['documents@ingest.test'], message }).catch(
            () => ({ data: null }),
          );
          const code = data?.code ?? 0;
          counts.replies.set(code, (counts.replies.get(code) ?? 0) + 1);
          if (code === 250) accepted.set(i, queuedId(data));
          else if (code >= 500) throw new Error(`message ${i} refused for good: ${data?.text}`);
          else await pause(50 + senderRandom() * 150);
        }
      };
      let next = 0;
      const sender = async () => {
        for (let i = next++; i < messageCount; i = next++) await deliverMessage(i, { yieldToEvents: true });
      };
      await Promise.all(Array.from({ length: senders }, sender));
      sending = false;
      await chaos;
      mock.clearFaults();
      // Each aimed-at event sent its own message; one missing means an event never ran.
      expect({ accepted: accepted.size, events: scheduled.length }).toEqual({
        accepted: plan.length,
        events: 0,
      });

      // Every accepted attachment arrives: the mock's own count is the judge. A run that does
      // not get there within a coarse bound says what is missing and where it stands.
      const expected = plan.reduce((sum, files) => sum + files.length, 0);
      const keys = createKeySpace(config.redis.prefix);
      const reader = new Redis(redis.url);
      cleanups.push(async () => reader.disconnect());
      const queue = new Queue(uploadQueueName, { connection: reader, prefix: keys.queuePrefix });
      cleanups.push(() => queue.close());
      const arrived = await Promise.race([
        mock.waitForUploads(expected).then(() => true),
        pause(120_000).then(() => false),
      ]);
      if (!arrived) {
        const received = new Set(mock.uploads.map((upload) => upload.file?.fileName));
        const missing = plan.flat().filter((name) => !received.has(name));
        const ledger = createMessageLedger(reader, keys, 3600);
        const states: string[] = [];
        for (const [i, id] of accepted) {
          const record = await ledger.read(id);
          for (const entry of record?.attachments ?? []) {
            if (missing.includes(entry.fileName))
              states.push(`${entry.fileName}: ${entry.state} ${entry.reason ?? ''} (m${i} ${id})`);
          }
        }
        const jobs = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed');
        throw new Error(
          `seed ${runSeed}: ${missing.length} attachments never arrived; queue ${JSON.stringify(jobs)}; ` +
            `${states.slice(0, 20).join('; ')}; daemon log tail: ${daemon.lines.slice(-15).join('\n')}`,
        );
      }
      // Then the queue drains: nothing waits, runs or is delayed (a late duplicate would show up).
      for (let check = 0; ; check++) {
        const jobs = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed');
        if ((jobs.waiting ?? 0) + (jobs.active ?? 0) + (jobs.delayed ?? 0) === 0) {
          const failed = await queue.getFailed(0, -1);
          expect(failed.map((job) => `${job.id}: ${job.failedReason}`)).toEqual([]);
          expect(jobs.completed).toBe(expected);
          break;
        }
        if (check > 600) throw new Error(`the queue did not drain: ${JSON.stringify(jobs)}`);
        await pause(100);
      }

      // An upload committed late (commitDelayMs) may still land after the queue drained: that
      // is exactly the duplicate to catch, so the count waits out the longest hold first.
      await pause(apiTimeout + 1500);
      const perFile = new Map<string, string[]>();
      for (const upload of mock.uploads) {
        const name = upload.file?.fileName ?? '?';
        perFile.set(name, [...(perFile.get(name) ?? []), upload.documentIdentifier]);
      }
      const all = plan.flat();
      const lost = all.filter((name) => !perFile.has(name));
      const duplicates = all.filter((name) => (perFile.get(name)?.length ?? 0) > 1);

      // The records agree with what the service holds.
      const ledger = createMessageLedger(reader, keys, 3600);
      let disagreements = 0;
      for (const [i, id] of accepted) {
        const record = await ledger.read(id);
        const entries = record?.attachments ?? [];
        const files = plan[i] ?? [];
        if (entries.length !== files.length) disagreements++;
        for (const entry of entries) {
          const [documentIdentifier] = perFile.get(entry.fileName) ?? [];
          if (entry.state !== 'uploaded' || entry.documentIdentifier !== documentIdentifier) disagreements++;
        }
      }

      const replies = Object.fromEntries([...counts.replies].sort(([a], [b]) => a - b));
      process.stdout.write(
        `fault injection: list=${list.items}/${list.pageSize ?? 'all'} seed=${runSeed} ` +
          `messages=${plan.length} attachments=${expected} kills=${counts.kills} ` +
          `heldKills=${counts.heldKills} lateCommits=${counts.lateCommits} redisRestarts=${counts.redisRestarts} ` +
          `redisAfterPost=${counts.redisAfterPost} faults=${counts.faults} ` +
          `replies=${JSON.stringify(replies)} uploads=${mock.uploads.length} ` +
          `duplicates=${duplicates.length} lost=${lost.length} recordDisagreements=${disagreements}\n`,
      );
      if (duplicates.length > 0) {
        // What the service and the gateway saw of each duplicate, to tell which window it fell in.
        const everyLine = [...earlierLines, ...daemon.lines];
        const trace = duplicates.map((name) => {
          const uploads = mock.uploads.filter((upload) => upload.file?.fileName === name);
          // The gateway's customIdentifier is the job id, which every log line of the job carries.
          const jobIds = new Set(uploads.flatMap((upload) => upload.fields.customIdentifier ?? []));
          const lines = everyLine.filter(
            (line) => line.startsWith('---') || [...jobIds].some((id) => line.includes(`"${id}"`)),
          );
          const times = uploads.map((upload) => upload.receivedAt).join(', ');
          return `${name} (job ${[...jobIds].join(', ')}) uploaded at ${times}\n${lines.join('\n')}`;
        });
        process.stdout.write(`duplicates traced:\n${trace.join('\n\n')}\n`);
      }
      expect({ lost, duplicates, disagreements }).toEqual({ lost: [], duplicates: [], disagreements: 0 });
      expect(accepted.size).toBe(plan.length);
      expect(counts.kills).toBeGreaterThanOrEqual(3);
      expect(counts.redisRestarts).toBeGreaterThanOrEqual(2);
      // The aimed-at moments happened, not only the random ones.
      expect({
        heldKills: counts.heldKills,
        lateCommits: counts.lateCommits,
        redisAfterPost: counts.redisAfterPost,
      }).toEqual({ heldKills: 1, lateCommits: 1, redisAfterPost: 1 });
    },
    300_000,
  );
});

/**
 * Resolves true once the mock has taken a queued fault for a request (the POST it holds), by
 * its control surface; false if none was taken within `withinMs`.
 */
async function heldPost(url: string, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    const response = await fetch(`${url}/_mock/faults`);
    const { faults } = (await response.json()) as { faults: Array<{ remaining: number | null }> };
    if (faults.every((entry) => entry.remaining !== 2)) return true;
    await pause(20);
  }
  return false;
}
