import type { Logger } from 'pino';
import { Agent, request } from 'undici';
import { delay } from './delay.ts';
import type { MockDocument } from './document-store.ts';
import { errorMessage } from './error-message.ts';
import type { ResthookEvent, ResthookSubscription, SubscriptionStore } from './resthook-subscriptions.ts';
import { resthookBody, SIGNATURE_HEADER, signResthook } from './sign-resthook.ts';

/**
 * The mock's outgoing side of resthooks: the `X-Hook-Secret` handshake to a new
 * subscription's target, and the events of a finished document to active subscribers,
 * signed (sign-resthook.ts), each delivery tried up to `attempts` times with doubling
 * pauses. Failures are logged and kept with every attempt in `deliveries`
 * (`GET /_mock/hooks`); a 410 from the target ends its subscription, as REST Hooks
 * receivers use it to unsubscribe.
 */

export interface SigningOrganization {
  identifier: string;
  resthookSignatureKey: string;
}

export interface ResthookDispatcherOptions {
  subscriptions: SubscriptionStore;
  /** The organization a document's workspace belongs to: its key signs the events. */
  organizationOf(workspace: string | null): SigningOrganization;
  /** Tries per delivery; default 3. */
  attempts: number;
  /** Pause before the second try, in ms, doubled for each later one; default 1000. */
  retryDelayMs: number;
  /** Longest one handshake or delivery request may take, in ms. */
  timeoutMs: number;
  /** Deliveries given up in a row after which the subscription is deactivated (`autoDeactivated`). */
  deactivateAfter: number;
  /** Aborted when the mock closes: requests in flight and pauses end. */
  closed: AbortSignal;
  logger: Logger;
}

export interface HookAttempt {
  /** ISO 8601. */
  at: string;
  status?: number;
  error?: string;
}

export interface HookDelivery {
  identifier: string;
  subscription: string;
  event: ResthookEvent;
  targetUrl: string;
  documentIdentifier: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: HookAttempt[];
}

export type HandshakeResult = { ok: true } | { ok: false; detail: string };

export interface ResthookDispatcher {
  /** POSTs the secret to the target as `X-Hook-Secret`; ok when it answers 2xx. */
  handshake(targetUrl: string, secret: string): Promise<HandshakeResult>;
  /**
   * Queues the events of a finished document to every matching active subscription:
   * `document.rejected` for a rejection (a duplicate, a file of the wrong type),
   * `document.parse.failed` for a failure, `document.parse.succeeded` otherwise, each
   * followed by `document.parse.completed`.
   */
  documentFinished(document: MockDocument, state?: 'parsed' | 'failed' | 'rejected'): void;
  /** Every delivery, oldest first. */
  readonly deliveries: readonly HookDelivery[];
  /** Resolves with all deliveries once at least `count` are delivered or failed. */
  waitForDeliveries(count: number): Promise<HookDelivery[]>;
  /** Idempotent: ends the connections to targets (abort `closed` first) and pending waits. */
  close(): Promise<void>;
}

const USER_AGENT = 'ingest-gateway-mock-api';

export function createResthookDispatcher(options: ResthookDispatcherOptions): ResthookDispatcher {
  const logger = options.logger.child({ component: 'mock-api-resthooks' });
  const agent = new Agent({
    connect: { timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  const deliveries: HookDelivery[] = [];
  const waits = new Set<{
    count: number;
    resolve: (all: HookDelivery[]) => void;
    reject: (e: Error) => void;
  }>();
  let sequence = 0;
  let closing: Promise<void> | undefined;

  const settledCount = () => deliveries.filter((delivery) => delivery.state !== 'pending').length;
  function settle(delivery: HookDelivery, state: 'delivered' | 'failed'): void {
    delivery.state = state;
    const settled = settledCount();
    for (const wait of [...waits]) {
      if (settled < wait.count) continue;
      waits.delete(wait);
      wait.resolve([...deliveries]);
    }
  }

  /** One POST; the status, or the error that kept it from having one. */
  async function post(url: string, headers: Record<string, string>, body: string): Promise<HookAttempt> {
    const at = new Date().toISOString();
    try {
      const response = await request(url, {
        dispatcher: agent,
        method: 'POST',
        headers: { 'user-agent': USER_AGENT, ...headers },
        body,
        signal: AbortSignal.any([options.closed, AbortSignal.timeout(options.timeoutMs)]),
      });
      await response.body.dump();
      return { at, status: response.statusCode };
    } catch (caught) {
      return { at, error: errorMessage(caught) };
    }
  }

  async function deliver(delivery: HookDelivery, payload: MockDocument, key: string): Promise<void> {
    const log = logger.child({
      delivery: delivery.identifier,
      event: delivery.event,
      targetUrl: delivery.targetUrl,
    });
    for (let attempt = 1; attempt <= options.attempts; attempt++) {
      // Signed afresh each try: a receiver checks that the timestamp is recent.
      const timestamp = Math.floor(Date.now() / 1000);
      const body = resthookBody(delivery.event, timestamp, payload);
      const result = await post(
        delivery.targetUrl,
        { 'content-type': 'application/json', [SIGNATURE_HEADER]: signResthook(body, key, timestamp) },
        body,
      );
      delivery.attempts.push(result);
      if (result.status !== undefined && result.status >= 200 && result.status < 300) {
        log.debug({ attempt, status: result.status }, 'mock API delivered a resthook event');
        options.subscriptions.delivered(delivery.subscription);
        return settle(delivery, 'delivered');
      }
      if (options.closed.aborted) return settle(delivery, 'failed');
      log.warn({ attempt, status: result.status, error: result.error }, 'resthook delivery failed');
      if (result.status === 410) {
        log.warn('resthook target answered 410 Gone: the subscription is removed');
        options.subscriptions.remove(delivery.subscription);
        return settle(delivery, 'failed');
      }
      if (attempt === options.attempts) break;
      if (!(await delay(options.retryDelayMs * 2 ** (attempt - 1), options.closed))) break;
    }
    log.warn({ attempts: delivery.attempts.length }, 'resthook delivery given up');
    const last = delivery.attempts.at(-1);
    const why = last?.status === undefined ? (last?.error ?? 'no answer') : `HTTP ${last.status}`;
    const deactivated = options.subscriptions.givenUp(delivery.subscription, options.deactivateAfter, why);
    if (deactivated)
      log.warn({ reason: deactivated.autoDeactivatedReason }, 'resthook subscription deactivated');
    settle(delivery, 'failed');
  }

  function enqueue(
    subscription: ResthookSubscription,
    event: ResthookEvent,
    document: MockDocument,
    key: string,
  ) {
    sequence += 1;
    const delivery: HookDelivery = {
      identifier: `delivery-${sequence}`,
      subscription: subscription.identifier,
      event,
      targetUrl: subscription.targetUrl,
      documentIdentifier: document.meta.identifier,
      state: 'pending',
      attempts: [],
    };
    deliveries.push(delivery);
    deliver(delivery, document, key).catch((caught: unknown) => {
      logger.error({ err: caught, delivery: delivery.identifier }, 'resthook delivery crashed');
      settle(delivery, 'failed');
    });
  }

  return {
    async handshake(targetUrl, secret) {
      const result = await post(targetUrl, { 'x-hook-secret': secret, 'content-length': '0' }, '');
      if (result.status !== undefined && result.status >= 200 && result.status < 300) return { ok: true };
      const why = result.status === undefined ? result.error : `HTTP ${result.status}`;
      logger.warn({ targetUrl, why }, 'resthook handshake failed');
      return { ok: false, detail: `The target did not accept the X-Hook-Secret handshake (${why}).` };
    },
    documentFinished(document, state) {
      const workspace = document.meta.workspace?.identifier ?? null;
      const organization = options.organizationOf(workspace);
      const first: ResthookEvent =
        state === 'rejected'
          ? 'document.rejected'
          : document.meta.failed
            ? 'document.parse.failed'
            : 'document.parse.succeeded';
      const events: ResthookEvent[] = [first, 'document.parse.completed'];
      // A snapshot: the payload is what the document was when it finished.
      const payload = structuredClone(document);
      for (const event of events) {
        for (const subscription of options.subscriptions.active(event)) {
          const matches =
            subscription.workspace === null
              ? subscription.organization === organization.identifier
              : subscription.workspace === workspace;
          if (matches) enqueue(subscription, event, payload, organization.resthookSignatureKey);
        }
      }
    },
    deliveries,
    waitForDeliveries(count) {
      if (settledCount() >= count) return Promise.resolve([...deliveries]);
      if (closing) return Promise.reject(new Error('the mock API was closed'));
      return new Promise((resolve, reject) => waits.add({ count, resolve, reject }));
    },
    close() {
      closing ??= (async () => {
        const reason = new Error('the mock API was closed');
        for (const wait of waits) wait.reject(reason);
        waits.clear();
        await agent.destroy();
      })();
      return closing;
    },
  };
}
