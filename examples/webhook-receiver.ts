/**
 * A receiver of the gateway's webhooks that checks each delivery's signature (README,
 * "Webhooks"). Node 24 runs it as it is, with nothing to install:
 *
 *   WEBHOOK_SECRET=… PORT=8080 node examples/webhook-receiver.ts
 *
 * and point `events.webhooks[].url` at http://<host>:8080/. It prints each event it accepts.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';

/** Seconds a signature's time may lie from the receiver's clock: older deliveries are refused as replays. */
export const defaultToleranceSeconds = 300;

/**
 * Whether `header` (X-Ingest-Signature: `t=<unix seconds>,v1=<hex>`) signs `body`, the raw
 * request body exactly as received, with `secret`, at a time within the tolerance.
 */
export function verifyWebhook(
  body: string,
  header: string | undefined,
  secret: string,
  { toleranceSeconds = defaultToleranceSeconds, now = Date.now() } = {},
): boolean {
  if (header === undefined) return false;
  const fields = new Map(
    header.split(',').map((field) => {
      const at = field.indexOf('=');
      return [field.slice(0, at).trim(), field.slice(at + 1).trim()] as const;
    }),
  );
  const t = Number(fields.get('t'));
  const signature = fields.get('v1') ?? '';
  if (!Number.isInteger(t) || Math.abs(now / 1000 - t) > toleranceSeconds) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  const given = Buffer.from(signature, 'hex');
  // Constant time: how much of a guess matched must not show in how long the answer takes.
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export interface WebhookEvent {
  id: string;
  event: string;
  timestamp: string;
  payload: Record<string, unknown>;
}

/**
 * An HTTP server answering 204 to each delivery whose signature holds (after `onEvent`), 401
 * to any other. The gateway retries until a 2xx, so a receiver dedupes by the event's `id`.
 */
export function createWebhookReceiver(secret: string, onEvent: (event: WebhookEvent) => void): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const header = req.headers['x-ingest-signature'];
      if (!verifyWebhook(body, typeof header === 'string' ? header : undefined, secret)) {
        res.writeHead(401).end();
        return;
      }
      onEvent(JSON.parse(body) as WebhookEvent);
      res.writeHead(204).end();
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const secret = process.env.WEBHOOK_SECRET;
  if (!secret) throw new Error('set WEBHOOK_SECRET to the secret of events.webhooks[]');
  const seen = new Set<string>();
  createWebhookReceiver(secret, (event) => {
    if (seen.has(event.id)) return;
    seen.add(event.id);
    process.stdout.write(`${JSON.stringify(event)}\n`);
  }).listen(Number(process.env.PORT ?? 8080));
}
