import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, type Harness, type LogSink, startHarness } from '../../harness/gateway-harness.ts';
import { readyzAnswers } from '../../harness/http-state.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId, type Reply } from '../../harness/smtp-session.ts';
import { uploadJobId, uploadQueueName } from '../../src/queue/upload-queue.ts';
import { createKeySpace } from '../../src/record/keys.ts';

const httpToken = 'http-token-never-to-be-shown-93b4';

/**
 * The API key (and the HTTP token) never leave the process except in the Authorization
 * header of an upload: not in a log line at any level, an error, a message record, any HTTP
 * answer, Redis, or check-config's output. The gateway is driven through every path that
 * reports something: an upload, a 400, a dropped connection, a Redis outage, a 401.
 */
describe('secrets', () => {
  let harness: Harness;
  let redis: Redis;
  let events: QueueEvents;
  const answers: Array<{ what: string; text: string }> = [];
  const messageIds: string[] = [];

  const api = async (path: string, authorized = true) => {
    const response = await fetch(`${harness.httpUrl}${path}`, {
      headers: authorized ? { authorization: `Bearer ${httpToken}` } : {},
    });
    const text = await response.text();
    answers.push({ what: `GET ${path} → ${response.status}`, text });
    return { status: response.status, text };
  };
  const send = async (label: string): Promise<Reply | null> => {
    const message = await composeMessage({
      attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }],
    });
    return (await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message })).data;
  };

  beforeAll(async () => {
    harness = await startHarness({ http: { token: httpToken } });
    redis = new Redis(harness.redis.url, { maxRetriesPerRequest: null });
    redis.on('error', () => undefined);
    const connection = { host: '127.0.0.1', port: harness.redis.port, maxRetriesPerRequest: null };
    events = new QueueEvents(uploadQueueName, {
      connection,
      prefix: createKeySpace(harness.config.redis.prefix).queuePrefix,
    });
    events.on('error', () => undefined);
    await events.waitUntilReady();
  });
  afterAll(async () => {
    await events?.close();
    redis?.disconnect();
    await harness?.close();
  });

  it('drives uploads through every outcome', async () => {
    // Redis away: 451, readiness says so; back: the mail is taken again. First, as this
    // Redis keeps nothing over a restart.
    const from = harness.logs.lines.length;
    await harness.redis.stop();
    expect((await send('outage'))?.text).toMatch(/^451 4\.3\.0 /);
    expect((await api('/readyz')).status).toBe(503);
    await api('/metrics');
    // The intake connection's loss is among the lines searched for secrets below.
    await intakeLogged(harness.logs, from, 'redis connection lost');
    await harness.redis.start();
    await readyzAnswers(harness.httpUrl, 200, httpToken);
    const recovered = queuedId(await send('after-outage'));
    expect(await harness.settled(recovered, 0)).toBe('completed');

    // A 400: the attachment fails for good, with the service's detail in the record.
    harness.mock.enqueueFault({ status: 400 });
    const refused = queuedId(await send('bad-request'));
    expect(await harness.settled(refused, 0)).toBe('failed');
    // A dropped connection, then the retry goes through.
    harness.mock.enqueueFault({ drop: true });
    const retried = queuedId(await send('dropped'));
    expect(await harness.settled(retried, 0)).toBe('completed');

    // A 401: the workers pause and the job goes back to wait (from active, unlike its first arrival).
    harness.mock.enqueueFault({ status: 401 });
    const handedBack = new Promise<string>((resolve) => {
      const onWaiting = ({ jobId, prev }: { jobId: string; prev?: string }) => {
        if (prev !== 'active') return;
        events.off('waiting', onWaiting);
        resolve(jobId);
      };
      events.on('waiting', onWaiting);
    });
    const unauthorized = queuedId(await send('unauthorized'));
    expect(await handedBack).toBe(uploadJobId(unauthorized, 0));
    const readiness = await api('/readyz');
    expect(readiness.status).toBe(503);
    expect(readiness.text).toContain('refused the API key');

    messageIds.push(refused, retried, recovered, unauthorized);
    // The key was in use: the mock saw it on the uploads it took.
    expect(harness.mock.uploads.some((upload) => upload.authorization === `Bearer ${apiKey}`)).toBe(true);
  });

  it('shows neither the key nor the token in any HTTP answer', async () => {
    await api('/healthz', false);
    await api('/readyz');
    await api('/metrics');
    await api('/readyz', false);
    for (const id of messageIds) {
      const record = await api(`/v1/messages/${id}`);
      expect(record.status, `${id} ${record.text}`).toBe(200);
      await api(`/v1/messages/${id}/raw`);
    }
    for (const upload of harness.mock.uploads) await api(`/v1/documents/${upload.documentIdentifier}`);
    expect(
      answers.find((answer) => answer.what.startsWith(`GET /v1/messages/${messageIds[0]} `))?.text,
    ).toContain('"state": "failed"');
    for (const { what, text } of answers) {
      expect(text, what).not.toContain(apiKey);
      expect(text, what).not.toContain(httpToken);
    }
  });

  it('writes neither into any log line, debug level included', () => {
    expect(harness.logs.lines.some((line) => line.includes('"level":20'))).toBe(true);
    expect(harness.logs.lines.some((line) => line.includes('"level":50'))).toBe(true);
    const leaking = harness.logs.lines.filter((line) => line.includes(apiKey) || line.includes(httpToken));
    expect(leaking).toEqual([]);
  });

  it('stores neither in Redis (records, jobs, their failure reasons)', async () => {
    const leaking: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'COUNT', 500);
      cursor = next;
      for (const key of keys) {
        const text = await readAny(redis, key);
        if (text.includes(apiKey) || text.includes(httpToken)) leaking.push(key);
      }
    } while (cursor !== '0');
    expect(leaking).toEqual([]);
  });

  it('prints neither in check-config, valid or not', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'secrets-config-'));
    try {
      const valid = join(dir, 'valid.yaml');
      const invalid = join(dir, 'invalid.yaml');
      const body =
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the file takes the key from ${PARSER_API_KEY}.
        'api:\n  baseUrl: https://api.example.com\n  apiKey: ${PARSER_API_KEY}\n' +
        'http:\n  host: 0.0.0.0\n' +
        'workspaces:\n  - identifier: ws\n    ingestEmail: in@ingest.example\n';
      await writeFile(valid, body);
      await writeFile(invalid, `${body}smtp:\n  port: seventy\n  requireTls: true\n`);
      const env = { PATH: process.env.PATH ?? '', PARSER_API_KEY: apiKey, HTTP_TOKEN: httpToken };
      const run = (path: string) =>
        promisify(execFile)(process.execPath, ['src/cli.ts', 'check-config', '--config', path], { env }).then(
          ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
          (err: { code: number; stdout: string; stderr: string }) => ({
            code: err.code,
            output: err.stdout + err.stderr,
          }),
        );
      const ok = await run(valid);
      expect(ok.code).toBe(0);
      expect(ok.output).toContain('apiKey: "[redacted]"');
      expect(ok.output).toContain('token: "[redacted]"');
      const failed = await run(invalid);
      expect(failed.code).toBe(2);
      expect(failed.output).toContain('smtp.port');
      for (const output of [ok.output, failed.output]) {
        expect(output).not.toContain(apiKey);
        expect(output).not.toContain(httpToken);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** Resolves once the gateway's intake Redis connection logs `msg` (once per change of state). */
function intakeLogged(logs: LogSink, from: number, msg: string): Promise<void> {
  return logs.waitFor((line) => line.includes('"redis":"intake"') && line.includes(`"msg":"${msg}"`), from);
}

/** A key's value as text, whatever its type. */
async function readAny(redis: Redis, key: string): Promise<string> {
  switch (await redis.type(key)) {
    case 'string':
      return (await redis.getBuffer(key))?.toString('latin1') ?? '';
    case 'hash':
      return JSON.stringify(await redis.hgetall(key));
    case 'list':
      return JSON.stringify(await redis.lrange(key, 0, -1));
    case 'set':
      return JSON.stringify(await redis.smembers(key));
    case 'zset':
      return JSON.stringify(await redis.zrange(key, '0', '-1'));
    case 'stream':
      return JSON.stringify(await redis.xrange(key, '-', '+'));
    default:
      return '';
  }
}
