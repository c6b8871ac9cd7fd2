import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Queue } from 'bullmq';
import type { HeldMail } from '../../queue/held-mail.ts';
import { uploadJobId } from '../../queue/upload-queue.ts';
import type { KeySpace } from '../../record/keys.ts';
import type { MessageIndex } from '../../record/message-index.ts';
import type { MessageLedger } from '../../record/message-ledger.ts';
import type { RefusalReader } from '../../record/refusal-log.ts';
import type { RedisClient } from '../../redis/connections.ts';
import { isDocumentStored } from '../../store/stored-document.ts';
import type { FailedUploads } from '../../uploader/failed-uploads.ts';
import { sendAttachment } from '../attachment-download.ts';
import { createTokenCheck } from '../bearer-token.ts';
import { deleteMessage } from '../delete-message.ts';
import { readQueueOverview } from '../queue-overview.ts';
import { refuse } from '../respond.ts';
import type { MessageSearch } from '../search-messages.ts';
import { readCookie, sessionCookie, sessionCookieHeader } from './console-access.ts';
import { type ConsoleSession, type ConsoleSessions, equal } from './console-session.ts';
import { failedUploadsPage } from './failed-uploads-page.ts';
import { readForm } from './form-body.ts';
import { allowScopes } from './held-actions.ts';
import { type HeldNotice, heldPage } from './held-page.ts';
import type { Html } from './html.ts';
import { loginPage } from './login-page.ts';
import { messageListPage } from './message-list-page.ts';
import { messagePage } from './message-page.ts';
import { readMessageSource } from './message-source.ts';
import { queuesPage } from './queues-page.ts';
import { refusedPage } from './refused-page.ts';
import { type RouteView, routesPage } from './routes-page.ts';

export interface ConsoleOptions {
  redis: RedisClient;
  keys: KeySpace;
  ledger: MessageLedger;
  search: MessageSearch;
  failedUploads: FailedUploads;
  /** Release and discard of held mail, for the message page's buttons. */
  heldMail: HeldMail;
  /** The refusal log, for the Refused page. */
  refusals: RefusalReader;
  /** The listing index, which a deleted message leaves. */
  index: MessageIndex;
  queues: readonly Queue[];
  /** The route table in force, for GET /routes; absent: the page says there is none to show. */
  routes?: () => RouteView;
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
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; frame-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
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
/** A message's HTML body, alone, for the sandboxed frame of its page. */
const bodyPath = /^\/messages\/([0-9a-z]{1,64})\/body\.html$/;
/** An attachment shown in place (an image or a PDF), for its preview on the message page. */
const previewPath = /^\/messages\/([0-9a-z]{1,64})\/attachments\/(\d{1,6})\/preview$/;

/**
 * The HTML body of a mail is hostile: it is served alone, as a document no script may run in
 * (CSP sandbox, and the frame's own sandbox attribute), that loads nothing from the network
 * (no tracking pixels, no remote styles or fonts: only data: URLs), submits no form, and may
 * be framed only by the console.
 */
const bodyHeaders = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; form-action 'none'; base-uri 'none'; frame-ancestors 'self'",
  'x-frame-options': 'SAMEORIGIN',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};
/** Where a form may send the browser back to: a page of the console, never another site. */
const heldFormPath = /^\/messages\/([0-9a-z]{1,64})\/(release|discard)$/;
const deleteFormPath = /^\/messages\/([0-9a-z]{1,64})\/delete$/;
const localPath = /^\/(?:messages\/[0-9a-z]{1,64}|failed|held)?$/;

/** Whether a path is a console page, answered with a sign-in redirect rather than a 401. */
export function isConsolePage(path: string): boolean {
  return (
    path === '/' ||
    path === '/failed' ||
    path === '/queues' ||
    path === '/held' ||
    path === '/refused' ||
    path === '/routes' ||
    messagePagePath.test(path) ||
    bodyPath.test(path) ||
    previewPath.test(path)
  );
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
    if (path === '/held') {
      const done = url.searchParams.get('done');
      const doneId = url.searchParams.get('id') ?? '';
      const notice: HeldNotice =
        (done === 'release' || done === 'discard') && /^[0-9a-z]{1,64}$/.test(doneId)
          ? { done, id: doneId }
          : null;
      const shown = await heldPage(url.searchParams, options.search, session.csrf, signedIn, notice);
      return send(res, 200, shown, headers);
    }
    if (path === '/refused')
      return send(res, 200, await refusedPage(url.searchParams, options.refusals, logoutCsrf), headers);
    if (path === '/queues')
      return send(res, 200, queuesPage(await readQueueOverview(options.queues), logoutCsrf), headers);
    const preview = previewPath.exec(path);
    if (preview?.[1] && preview[2]) {
      return sendAttachment(res, preview[1], Number(preview[2]), { redis, keys, ledger }, true);
    }
    const bodyOf = bodyPath.exec(path)?.[1];
    if (bodyOf !== undefined) {
      const { view } = await readMessageSource(redis, keys, bodyOf);
      if (view?.html == null) return refuse(res, 404, `no HTML body stored for message ${bodyOf}`);
      res.writeHead(200, bodyHeaders);
      res.end(view.html);
      return;
    }
    if (path === '/routes') {
      const view = options.routes?.() ?? { discovery: null, routes: [] };
      return send(res, 200, routesPage(view, logoutCsrf), headers);
    }
    const id = messagePagePath.exec(path)?.[1];
    const record = id === undefined ? null : await ledger.read(id);
    if (record === null) return refuse(res, 404, `no message ${id ?? path}`);
    const source = await readMessageSource(redis, keys, record.id);
    const stored = new Set<number>();
    for (const entry of record.attachments) {
      if (await isDocumentStored(redis, keys, { messageId: record.id, sha256: entry.sha256 }))
        stored.add(entry.entry);
    }
    const retryJob = (entry: number) => uploadJobId(record.id, entry);
    send(res, 200, messagePage({ record, stored, retryJob, csrf: session.csrf, signedIn, source }), headers);
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
    const doomed = deleteFormPath.exec(path)?.[1];
    if (doomed !== undefined) {
      const outcome = await deleteMessage(redis, keys, ledger, options.index, doomed);
      if (outcome.kind === 'missing') return refuse(res, 404, `no message ${doomed}`);
      if (outcome.kind === 'busy') return refuse(res, 409, outcome.reason);
      return redirect(res, `/?deleted=${doomed}`);
    }
    const held = heldFormPath.exec(path);
    if (held?.[1]) {
      const id = held[1];
      const allowSender = allowScopes.find((scope) => scope === form.get('allowSender'));
      if (form.get('allowSender') !== null && (held[2] !== 'release' || allowSender === undefined)) {
        return refuse(res, 400, 'allowSender is "address" or "domain", and only for a release');
      }
      // As POST /v1/messages/{id}/release answers (held-routes.ts).
      const outcome =
        held[2] === 'release'
          ? await options.heldMail.release(id, allowSender === undefined ? {} : { allowSender })
          : await options.heldMail.discard(id);
      if (outcome.kind === 'missing') return refuse(res, 404, `no message ${id}`);
      if (outcome.kind === 'conflict' || outcome.kind === 'not_allowed')
        return refuse(res, 409, outcome.reason);
      if (outcome.kind === 'service_failed') return refuse(res, 502, outcome.reason);
      if (form.get('back') === '/held') return redirect(res, `/held?done=${held[2]}&id=${id}`);
      return redirect(res, `/messages/${id}`);
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
    isForm: (path: string) =>
      path === '/logout' || path === '/failed/retry' || heldFormPath.test(path) || deleteFormPath.test(path),
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
