import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { RSPAMD_ACTIONS, type RspamdAction, type SpamAnswer } from './scan-answers.ts';
import type { RspamdSettings } from './scan-settings-schema.ts';
import { createScannerRun, describe, type ScannerRun } from './scanner-run.ts';

/** The envelope rspamd reads from the request headers of /checkv2 (rspamd's protocol documentation). */
export interface RspamdEnvelope {
  /** The SMTP client's address: rspamd's checks of the sender (and GTUBE) depend on it. */
  ip: string | null;
  helo: string | null;
  mailFrom: string | null;
  rcptTo: readonly string[];
  queueId: string;
}

/** rspamd's answer is a JSON document of a few KiB; past this it is not read. Bytes. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * One message through rspamd's normal worker: `POST /checkv2` with the raw message as the
 * request body and the envelope as headers (IP, Helo, From, one Rcpt per recipient,
 * Queue-Id, Password). The body is streamed as DATA arrives (chunked transfer encoding):
 * undici reads it as the socket takes it, so rspamd's pace holds the DATA stream back
 * rather than the gateway buffering the message.
 */
export function startRspamdCheck(settings: RspamdSettings, envelope: RspamdEnvelope): ScannerRun<SpamAnswer> {
  // Each chunk is handed over only once the body has room: at most one chunk waits in it.
  const body = new PassThrough({ highWaterMark: 0 });
  const controller = new AbortController();
  const { run, settle } = createScannerRun<SpamAnswer>('rspamd', settings.timeout, {
    async write(chunk) {
      if (body.write(chunk)) return;
      await Promise.race([once(body, 'drain'), once(body, 'close')]);
    },
    end: () => body.end(),
    close: () => {
      controller.abort();
      body.destroy();
    },
    unavailable: (reason) => ({ kind: 'unavailable', reason }),
  });
  // The body's errors (destroyed by an abort) are the request's; the request reports them.
  body.on('error', () => undefined);
  // undici is loaded with the first check: an SMTP role without rspamd never loads it.
  import('undici')
    .then(({ request }) =>
      request(`${settings.url}/checkv2`, {
        method: 'POST',
        body,
        headers: envelopeHeaders(settings, envelope),
        signal: controller.signal,
      }),
    )
    .then(
      async (response) => {
        const text = await readBounded(response.body);
        if (response.statusCode !== 200) {
          settle({ kind: 'unavailable', reason: `rspamd answered ${response.statusCode}` });
          return;
        }
        settle(parseRspamdAnswer(text));
      },
      (err: unknown) => settle({ kind: 'unavailable', reason: `rspamd: ${describe(err)}` }),
    );
  return run;
}

function envelopeHeaders(
  settings: RspamdSettings,
  envelope: RspamdEnvelope,
): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = { 'Queue-Id': envelope.queueId };
  if (envelope.ip !== null) headers.IP = envelope.ip;
  if (envelope.helo !== null) headers.Helo = envelope.helo;
  // The null sender (a bounce) is written as rspamd reads it, `<>`.
  headers.From = envelope.mailFrom === null || envelope.mailFrom === '' ? '<>' : envelope.mailFrom;
  if (envelope.rcptTo.length > 0) headers.Rcpt = [...envelope.rcptTo];
  if (settings.password !== undefined) headers.Password = settings.password;
  return headers;
}

async function readBounded(stream: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of stream) {
    bytes += chunk.length;
    if (bytes > MAX_ANSWER_BYTES) throw new Error(`rspamd answered more than ${MAX_ANSWER_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** rspamd's /checkv2 JSON, as an answer: its `action` and `score`. Pure. */
export function parseRspamdAnswer(text: string): SpamAnswer {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return { kind: 'unavailable', reason: 'rspamd answered no JSON' };
  }
  if (typeof document !== 'object' || document === null) {
    return { kind: 'unavailable', reason: 'rspamd answered no JSON object' };
  }
  const { action, score } = document as { action?: unknown; score?: unknown };
  if (!RSPAMD_ACTIONS.includes(action as RspamdAction) || typeof score !== 'number') {
    return { kind: 'unavailable', reason: `rspamd answered no known action (${JSON.stringify(action)})` };
  }
  return { kind: 'checked', action: action as RspamdAction, score };
}

/** Whether rspamd's worker answers GET /ping, within `timeout` ms: for readiness. */
export async function pingRspamd(settings: RspamdSettings, timeout: number): Promise<string | null> {
  try {
    const { request } = await import('undici');
    const response = await request(`${settings.url}/ping`, { signal: AbortSignal.timeout(timeout) });
    const text = await response.body.text();
    return response.statusCode === 200 && text.trim() === 'pong' ? null : `answered ${response.statusCode}`;
  } catch (err) {
    return describe(err);
  }
}
