import type { Queue } from 'bullmq';
import * as z from 'zod/mini';
import type { Logger } from '../logger.ts';
import type { GatewayMetrics } from '../metrics.ts';
import { type Document, parseDocument } from '../parsing-api/document-schema.ts';
import type { EventAnnouncer } from '../queue/announce-events.ts';
import { type CompletionJobData, completionJobId } from '../queue/completion-queue.ts';
import type { KeySpace } from '../record/keys.ts';
import type { MessageLedger } from '../record/message-ledger.ts';
import type { RedisClient } from '../redis/connections.ts';
import { DEFAULT_MAX_AGE_SECONDS, deliveryDigest, verifyResthookSignature } from './resthook-signature.ts';
import { type ParseOutcome, type SettleDeps, settleParseOutcome } from './settle-parse-outcome.ts';

/**
 * The receiving end of the service's parse events (trackCompletion via resthook), behind
 * POST /v1/resthooks:
 * - the activation handshake (`X-Hook-Secret`): taken only while this gateway is making a
 *   subscription (resthook-subscriber.ts holds the lock), the secret handed to it in Redis
 *   for it to confirm;
 * - a delivery: its signature checked against the signing keys of the organizations
 *   subscribed with, its timestamp's age bounded, a repeat (same signature) taken once; then
 *   the outcome settled on the document's entry and announced (settle-parse-outcome.ts).
 *   An outcome that comes before the upload has recorded its document waits in Redis for
 *   the upload to take it (takePushedOutcome).
 * Needs no HTTP client: it runs in every process's HTTP role.
 */

export interface ReceiverAnswer {
  status: number;
  /** Said in the JSON answer; for a refusal, why. */
  message: string;
}

export interface ResthookReceiver {
  handshake(secret: string): Promise<ReceiverAnswer>;
  deliver(rawBody: Buffer, signature: string | undefined): Promise<ReceiverAnswer>;
}

/** What the subscriber keeps of one workspace's subscriptions (resthook-subscriber.ts). */
export const subscribedWorkspaceSchema = z.object({
  workspace: z.string(),
  targetUrl: z.string(),
  apiBaseUrl: z.string(),
  organization: z.string(),
  resthookSignatureKey: z.string(),
  subscriptions: z.array(z.string()),
});

export type SubscribedWorkspace = z.infer<typeof subscribedWorkspaceSchema>;

/** The events subscribed to, and what each says of the document. */
export const PARSE_EVENTS = {
  'document.parse.succeeded': 'ready',
  'document.parse.failed': 'failed',
  'document.rejected': 'failed',
} as const;

/** How long a handshake's secret waits for the subscriber, and a pushed outcome for its upload. */
const HANDSHAKE_TTL_MS = 60_000;
const PENDING_TTL_SECONDS = 3600;

const deliveryBodySchema = z.object({
  event: z.string(),
  timestamp: z.optional(z.unknown()),
  payload: z.unknown(),
});

export interface ResthookReceiverOptions {
  redis: RedisClient;
  keys: KeySpace;
  ledger: MessageLedger;
  announcer?: EventAnnouncer | undefined;
  metrics?: GatewayMetrics | undefined;
  /** Completion tracking's queue: a settled document's fallback poll is removed from it. */
  completion?: Queue<CompletionJobData> | undefined;
  logger: Logger;
  /** Accepted age of a delivery's timestamp, s; default 300. */
  maxAgeSeconds?: number;
  /** Epoch milliseconds; injected for tests. */
  now?: () => number;
}

export function createResthookReceiver(options: ResthookReceiverOptions): ResthookReceiver {
  const { redis, keys } = options;
  const log = options.logger.child({ component: 'resthooks' });
  const now = options.now ?? Date.now;
  const maxAgeSeconds = options.maxAgeSeconds ?? DEFAULT_MAX_AGE_SECONDS;
  const deps: SettleDeps = { ledger: options.ledger, announcer: options.announcer, metrics: options.metrics };

  async function signingKeys(): Promise<string[]> {
    const workspaces = await redis.smembers(keys.resthooks.workspaces);
    const found = new Set<string>();
    for (const workspace of workspaces) {
      const state = await readSubscribedWorkspace(redis, keys, workspace);
      if (state) found.add(state.resthookSignatureKey);
    }
    return [...found];
  }

  return {
    async handshake(secret) {
      // Only while a subscription is being made: otherwise nobody asked for this handshake.
      if ((await redis.exists(keys.resthooks.lock)) === 0) {
        log.warn('resthook handshake refused: no subscription is being made');
        return { status: 409, message: 'no subscription is being made' };
      }
      await redis.set(keys.resthooks.handshake, secret, 'PX', HANDSHAKE_TTL_MS);
      return { status: 200, message: 'handshake received' };
    },
    async deliver(rawBody, signature) {
      const check = verifyResthookSignature({
        rawBody,
        header: signature,
        keys: await signingKeys(),
        nowSeconds: Math.floor(now() / 1000),
        maxAgeSeconds,
      });
      if (!check.ok) {
        log.warn({ problem: check.problem }, 'resthook delivery refused');
        return { status: 401, message: check.problem };
      }
      let body: z.infer<typeof deliveryBodySchema>;
      try {
        body = deliveryBodySchema.parse(JSON.parse(rawBody.toString('utf8')));
      } catch {
        return { status: 400, message: 'the body is not {event, timestamp, payload}' };
      }
      if (typeof body.timestamp === 'number' && body.timestamp !== check.timestamp) {
        return { status: 401, message: "the body's timestamp is not the signature's" };
      }
      // Taken once: a repeat of the same delivery (a replay, a retry after a lost answer) is answered, not applied.
      const first = await redis.set(
        keys.resthooks.seen(deliveryDigest(check.timestamp, check.signature)),
        '1',
        'EX',
        2 * maxAgeSeconds,
        'NX',
      );
      if (first === null) {
        log.info({ event: body.event }, 'resthook delivery repeated: already taken');
        return { status: 200, message: 'repeat: already taken' };
      }
      const state = PARSE_EVENTS[body.event as keyof typeof PARSE_EVENTS];
      const document = parseDocument(body.payload);
      if (state === undefined || document === null) {
        return { status: 200, message: `event ${body.event} ignored` };
      }
      if (state === 'ready' && (document.meta.childDocuments ?? []).length > 0) {
        // Split by the workspace's splitter: parsed when every child is, which polling reads.
        log.info(
          { documentIdentifier: document.meta.identifier },
          'resthook for a split document: polling settles it',
        );
        return { status: 200, message: 'a split document: settled when its children are' };
      }
      const outcome = outcomeOf(state, document);
      const result = await settleDocument(document.meta.identifier, outcome);
      log.info(
        { event: body.event, documentIdentifier: document.meta.identifier, result },
        'resthook delivery taken',
      );
      return { status: 200, message: result };
    },
  };

  /** Settles the document's entry, or keeps the outcome for the upload still recording it. */
  async function settleDocument(documentIdentifier: string, outcome: ParseOutcome): Promise<string> {
    const source = await options.ledger.findDocument(documentIdentifier);
    const entry = source ? await options.ledger.readEntry(source.messageId, source.entry) : null;
    if (source === null || entry === null || entry.state !== 'uploaded') {
      // The event came before the upload wrote its answer (or for a document not uploaded here):
      // the upload takes it when it starts tracking; otherwise it expires.
      await redis.set(
        keys.resthooks.pending(documentIdentifier),
        JSON.stringify({ state: outcome.state, reason: outcome.reason }),
        'EX',
        PENDING_TTL_SECONDS,
      );
      return 'kept for its upload';
    }
    const result = await settleParseOutcome(deps, source, outcome);
    if (result === 'settled' && options.completion) {
      // The fallback poll is no longer needed; a poll already running finds the entry settled.
      await options.completion.remove(completionJobId(source.messageId, source.entry)).catch(() => 0);
    }
    return result;
  }
}

function outcomeOf(state: 'ready' | 'failed', document: Document): ParseOutcome {
  const errorCode = document.error?.errorCode ?? document.meta.errorCode ?? null;
  const errorDetail = document.error?.errorDetail ?? document.meta.errorDetail ?? '';
  const reason = state === 'failed' ? `${errorCode ?? 'parse_failed'}: ${errorDetail}` : null;
  return { state, reason, document, settledBy: 'resthook' };
}

export async function readSubscribedWorkspace(
  redis: RedisClient,
  keys: KeySpace,
  workspace: string,
): Promise<SubscribedWorkspace | null> {
  const text = await redis.get(keys.resthooks.workspace(workspace));
  if (text === null) return null;
  try {
    const parsed = subscribedWorkspaceSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * An outcome the service pushed before the upload recorded its document, taken (and
 * deleted) by the upload as it starts tracking; null when none came.
 */
export async function takePushedOutcome(
  redis: RedisClient,
  keys: KeySpace,
  documentIdentifier: string,
): Promise<Pick<ParseOutcome, 'state' | 'reason'> | null> {
  const text = await redis.getdel(keys.resthooks.pending(documentIdentifier));
  if (text === null) return null;
  const parsed = z
    .object({ state: z.enum(['ready', 'failed']), reason: z.nullable(z.string()) })
    .safeParse(JSON.parse(text));
  return parsed.success ? parsed.data : null;
}
