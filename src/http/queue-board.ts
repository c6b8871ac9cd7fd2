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
 * Bull Board (job by job: data, logs, retry, promote, clean) for the gateway's BullMQ queues,
 * mounted rather than re-written. Its Hono adapter: the lightest of the published ones
 * (Hono has no dependencies of its own; Express brings a framework and its tree), turned
 * into a node:http handler by @hono/node-server. create-http-api.ts authenticates first; its UI's own requests carry the
 * console cookie, and their Origin is checked like every state-changing request's.
 */
export function createQueueBoard(queues: readonly Queue[]) {
  const adapter = new HonoAdapter(serveStatic);
  adapter.setBasePath(boardPath);
  createBullBoard({
    queues: queues.map((queue) => new BullMQAdapter(queue)),
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
