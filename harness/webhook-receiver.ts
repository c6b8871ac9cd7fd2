import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook, type WebhookEvent } from '../examples/webhook-receiver.ts';

/** A webhook receiver for tests: checks each signature with the README's example code. */
export interface TestWebhookReceiver {
  readonly url: string;
  readonly port: number;
  /** Events whose signature held, in arrival order (repeats included). */
  readonly events: WebhookEvent[];
  /** Deliveries refused for a bad signature. */
  readonly forged: number;
  /** Answers the next `count` deliveries 503 without reading them. */
  answer503(count: number): void;
  /** Resolves with the first event, past or future, that the predicate accepts. */
  waitFor(predicate: (event: WebhookEvent) => boolean): Promise<WebhookEvent>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(secret: string, port = 0): Promise<TestWebhookReceiver> {
  const events: WebhookEvent[] = [];
  const waiters: Array<{
    predicate: (event: WebhookEvent) => boolean;
    resolve: (event: WebhookEvent) => void;
  }> = [];
  let refuse = 0;
  let forged = 0;
  const server = createServer((req, res) => {
    if (refuse > 0) {
      refuse -= 1;
      res.writeHead(503).end();
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const header = req.headers['x-ingest-signature'];
      if (!verifyWebhook(body, typeof header === 'string' ? header : undefined, secret)) {
        forged += 1;
        res.writeHead(401).end();
        return;
      }
      const event = JSON.parse(body) as WebhookEvent;
      events.push(event);
      for (const waiter of [...waiters]) {
        if (!waiter.predicate(event)) continue;
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(event);
      }
      res.writeHead(204).end();
    });
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}/hooks`,
    port: bound,
    events,
    get forged() {
      return forged;
    },
    answer503(count) {
      refuse = count;
    },
    waitFor(predicate) {
      const seen = events.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
