import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Queue } from 'bullmq';
import type { RedisClient } from '../../queue/redis-connections.ts';
import { isDocumentStored } from '../../queue/stored-document.ts';
import { uploadJobId } from '../../queue/upload-queue.ts';
import type { KeySpace } from '../../record/keys.ts';
import type { MessageLedger } from '../../record/message-ledger.ts';
import type { FailedUploads } from '../../uploader/failed-uploads.ts';
import { createTokenCheck } from '../bearer-token.ts';
import { readQueueOverview } from '../queue-overview.ts';
import { refuse } from '../respond.ts';
import type { MessageSearch } from '../search-messages.ts';
import { readCookie, sessionCookie, sessionCookieHeader } from './console-access.ts';
import { type ConsoleSession, type ConsoleSessions, equal } from './console-session.ts';
import { failedUploadsPage } from './failed-uploads-page.ts';
import { readForm } from './form-body.ts';
import type { Html } from './html.ts';
import { loginPage } from './login-page.ts';
import { messageListPage } from './message-list-page.ts';
import { messagePage } from './message-page.ts';
import { queuesPage } from './queues-page.ts';

export interface ConsoleOptions {
  redis: RedisClient;
  keys: KeySpace;
  ledger: MessageLedger;
  search: MessageSearch;
  failedUploads: FailedUploads;
  queues: readonly Queue[];
  sessions: ConsoleSessions;
  /** http.token; null: the console is open, as the API is. */
  token: string | null;
}

/** Who is asking, as the console sees it. */
export type ConsoleVisitor = { session: ConsoleSession } | null;

/**
 * Pages may run only the console's own script and style, and no other site may frame them
 * (clickjacking the retry buttons). Mail content is escaped on top of this, not instead.
 */
const pageHeaders = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

const assets: ReadonlyMap<string, { file: string; type: string }> = new Map([
  ['/console/assets/console.css', { file: 'console.css', type: 'text/css; charset=utf-8' }],
  ['/console/assets/console.js', { file: 'console.js', type: 'text/javascript; charset=utf-8' }],
]);
const messagePagePath = /^\/messages\/([0-9a-z]{1,64})$/;
/** Where a form may send the browser back to: a page of the console, never another site. */
const localPath = /^\/(?:messages\/[0-9a-z]{1,64}|failed)?$/;

/** Whether a path is a console page, answered with a sign-in redirect rather than a 401. */
export function isConsolePage(path: string): boolean {
  return path === '/' || path === '/failed' || path === '/queues' || messagePagePath.test(path);
}

/**
 * The console: server-rendered pages over the same data as the API (console.js adds live
 * updates), its sign-in and its forms. create-http-api.ts decides who may ask; the forms
 * here check their CSRF token.
 */
export function createConsole(options: ConsoleOptions) {
  const { redis, keys, ledger, failedUploads, sessions } = options;
  const tokenMatches = options.token === null ? null : createTokenCheck(options.token);
  const assetCache = new Map<string, Buffer>();

  function send(res: ServerResponse, status: number, body: Html, headers: Record<string, string> = {}): void {
    res.writeHead(status, { ...pageHeaders, ...headers });
    res.end(body.text);
  }

  function redirect(res: ServerResponse, location: string, headers: Record<string, string> = {}): void {
    res.writeHead(303, { location, 'cache-control': 'no-store', ...headers });
    res.end();
  }

  /** The visitor's session; without http.token one is opened on the spot (the console is open). */
  function sessionFor(
    req: IncomingMessage,
    visitor: ConsoleVisitor,
  ): { session: ConsoleSession; headers: Record<string, string> } {
    if (visitor !== null) return { session: visitor.session, headers: {} };
    const issued = sessions.issue();
    return { session: issued.session, headers: { 'set-cookie': sessionCookieHeader(req, issued.cookie) } };
  }

  async function asset(path: string, res: ServerResponse): Promise<boolean> {
    const known = assets.get(path);
    if (!known) return false;
    let bytes = assetCache.get(path);
    if (!bytes) {
      // Beside this code: src/http/console/assets, or dist/assets beside the bundle's chunks.
      bytes = await readFile(new URL(`./assets/${known.file}`, import.meta.url));
      assetCache.set(path, bytes);
    }
    res.writeHead(200, {
      'content-type': known.type,
      'content-length': String(bytes.length),
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-cache',
    });
    res.end(bytes);
    return true;
  }

  async function login(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    if (tokenMatches === null) return redirect(res, '/');
    if (req.method === 'GET' || req.method === 'HEAD') {
      return send(res, 200, loginPage(safeNext(url.searchParams.get('next')), false));
    }
    if (req.method !== 'POST') {
      res.setHeader('allow', 'GET, HEAD, POST');
      return refuse(res, 405, 'method not allowed: /login answers GET, HEAD, POST');
    }
    const form = await readForm(req);
    if (form === null) return refuse(res, 415, 'expected a urlencoded form of at most 8 KiB');
    const next = safeNext(form.get('next'));
    if (!tokenMatches(form.get('token') ?? '')) return send(res, 401, loginPage(next, true));
    const { cookie } = sessions.issue();
    redirect(res, next, { 'set-cookie': sessionCookieHeader(req, cookie) });
  }

  /** GET of a console page, for a visitor create-http-api.ts let in. */
  async function show(req: IncomingMessage, res: ServerResponse, url: URL, visitor: ConsoleVisitor) {
    const { session, headers } = sessionFor(req, visitor);
    const signedIn = tokenMatches !== null;
    const logoutCsrf = signedIn ? session.csrf : null;
    const path = url.pathname;
    if (path === '/')
      return send(res, 200, await messageListPage(url.searchParams, options.search, logoutCsrf), headers);
    if (path === '/failed') {
      const notice = url.searchParams.has('retried')
        ? {
            retried: Number(url.searchParams.get('retried')) || 0,
            refused: Number(url.searchParams.get('refused')) || 0,
          }
        : null;
      return send(
        res,
        200,
        failedUploadsPage(await failedUploads.list(), session.csrf, signedIn, notice),
        headers,
      );
    }
    if (path === '/queues')
      return send(res, 200, queuesPage(await readQueueOverview(options.queues), logoutCsrf), headers);
    const id = messagePagePath.exec(path)?.[1];
    const record = id === undefined ? null : await ledger.read(id);
    if (record === null) return refuse(res, 404, `no message ${id ?? path}`);
    const stored = new Set<number>();
    for (const entry of record.attachments) {
      if (await isDocumentStored(redis, keys, { messageId: record.id, sha256: entry.sha256 }))
        stored.add(entry.entry);
    }
    const retryJob = (entry: number) => uploadJobId(record.id, entry);
    send(res, 200, messagePage({ record, stored, retryJob, csrf: session.csrf, signedIn }), headers);
  }

  /** POST of a console form: its CSRF token must be the session's. */
  async function submit(req: IncomingMessage, res: ServerResponse, path: string, visitor: ConsoleVisitor) {
    const form = await readForm(req);
    if (form === null) return refuse(res, 415, 'expected a urlencoded form of at most 8 KiB');
    if (visitor === null || !equal(form.get('csrf') ?? '', visitor.session.csrf)) {
      return refuse(res, 403, 'the form is stale or not from this console: reload the page and try again');
    }
    if (path === '/logout') {
      return redirect(res, tokenMatches === null ? '/' : '/login', {
        'set-cookie': sessionCookieHeader(req, null),
      });
    }
    const jobId = form.get('jobId');
    const outcome = await failedUploads.retry(form.get('all') === '1' || jobId === null ? 'all' : [jobId]);
    const back = form.get('back') ?? '/failed';
    if (back !== '/failed' && localPath.test(back)) return redirect(res, back);
    redirect(res, `/failed?retried=${outcome.retried.length}&refused=${outcome.refused.length}`);
  }

  return {
    asset,
    login,
    show,
    submit,
    /** The console's form targets (POST). */
    isForm: (path: string) => path === '/logout' || path === '/failed/retry',
    /** The session a request's cookie holds, if any. */
    visitor(req: IncomingMessage): ConsoleVisitor {
      const session = sessions.read(readCookie(req, sessionCookie));
      return session === null ? null : { session };
    },
  };
}

export type Console = ReturnType<typeof createConsole>;

/** Where to go after signing in: a path of this server only (not `//host`, not a URL). */
function safeNext(next: string | null): string {
  return next !== null && /^\/(?![/\\])[\x21-\x7e]*$/.test(next) ? next : '/';
}
