import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { isIPv6 } from 'node:net';
import { type Logger, pino } from 'pino';
import { applyFault } from './apply-fault.ts';
import {
  changeDocumentListSettings,
  type DocumentListSettings,
  type DocumentListSettingsInput,
  documentListSettings,
} from './document-list-settings.ts';
import {
  createDocumentSide,
  type DocumentSideApi,
  type DocumentSideOptions,
  inMockOrganization,
} from './document-side.ts';
import type { MockDocument } from './document-store.ts';
import {
  createDocumentTypeStore,
  type DocumentTypeSeed,
  type DocumentTypeStore,
} from './document-type-store.ts';
import { createFaultQueue, type MockFault } from './faults.ts';
import { handleControl } from './handle-control.ts';
import { handleGetDocument, handleListDocuments } from './handle-read.ts';
import { handleResthooks, RESTHOOK_PATH } from './handle-resthooks.ts';
import { handleUpload } from './handle-upload.ts';
import { handleWorkspace, matchWorkspacePath } from './handle-workspaces.ts';
import type { MockContext } from './mock-context.ts';
import {
  changeOrganizationListSettings,
  handleOrganizationList,
  matchOrganizationList,
  type OrganizationListSettings,
  type OrganizationListSettingsInput,
  organizationListSettingsSchema,
} from './organization-lists.ts';
import { createUploadLog, type ReceivedUpload, type UploadListener } from './received-uploads.ts';
import { clientError, notFound, serverError } from './request-error.ts';
import { respond } from './respond.ts';
import type { WorkspaceSeed } from './workspace-seed.ts';
import { createWorkspaceStore, type WorkspaceStore } from './workspace-store.ts';

/**
 * A faithful fake of the parsing API (README.md, "What it imitates") on node:http:
 * the upload and its processing rules, the reads a poller uses, resthook subscriptions and
 * signed events, the RequestError bodies and the authentication, plus
 * a control surface under /_mock (see handle-control.ts) for injecting faults. Tests run it
 * on port 0; the gateway runs it in-process in its mock mode; the `mock-parsing-api` command
 * runs it alone (README.md).
 */

export interface MockApiOptions extends DocumentSideOptions {
  /** The key clients must send as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  /** A pino logger; the mock logs under a child with `component: 'mock-api'`. Default: silent. */
  logger?: Logger;
  /** Largest accepted file in bytes; default 20 MiB (the service's 20 MB limit). */
  maxFileBytes?: number;
  /** Keep uploaded bytes in `uploads`; default true. A long-running sidecar sets false. */
  retainFileBytes?: boolean;
  /** Workspaces of `/v3/workspaces/{identifier}` (workspace-seed.ts); default none. */
  workspaces?: readonly WorkspaceSeed[];
  /**
   * How `GET /v3/documents` lists (document-list-settings.ts): `items` `document` (default)
   * or `meta`, `pageSize` null (default: one page) or results per page.
   */
  documentList?: DocumentListSettingsInput;
  /** Document types of `GET /v3/document_types` (document-type-store.ts); default none. */
  documentTypes?: readonly DocumentTypeSeed[];
  /**
   * How `GET /v3/workspaces` and `GET /v3/document_types` list (organization-lists.ts):
   * `shape` `page` (default) or `bare`, `pageSize` null (default: one page) or results per page.
   */
  organizationLists?: OrganizationListSettingsInput;
}

export interface MockApi extends DocumentSideApi {
  /** Listens; port 0 picks a free port. The URL is the base URL to give a client. */
  start(address: { host: string; port: number }): Promise<{ url: string }>;
  /**
   * Idempotent. Closes every connection (hung requests included), ends pending processing
   * and resthook retries, and rejects pending `waitForUploads` and `waitForHookDeliveries`.
   */
  close(): Promise<void>;
  /** Accepted uploads, oldest first. */
  readonly uploads: readonly ReceivedUpload[];
  readonly documents: ReadonlyMap<string, MockDocument>;
  /**
   * Queues a fault (faults.ts) for the next matching request, by default the next upload;
   * throws when the fault is malformed.
   */
  enqueueFault(fault: MockFault): void;
  /** Empties the fault queue, `times: "always"` entries included. */
  clearFaults(): void;
  onUpload(listener: UploadListener): () => void;
  /** Resolves with all uploads once at least `count` have arrived. */
  waitForUploads(count: number): Promise<ReceivedUpload[]>;
  /**
   * The workspaces as they are now, and every request made to them; `add`, `remove` and
   * `rotate` change them at run time, as `/_mock/workspaces` does.
   */
  readonly workspaces: WorkspaceStore;
  /** The document types; `add`, `remove` and `rotate` as for workspaces (`/_mock/document_types`). */
  readonly documentTypes: DocumentTypeStore;
  /** How the organization lists answer now; `setOrganizationLists` changes it. */
  readonly organizationLists: OrganizationListSettings;
  /** Changes the settings given, keeps the others; throws a ZodError for a bad one. */
  setOrganizationLists(change: OrganizationListSettingsInput): OrganizationListSettings;
  /** How `GET /v3/documents` lists now; `setDocumentList` changes it, as `PATCH /_mock/settings` does. */
  readonly documentList: DocumentListSettings;
  /** Changes the settings given, keeps the others; throws a ZodError for a bad one. */
  setDocumentList(change: DocumentListSettingsInput): DocumentListSettings;
}

/** 20 MiB: the service documents "20 MB"; the mock takes the more generous reading. */
const DEFAULT_MAX_FILE_BYTES = 20 * 1024 * 1024;

const DOCUMENT_PATH = /^\/v3\/documents\/([^/]+)\/?$/;

export function createMockApi(options: MockApiOptions): MockApi {
  const logger = (options.logger ?? pino({ level: 'silent' })).child({ component: 'mock-api' });
  // Aborted by close(): every wait the document side and the faults start ends with it.
  const closer = new AbortController();
  const documentSide = createDocumentSide(options, {
    logger,
    closed: closer.signal,
    workspaces: () => workspaces,
  });
  const workspaces = createWorkspaceStore(
    inMockOrganization(options.workspaces, documentSide.organization),
    documentSide.organization,
  );
  const documentTypes = createDocumentTypeStore(
    options.documentTypes ?? [],
    documentSide.organization.identifier,
  );
  const context: MockContext = {
    apiKey: options.apiKey,
    logger,
    store: documentSide.store,
    uploads: createUploadLog(),
    faults: createFaultQueue(),
    lateCommits: new WeakMap(),
    documentList: documentListSettings(options.documentList),
    organizationLists: organizationListSettingsSchema.parse(options.organizationLists ?? {}),
    documentTypes,
    maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
    retainFileBytes: options.retainFileBytes ?? true,
    workspaces,
    workspaceSettings: (identifier) => workspaces.settings(identifier),
    closed: closer.signal,
    parses: documentSide.parses,
    credits: documentSide.credits,
    resthooks: documentSide.resthooks,
    organization: documentSide.organization,
  };
  const server = createServer((req, res) => {
    route(context, req, res).catch((caught: unknown) => {
      // Bad input must never take the process down: answer 500 if we still can.
      logger.error({ err: caught, method: req.method, url: req.url }, 'mock API handler failed');
      if (res.headersSent) res.destroy();
      else respond(res, 500, serverError('A server error occurred.'));
    });
  });
  let started = false;
  let closing: Promise<void> | undefined;

  return {
    async start({ host, port }) {
      if (started || closing) throw new Error('the mock API can be started once');
      started = true;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('the mock API has no TCP address');
      const url = `http://${urlHost(host)}:${address.port}`;
      logger.info({ url }, 'mock parsing API listening');
      return { url };
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        closer.abort();
        context.uploads.close(new Error('the mock API was closed'));
        if (!server.listening) {
          resolve();
          return;
        }
        server.close(() => resolve());
        // Keep-alive connections from a client's pool would hold close() open otherwise.
        server.closeAllConnections();
      }).then(() => documentSide.close());
      return closing;
    },
    get uploads() {
      return context.uploads.uploads;
    },
    documents: context.store.documents,
    enqueueFault: (fault) => context.faults.enqueue(fault),
    clearFaults: () => context.faults.clear(),
    get creditsUsed() {
      return context.credits.used;
    },
    organization: documentSide.organization,
    hookDeliveries: documentSide.resthooks.dispatcher.deliveries,
    waitForHookDeliveries: (count) => documentSide.resthooks.dispatcher.waitForDeliveries(count),
    onUpload: (listener) => context.uploads.onUpload(listener),
    waitForUploads: (count) => context.uploads.waitForUploads(count),
    workspaces,
    get documentList() {
      return context.documentList;
    },
    documentTypes,
    get organizationLists() {
      return context.organizationLists;
    },
    setOrganizationLists(change) {
      context.organizationLists = changeOrganizationListSettings(context.organizationLists, change);
      return context.organizationLists;
    },
    setDocumentList(change) {
      context.documentList = changeDocumentListSettings(context.documentList, change);
      return context.documentList;
    },
  };
}

async function route(context: MockContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = URL.parse(req.url ?? '/', 'http://mock.invalid');
  if (url === null) return respond(res, 400, clientError('parse_error', 'Malformed request target.'));
  const path = url.pathname;
  const snakeCase = url.searchParams.get('snake_case') === 'true';
  context.logger.debug({ method: req.method, path }, 'mock API request');

  if (path.startsWith('/_mock/')) return handleControl(context, req, res, path);
  if (path.startsWith('/v3/') && (await applyFault(context, req, res, path)) === 'answered') return;
  if (path === RESTHOOK_PATH || path.startsWith(`${RESTHOOK_PATH}/`)) {
    return handleResthooks(context, req, res, path, snakeCase);
  }
  if (path === '/v3/documents' || path === '/v3/documents/') {
    if (req.method === 'POST') return handleUpload(context, req, res, snakeCase);
    if (req.method === 'GET') return handleListDocuments(context, req, res, url.searchParams, snakeCase);
    return methodNotAllowed(req, res);
  }
  const identifier = decodeSegment(DOCUMENT_PATH.exec(path)?.[1]);
  if (identifier !== undefined) {
    if (req.method === 'GET') return handleGetDocument(context, req, res, identifier, snakeCase);
    return methodNotAllowed(req, res);
  }
  const list = matchOrganizationList(path);
  if (list !== undefined) {
    return handleOrganizationList(context, req, res, list, path, url.searchParams, snakeCase);
  }
  const workspace = matchWorkspacePath(path);
  if (workspace !== undefined) return handleWorkspace(context, req, res, workspace, snakeCase);
  return respond(res, 404, notFound());
}

function methodNotAllowed(req: IncomingMessage, res: ServerResponse): void {
  const detail = `Method "${req.method ?? ''}" not allowed.`;
  respond(res, 405, clientError('method_not_allowed', detail));
}

function decodeSegment(segment: string | undefined): string | undefined {
  if (segment === undefined) return undefined;
  try {
    return decodeURIComponent(segment);
  } catch {
    // A malformed %-escape names no document.
    return undefined;
  }
}

/** The host for the URL clients use: a wildcard address is reached through loopback. */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return isIPv6(host) ? `[${host}]` : host;
}
