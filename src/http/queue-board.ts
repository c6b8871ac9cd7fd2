import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Queue } from 'bullmq';

/** Where Bull Board answers. */
export const boardPath = '/admin/queues';

type BoardHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * Bull Board (job by job: data, logs, state) for the gateway's BullMQ queues, mounted rather
 * than re-written, read-only: its remove, clean, empty and promote act on BullMQ alone, so a
 * waiting, delayed or active upload job removed there would leave its message record's entry
 * `queued` for ever. Retries go through the console's /failed page, which keeps the record.
 * Its Hono adapter: the lightest of the published ones (Hono has no dependencies of its own;
 * Express brings a framework and its tree), turned into a node:http handler by
 * @hono/node-server. create-http-api.ts authenticates first.
 *
 * Loaded on the first request to it: Bull Board and what it brings (Hono, lodash, valibot, its
 * templates) are several MiB of an idle daemon's memory that most daemons never use.
 */
export function createQueueBoard(queues: readonly Queue[]): BoardHandler {
  let mounted: Promise<BoardHandler> | undefined;
  return async (req, res) => {
    mounted ??= mountBoard(queues).catch((err: unknown) => {
      // A failed load is tried again by the next request rather than remembered.
      mounted = undefined;
      throw err;
    });
    return (await mounted)(req, res);
  };
}

async function mountBoard(queues: readonly Queue[]): Promise<BoardHandler> {
  const [
    { createBullBoard },
    { BullMQAdapter },
    { HonoAdapter },
    { getRequestListener },
    { serveStatic },
    { Hono },
  ] = await Promise.all([
    import('@bull-board/api'),
    import('@bull-board/api/bullMQAdapter'),
    import('@bull-board/hono'),
    import('@hono/node-server'),
    import('@hono/node-server/serve-static'),
    import('hono'),
  ]);
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
  return (req, res) => listener(req, res);
}

export function isBoardPath(path: string): boolean {
  return path === boardPath || path.startsWith(`${boardPath}/`);
}
