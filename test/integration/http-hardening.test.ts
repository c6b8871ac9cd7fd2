import { once } from 'node:events';
import { request } from 'node:http';
import { connect } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { createKeySpace, type KeySpace } from '../../src/record/keys.ts';
import { createRawCopyWriter } from '../../src/store/raw-copy.ts';

/** GET or PUT with a Host of the test's choosing (fetch does not let one set it). */
function call(
  base: string,
  path: string,
  { method = 'GET', host }: { method?: string; host?: string } = {},
): Promise<{ status: number; body: string }> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: host === undefined ? {} : { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * The HTTP API against clients that misuse it: Bull Board's buttons, downloads and event
 * streams left half-read, and pages of other sites reaching a tokenless API by DNS rebinding.
 * The smtp role alone: no worker takes the upload jobs, so they stay waiting.
 */
describe('HTTP API hardening', () => {
  let harness: Harness;
  let keys: KeySpace;
  let redis: Redis;
  let messageId: string;

  beforeAll(async () => {
    harness = await startHarness({ role: 'smtp', http: { publicUrl: 'http://gateway.example:8080' } });
    keys = createKeySpace(harness.config.redis.prefix);
    redis = new Redis(harness.redis.url);
    const message = await composeMessage({
      from: 'Ann <ann@acme.example>',
      attachments: [{ filename: 'waiting.pdf', content: uniquePdf('http-hardening') }],
    });
    const { data } = await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message });
    messageId = queuedId(data);
  });
  afterAll(async () => {
    redis?.disconnect();
    await harness?.close();
  });

  it('mounts Bull Board read-only: removing, cleaning or emptying a queue is refused', async () => {
    const { body } = await call(harness.httpUrl, '/admin/queues/api/queues');
    const queues = (JSON.parse(body) as { queues: { name: string; readOnlyMode: boolean }[] }).queues;
    expect(queues.length).toBeGreaterThan(0);
    for (const queue of queues) expect(queue.readOnlyMode, queue.name).toBe(true);
    const uploads = queues.find((queue) => queue.name.includes('upload'))?.name ?? '';
    const jobId = `${messageId}-0`;
    for (const action of [
      `${uploads}/empty`,
      `${uploads}/clean/waiting`,
      `${uploads}/promote`,
      `${uploads}/${jobId}/clean`,
    ]) {
      const answer = await call(harness.httpUrl, `/admin/queues/api/queues/${action}`, { method: 'PUT' });
      expect(answer.status, action).toBe(405);
    }
    const record = JSON.parse((await call(harness.httpUrl, `/v1/messages/${messageId}`)).body);
    expect(record.attachments[0].state).toBe('queued');
    expect(await redis.exists(`${harness.config.redis.prefix}:{queue}:uploads:${jobId}`)).toBe(1);
  });

  it('ends a download whose client went away mid-stream', async () => {
    // 32 MiB: far more than the socket buffers hold, so the client leaves mid-stream.
    const id = 'abortedmidstream';
    const raw = createRawCopyWriter(redis, keys.message(id).raw);
    await raw.write(Buffer.alloc(32 * 1024 * 1024, 'a'));
    await raw.end();
    const from = harness.logs.lines.length;
    const req = request(new URL(`/v1/messages/${id}/raw`, harness.httpUrl));
    req.on('error', () => {
      // The abort below is this test's own doing.
    });
    req.end();
    const [res] = (await once(req, 'response')) as [NodeJS.ReadableStream];
    await once(res, 'data');
    req.destroy();
    await harness.logs.waitFor(
      (line) => line.includes('closed the connection before the response ended') && line.includes(id),
      from,
    );
  });

  it('drops an event-stream client that stops reading, while the others keep receiving', async () => {
    const live = await fetch(`${harness.httpUrl}/v1/events`);
    const reader = live.body?.pipeThrough(new TextDecoderStream()).getReader();
    if (!reader) throw new Error('no event stream body');
    let liveText = '';
    while (!liveText.includes(': listening')) liveText += (await reader.read()).value ?? '';

    const stalled = connect(Number(new URL(harness.httpUrl).port), '127.0.0.1');
    stalled.write('GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    let stalledText = '';
    let stalledBytes = 0;
    const counting = (chunk: Buffer) => {
      stalledBytes += chunk.length;
    };
    stalled.on('data', counting);
    const closed = new Promise((resolve) => stalled.once('close', resolve));
    stalled.on('error', () => {
      // A reset when the gateway drops it is what this test waits for.
    });
    while (!stalledText.includes(': listening')) {
      const [chunk] = (await once(stalled, 'data')) as [Buffer];
      stalledText += chunk.toString();
    }
    // From here on it reads nothing: what the gateway writes piles up.
    stalled.pause();

    // Each announcement of the message sends its record to both: 20,000 of them are many
    // megabytes, far past the bound and whatever the sockets' kernel buffers hold. Published
    // in batches the live client reads before the next: a reader keeping up is never dropped.
    const announcements = 20_000;
    const batchSize = 200;
    let received = 0;
    let liveBytes = 0;
    for (let sent = batchSize; sent <= announcements; sent += batchSize) {
      const batch = redis.pipeline();
      for (let i = 0; i < batchSize; i += 1) batch.publish(keys.settledChannel, messageId);
      await batch.exec();
      while (received < sent) {
        const { value } = await reader.read();
        liveBytes += value?.length ?? 0;
        liveText += value ?? '';
        const blocks = liveText.split('\n\n');
        liveText = blocks.pop() ?? '';
        received += blocks.filter((block) => block.startsWith('event: message')).length;
      }
    }
    await reader.cancel();

    stalled.resume();
    await closed;
    expect(stalledBytes).toBeLessThan(liveBytes / 2);
  });

  describe('without http.token', () => {
    it.each([
      ['127.0.0.1:8025'],
      ['localhost'],
      ['localhost:1234'],
      ['console.localhost:8025'],
      ['127.3.4.5:80'],
      ['[::1]:8025'],
      ['gateway.example:8080'],
    ])('answers a request for Host %s', async (host) => {
      expect((await call(harness.httpUrl, `/v1/messages/${messageId}`, { host })).status).toBe(200);
    });

    it.each([
      ['rebound.attacker.example:8025'],
      ['attacker.example'],
      ['localhost.attacker.example'],
      ['127.0.0.1.attacker.example'],
      ['10.0.0.1:8025'],
      ['user@localhost'],
    ])('refuses a request for Host %s with 421, its raw e-mail too', async (host) => {
      for (const path of [`/v1/messages/${messageId}`, `/v1/messages/${messageId}/raw`, '/']) {
        const answer = await call(harness.httpUrl, path, { host });
        expect(answer.status, path).toBe(421);
        expect(answer.body).toContain('without http.token this server answers only Host localhost');
        expect(answer.body).not.toContain(messageId);
      }
      const retry = await call(harness.httpUrl, '/v1/uploads/retry', { method: 'POST', host });
      expect(retry.status).toBe(421);
    });
  });
});
