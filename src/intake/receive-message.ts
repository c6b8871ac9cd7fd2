import type { Readable } from 'node:stream';
import { RefusalError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { type ContainerUnpacker, createContainerUnpacker } from '../mail/containers/container-process.ts';
import { unpackContainers } from '../mail/containers/unpack-containers.ts';
import { createHeaderBlockMeter } from '../mail/header-block-meter.ts';
import { MAX_HEADER_BYTES } from '../mail/walk-limits.ts';
import type { GatewayMetrics } from '../metrics.ts';
import type { EnqueueResult, Producer } from '../queue/producer.ts';
import type { KeySpace } from '../record/keys.ts';
import { newMessageId } from '../record/message-id.ts';
import type { RedisClient } from '../redis/connections.ts';
import type { ScanSettings } from '../scan/scan-settings-schema.ts';
import { needsAuthentication } from '../sender/admit-sender.ts';
import type { AuthenticationRun, SenderAuthenticator } from '../sender/authenticate-sender.ts';
import { parseFromHeader } from '../sender/parse-from-header.ts';
import type { AuthSettings } from '../sender/sender-settings-schema.ts';
import { createSignatureGuard } from '../sender/signature-guard.ts';
import { openIncomingMessage } from '../store/message-store.ts';
import { readBodyText } from './body-text.ts';
import { type DecidePolicy, type Decision, decide, type Transaction } from './decide.ts';
import { forwardingProviderOf } from './forwarding-confirmation.ts';
import {
  attachmentOutcomes,
  countAttachments,
  countSenderAuth,
  senderAuthRefusalResult,
  senderAuthResultOf,
} from './intake-metrics.ts';
import { takesBody } from './intake-settings-schema.ts';
import { keepForPostmaster } from './keep-for-postmaster.ts';
import { scanMessage, verdictOf } from './scan-message.ts';
import { smimeKeySource } from './smime-keys.ts';
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
  /** The `scan` section: the scanners each message streams through; absent: none. */
  scan?: ScanSettings;
  /**
   * For a sender the allow-lists do not admit: reads the senders allowed at releases again and
   * answers the transaction with its workspaces' lists as they are now, or null when nothing
   * changed. Another instance may have allowed the sender a moment ago.
   */
  readmit?: (transaction: Transaction) => Promise<Transaction | null>;
}

/** What the intake learned of a message before it took or refused it, for the refusal log. */
export interface ReadSoFar {
  /** The first header From, once the headers were read; null before, or when there is none. */
  headerFrom: string | null;
}

export type ReceiveMessage = (
  stream: Readable,
  transaction: Transaction,
  logger: Logger,
  /** Filled in as the message is read; absent: nobody asks. */
  readSoFar?: ReadSoFar,
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
    maxHeaderBytes: MAX_HEADER_BYTES,
    maxPartSize: limits.maxPartSize,
  };
  const unpacker = deps.unpacker ?? createContainerUnpacker();
  const policy: DecidePolicy = {
    maxAttachments: limits.maxAttachments,
    defaultMode: auth.senderAuthentication,
    trustedArcSealers: new Set(auth.trustedArcSealers),
  };

  return async function receive(stream, transaction, logger, readSoFar) {
    const incoming = openIncomingMessage(redis, keys, newMessageId());
    const authentication = startAuthentication(transaction);
    const signatures = authentication ? createSignatureGuard() : null;
    // mailauth holds the header block whole until it ends: it gets no more of it than the walk
    // reads, whatever the walk's progress when it refuses a larger one.
    const headerBlock = authentication ? createHeaderBlockMeter(MAX_HEADER_BYTES) : null;
    const unpackArchives = transaction.workspaces.some((workspace) => workspace.config.archives === 'unpack');
    // Mail kept for the postmaster is never refused, so it is not scanned either.
    const forPostmaster = transaction.postmaster && transaction.workspaces.length === 0;
    const scan = deps.scan && !forPostmaster ? scanMessage(deps.scan, transaction, incoming.messageId) : null;
    try {
      const authenticated = authentication
        ? teeTo(
            stream,
            authentication.input,
            limits.maxMessageSize,
            (chunk) => headerBlock?.push(chunk) ?? signatures?.push(chunk) ?? null,
          )
        : stream;
      // The scanners read the same chunks as they pass, each at its own pace (src/scan).
      const source = scan
        ? scan.feed(authenticated, (from, branch) => teeTo(from, branch, limits.maxMessageSize))
        : authenticated;
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
          // A forwarding confirmation's text is kept for the person who confirms it.
          storeBodiesOf: (top) => forwardingProviderOf(parseFromHeader(top.fromHeaders)) !== null,
          storeArchives: unpackArchives,
          spansOfRaw: true,
          // Encrypted mail is decrypted with the keys of the addressed workspaces that have one.
          smimeKeys: smimeKeySource(transaction.workspaces.map((workspace) => workspace.config)),
        },
        limits.maxMessageSize,
        limits.rejectBareLineEndings,
        () => {
          authentication?.abort();
          scan?.abort();
        },
      );
      const { rawSha256, size } = stored;
      if (readSoFar) readSoFar.headerFrom = stored.walk.fromHeaders[0] ?? null;
      if (signatures?.refusal) throw signatures.refusal;
      if (forPostmaster) {
        const kept = keepForPostmaster({
          queueId: incoming.messageId,
          walk: stored.walk,
          transaction,
          size,
          rawSha256,
          now: new Date().toISOString(),
          publicUrl: deps.publicUrl,
        });
        const result = await producer.enqueue({ incoming, ...kept });
        logger.info(
          { queueId: result.messageId, duplicate: result.duplicate, size },
          'message kept for the postmaster',
        );
        return result;
      }
      // The scanners' verdict comes first: malware is refused whatever else the message holds.
      const scanned = scan ? await verdictOf(scan, deps.scan, transaction, deps.metrics, logger) : null;
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
      const bodyText = forwardingProviderOf(parseFromHeader(walk.fromHeaders))
        ? await readBodyText(walk, incoming.storedParts)
        : null;
      const decideFor = (addressed: Transaction) =>
        decide({
          queueId: incoming.messageId,
          walk,
          transaction: addressed,
          authentication: evidence,
          size,
          rawSha256,
          now: new Date().toISOString(),
          publicUrl: deps.publicUrl,
          policy,
          scan: scanned?.record ?? null,
          bodyText,
          hold: scanned?.hold
            ? { reason: scanned.hold, workspace: addressed.workspaces[0]?.config.identifier ?? '' }
            : null,
        });
      const decision = await decideAdmitting(transaction, decideFor);
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
          ...(decision.summary.hold ? { held: decision.summary.hold.reason } : {}),
        },
        'message accepted',
      );
      return result;
    } catch (err) {
      countSenderAuth(deps.metrics, senderAuthRefusalResult(err));
      authentication?.abort();
      scan?.abort();
      await incoming.discard();
      throw err;
    }
  };

  /**
   * The decision, taken again with the allow-lists as they are now when the sender was not
   * admitted (refused, or held as not listed) and a release has allowed senders since the
   * transaction's routes were read. Admitted senders cost no Redis read.
   */
  async function decideAdmitting(
    transaction: Transaction,
    decideFor: (addressed: Transaction) => Decision,
  ): Promise<Decision> {
    const { readmit } = deps;
    let decision: Decision;
    try {
      decision = decideFor(transaction);
    } catch (err) {
      if (!(err instanceof RefusalError) || err.code !== 'SENDER_NOT_ADMITTED' || !readmit) throw err;
      const again = await readmit(transaction);
      if (again === null) throw err;
      return decideFor(again);
    }
    if (decision.summary.hold?.reason !== 'sender_not_listed' || !readmit) return decision;
    const again = await readmit(transaction);
    return again === null ? decision : decideFor(again);
  }

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
