import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { type CreditMeter, createCreditMeter } from './credit-meter.ts';
import { createDocumentStore, type DocumentStore } from './document-store.ts';
import { createParseRunner, type ParseRunner } from './parse-runner.ts';
import {
  createResthookDispatcher,
  type HookDelivery,
  type ResthookDispatcher,
} from './resthook-dispatcher.ts';
import { createSubscriptionStore, type SubscriptionStore } from './resthook-subscriptions.ts';
import type { WorkspaceSeed } from './workspace-seed.ts';
import type { WorkspaceStore } from './workspace-store.ts';

/**
 * The document side of the mock, built together because each part feeds the next: the
 * document store, the processing that finishes documents (parse-runner.ts), the credits
 * they cost, and the resthook events they raise. createMockApi wires it into the context
 * and exposes `DocumentSideApi` on the MockApi.
 */

export interface DocumentSideOptions {
  /**
   * Milliseconds a document stays pending before it is finished; default 0. A `wait=false`
   * upload is then seen pending by reads for that long; a `wait=true` one is answered after it.
   */
  processingMs?: number;
  /**
   * The mock's organization: that of every seeded workspace that names no other, and of
   * documents in workspaces the mock was not seeded with. Default `mock-organization`.
   */
  organization?: { identifier?: string; name?: string };
  /** The organization's `resthookSignatureKey`, the HMAC key of events; default 32 random bytes as hex. */
  resthookSignatureKey?: string;
  /** Tries per resthook delivery; default 3. */
  resthookAttempts?: number;
  /** Pause before the second try of a delivery, in ms, doubled for each later one; default 1000. */
  resthookRetryDelayMs?: number;
  /** Longest one handshake or delivery request may take, in ms; default 10000. */
  resthookTimeoutMs?: number;
  /** Deliveries given up in a row after which a subscription is deactivated; default 5. */
  resthookDeactivateAfter?: number;
}

export interface MockOrganizationSummary {
  identifier: string;
  name: string;
  resthookSignatureKey: string;
}

export interface DocumentSide {
  store: DocumentStore;
  credits: CreditMeter;
  parses: ParseRunner;
  resthooks: { subscriptions: SubscriptionStore; dispatcher: ResthookDispatcher };
  organization: MockOrganizationSummary;
  /** Idempotent; abort the `closed` signal first. */
  close(): Promise<void>;
}

/** What the MockApi object offers of the document side. */
export interface DocumentSideApi {
  /** Credits used so far: one per document parsed, none for rejected ones. */
  readonly creditsUsed: number;
  readonly organization: MockOrganizationSummary;
  /** Every resthook delivery with its attempts, oldest first. */
  readonly hookDeliveries: readonly HookDelivery[];
  /** Resolves with all deliveries once at least `count` are delivered or have failed for good. */
  waitForHookDeliveries(count: number): Promise<HookDelivery[]>;
}

/** Longest `processingMs`: one minute, past any client timeout a test would set. */
export const MAX_PROCESSING_MS = 60_000;

export function createDocumentSide(
  options: DocumentSideOptions,
  deps: { logger: Logger; closed: AbortSignal; workspaces: () => WorkspaceStore },
): DocumentSide {
  const processingMs = options.processingMs ?? 0;
  if (!Number.isInteger(processingMs) || processingMs < 0 || processingMs > MAX_PROCESSING_MS) {
    throw new Error(
      `processingMs must be a whole number from 0 to ${MAX_PROCESSING_MS}, got ${processingMs}`,
    );
  }
  const attempts = options.resthookAttempts ?? 3;
  if (!Number.isInteger(attempts) || attempts < 1) {
    throw new Error(`resthookAttempts must be a whole number of at least 1, got ${attempts}`);
  }
  const organization: MockOrganizationSummary = {
    identifier: options.organization?.identifier ?? 'mock-organization',
    name: options.organization?.name ?? 'Mock Organization',
    resthookSignatureKey: options.resthookSignatureKey ?? randomBytes(32).toString('hex'),
  };
  const store = createDocumentStore();
  const credits = createCreditMeter();
  const subscriptions = createSubscriptionStore();
  const dispatcher = createResthookDispatcher({
    subscriptions,
    organizationOf(workspace) {
      const known = workspace === null ? undefined : deps.workspaces().get(workspace)?.organization;
      return known ?? organization;
    },
    attempts,
    retryDelayMs: options.resthookRetryDelayMs ?? 1000,
    timeoutMs: options.resthookTimeoutMs ?? 10_000,
    deactivateAfter: options.resthookDeactivateAfter ?? 5,
    closed: deps.closed,
    logger: deps.logger,
  });
  const parses = createParseRunner({
    store,
    credits,
    processingMs,
    closed: deps.closed,
    onFinished: (document, state) => dispatcher.documentFinished(document, state),
    logger: deps.logger,
  });
  return {
    store,
    credits,
    parses,
    resthooks: { subscriptions, dispatcher },
    organization,
    close: () => dispatcher.close(),
  };
}

/**
 * Seeds whose workspaces belong to the mock's organization unless they name another, so
 * one organization (and one signing key) is what a workspace shows and what signs its
 * events.
 */
export function inMockOrganization(
  seeds: readonly WorkspaceSeed[] | undefined,
  organization: MockOrganizationSummary,
): WorkspaceSeed[] {
  return (seeds ?? []).map((seed) => {
    const named = seed.organization?.identifier;
    if (named !== undefined && named !== organization.identifier) return seed;
    return { ...seed, organization: { ...organization, ...seed.organization } };
  });
}
