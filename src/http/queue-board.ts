import type { IncomingMessage, ServerResponse } from 'node:http';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { getRequestListener } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Queue } from 'bullmq';
import { Hono } from 'hono';

/** Where Bull Board answers. */
export const boardPath = '/admin/queues';

/**
 * Bull Board (job by job: data, logs, state) for the gateway's BullMQ queues, mounted rather
 * than re-written, read-only: its remove, clean, empty and promote act on BullMQ alone, so a
 * waiting, delayed or active upload job removed there would leave its message record's entry
 * `queued` for ever. Retries go through the console's /failed page, which keeps the record.
 * Its Hono adapter: the lightest of the published ones (Hono has no dependencies of its own;
 * Express brings a framework and its tree), turned into a node:http handler by
 * @hono/node-server. create-http-api.ts authenticates first.
 */
export function createQueueBoard(queues: readonly Queue[]) {
  const adapter = new HonoAdapter(serveStatic);
  adapter.setBasePath(boardPath);
  createBullBoard({
    queues: queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode: true })),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'ingest-gateway' } },
  });
  const app = new Hono({ strict: false }).route(boardPath, adapter.registerPlugin());
  // Not overriding the global Request and Response: the rest of the process uses Node's own.
  const listener = getRequestListener(app.fetch, { overrideGlobalObjects: false });
  return (req: IncomingMessage, res: ServerResponse): Promise<void> => listener(req, res);
}

export function isBoardPath(path: string): boolean {
  return path === boardPath || path.startsWith(`${boardPath}/`);
}
