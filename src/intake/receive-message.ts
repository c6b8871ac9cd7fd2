import type { Readable } from 'node:stream';
import type { Logger } from '../logger.ts';
import { type ContainerUnpacker, createContainerUnpacker } from '../mail/unpack-container.ts';
import { unpackContainers } from '../mail/unpack-containers.ts';
import type { GatewayMetrics } from '../metrics.ts';
import { openIncomingMessage } from '../queue/message-store.ts';
import type { EnqueueResult, Producer } from '../queue/producer.ts';
import type { RedisClient } from '../queue/redis-connections.ts';
import type { KeySpace } from '../record/keys.ts';
import { newMessageId } from '../record/message-id.ts';
import { needsAuthentication } from '../sender/admit-sender.ts';
import type { AuthenticationRun, SenderAuthenticator } from '../sender/authenticate-sender.ts';
import type { AuthSettings } from '../sender/sender-settings-schema.ts';
import { createSignatureGuard } from '../sender/signature-guard.ts';
import { type DecidePolicy, decide, type Transaction } from './decide.ts';
import {
  attachmentOutcomes,
  countAttachments,
  countSenderAuth,
  senderAuthRefusalResult,
  senderAuthResultOf,
} from './intake-metrics.ts';
import { takesBody } from './intake-settings-schema.ts';
import { storeAndWalk } from './store-and-walk.ts';
import { teeTo } from './tee-stream.ts';

/** The message limits of the `smtp` section that the intake applies while DATA streams. */
export interface IntakeLimits {
  /** Bytes of the whole message. */
  readonly maxMessageSize: number;
  /** Supported attachments per message. */
  readonly maxAttachments: number;
  /** Bytes per part. */
  readonly maxPartSize: number;
  /** Attached messages deep the walk goes. */
  readonly maxMimeDepth: number;
  /** MIME parts per message. */
  readonly maxParts: number;
  /** Refuse a bare CR or LF (SMTP smuggling). */
  readonly rejectBareLineEndings: boolean;
}

export interface ReceiveDependencies {
  limits: IntakeLimits;
  /** The `auth` section: the default authentication mode and the trusted ARC sealers. */
  auth: AuthSettings;
  redis: RedisClient;
  keys: KeySpace;
  producer: Producer;
  /** Base URL for the raw-message links recorded as sourceEmail. */
  publicUrl: string;
  /** Checks SPF, DKIM, DMARC and ARC for workspaces whose senderAuthentication is not off. */
  authenticator: SenderAuthenticator;
  /** Counts sender authentication results and attachments; absent: nothing is counted. */
  metrics?: GatewayMetrics;
  logger: Logger;
  /** Opens TNEF, Outlook items and ZIP archives; default: a process per container, two at a time. */
  unpacker?: ContainerUnpacker;
}

export type ReceiveMessage = (
  stream: Readable,
  transaction: Transaction,
  logger: Logger,
) => Promise<EnqueueResult>;

/**
 * One DATA transaction: stream the message into Redis (raw copy and decoded parts) and through
 * the MIME walk at once, decide, and commit. Resolves with the queue id only when everything
 * is in Redis; rejects with a RefusalError for a message the gateway will not take, or with
 * any other error for a failure the sender should retry. The DATA stream is always read to
 * its end, so the session can reply.
 */
export function createMessageReceiver(deps: ReceiveDependencies): ReceiveMessage {
  const { limits, auth, redis, keys, producer } = deps;
  const walkLimits = {
    maxDepth: limits.maxMimeDepth,
    maxParts: limits.maxParts,
    maxHeaderBytes: 64 * 1024,
    maxPartSize: limits.maxPartSize,
  };
  const unpacker = deps.unpacker ?? createContainerUnpacker();
  const policy: DecidePolicy = {
    maxAttachments: limits.maxAttachments,
    defaultMode: auth.senderAuthentication,
    trustedArcSealers: new Set(auth.trustedArcSealers),
  };

  return async function receive(stream, transaction, logger) {
    const incoming = openIncomingMessage(redis, keys, newMessageId());
    const authentication = startAuthentication(transaction);
    const signatures = authentication ? createSignatureGuard() : null;
    const unpackArchives = transaction.workspaces.some((workspace) => workspace.config.archives === 'unpack');
    try {
      const source = authentication
        ? teeTo(
            stream,
            authentication.input,
            limits.maxMessageSize,
            (chunk) => signatures?.push(chunk) ?? null,
          )
        : stream;
      // A message refused while it streams (a MIME limit, bare line endings, size) stops
      // authentication at once: mailauth must not keep buffering what the walk refused.
      const stored = await storeAndWalk(
        source,
        incoming,
        walkLimits,
        // Bodies and ZIP archives are stored only when an addressed workspace may use them;
        // documents are stored once, as spans of the raw copy the walk reads alongside.
        {
          storeBodies: transaction.workspaces.some((workspace) => takesBody(workspace.config)),
          storeArchives: unpackArchives,
          spansOfRaw: true,
        },
        limits.maxMessageSize,
        limits.rejectBareLineEndings,
        () => authentication?.abort(),
      );
      const { rawSha256, size } = stored;
      if (signatures?.refusal) throw signatures.refusal;
      // Containers are opened from the parts stored during DATA, now that all of them are in.
      const walk = await unpackContainers(stored.walk, {
        reader: incoming.storedParts,
        store: incoming.parts,
        limits: walkLimits,
        unpacker,
        unpackArchives,
        budget: {
          maxBytes: limits.maxMessageSize,
          maxEntries: limits.maxParts,
          maxAttachments: limits.maxAttachments,
        },
      });
      const evidence = authentication ? await authentication.evidence : null;
      const decision = decide({
        queueId: incoming.messageId,
        walk,
        transaction,
        authentication: evidence,
        size,
        rawSha256,
        now: new Date().toISOString(),
        publicUrl: deps.publicUrl,
        policy,
      });
      countSenderAuth(deps.metrics, senderAuthResultOf(decision.summary.authentication));
      const result = await producer.enqueue({ incoming, ...decision });
      // A repeated delivery adds no entries: its attachments were counted when first committed.
      if (!result.duplicate) countAttachments(deps.metrics, attachmentOutcomes(decision));
      logger.info(
        {
          queueId: result.messageId,
          duplicate: result.duplicate,
          size,
          uploads: decision.entries.filter((entry) => entry.state === 'queued').length,
        },
        'message accepted',
      );
      return result;
    } catch (err) {
      countSenderAuth(deps.metrics, senderAuthRefusalResult(err));
      authentication?.abort();
      await incoming.discard();
      throw err;
    }
  };

  /** Sender authentication alongside the DATA stream, when an addressed workspace asks for it. */
  function startAuthentication(transaction: Transaction): AuthenticationRun | null {
    if (!needsAuthentication(transaction.workspaces, auth.senderAuthentication)) return null;
    return deps.authenticator.start({
      remoteAddress: transaction.remoteAddress,
      helo: transaction.helo,
      mailFrom: transaction.mailFrom,
    });
  }
}
