import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import type { Redis } from 'ioredis';
import { admitSender, needsAuthentication } from '../auth/admit-sender.ts';
import type { AuthenticationRun, SenderAuthenticator } from '../auth/authenticate-sender.ts';
import type { AuthenticationResults } from '../auth/authentication-results.ts';
import { createSignatureGuard } from '../auth/signature-guard.ts';
import { teeTo } from '../auth/tee-stream.ts';
import type { GatewayConfig, WorkspaceConfig } from '../config/schema.ts';
import { RefusalError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { documentMimeType } from '../mail/detect-type.ts';
import { sanitizeFileName } from '../mail/sanitize-file-name.ts';
import { describeFound, selectAttachments } from '../mail/select-attachments.ts';
import { type WalkResult, walkMessage } from '../mail/walk-message.ts';
import type { KeySpace } from '../queue/keys.ts';
import type { AttachmentEntry, MessageSummary } from '../queue/message-record.ts';
import { type IncomingMessage, openIncomingMessage } from '../queue/message-store.ts';
import type { EnqueueResult, Producer } from '../queue/producer.ts';
import type { NormalizedAddress } from '../whitelist/normalize-address.ts';
import { parseFromHeader } from '../whitelist/parse-from-header.ts';
import { createBareLineEndingScanner, describeBareLineEnding } from './bare-line-ending.ts';
import { newMessageId } from './message-id.ts';

/** What the SMTP session knows about the transaction when DATA starts. */
export interface Transaction {
  remoteAddress: string | null;
  /** The HELO/EHLO name, for SPF. */
  helo: string | null;
  mailFrom: string | null;
  /** The accepted recipients' workspaces, in RCPT order, each once. */
  workspaces: readonly RoutedWorkspace[];
  rcptTo: readonly string[];
}

export interface RoutedWorkspace {
  config: WorkspaceConfig;
  admits(address: NormalizedAddress): boolean;
}

export interface ReceiveDependencies {
  config: GatewayConfig;
  redis: Redis;
  keys: KeySpace;
  producer: Producer;
  /** Base URL for the raw-message links recorded as sourceEmail. */
  publicUrl: string;
  /** Checks SPF, DKIM, DMARC and ARC for workspaces whose senderAuthentication is not off. */
  authenticator: SenderAuthenticator;
  logger: Logger;
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
  const { config, redis, keys, producer } = deps;
  const limits = {
    maxDepth: config.smtp.maxMimeDepth,
    maxParts: config.smtp.maxParts,
    maxHeaderBytes: 64 * 1024,
    maxPartSize: config.smtp.maxPartSize,
  };
  const trustedArcSealers = new Set(config.auth.trustedArcSealers);

  return async function receive(stream, transaction, logger) {
    const incoming = openIncomingMessage(redis, keys, newMessageId());
    const authentication = startAuthentication(transaction);
    const signatures = authentication ? createSignatureGuard() : null;
    try {
      const source = authentication
        ? teeTo(
            stream,
            authentication.input,
            config.smtp.maxMessageSize,
            (chunk) => signatures?.push(chunk) ?? null,
          )
        : stream;
      // A message refused while it streams (a MIME limit, bare line endings, size) stops
      // authentication at once: mailauth must not keep buffering what the walk refused.
      const { walk, rawSha256, size } = await storeAndWalk(
        source,
        incoming,
        limits,
        config.smtp.maxMessageSize,
        config.smtp.rejectBareLineEndings,
        () => authentication?.abort(),
      );
      if (signatures?.refusal) throw signatures.refusal;
      const results = authentication ? await authentication.results : null;
      const accepted = decide(walk, transaction, incoming, size, rawSha256, results);
      const result = await producer.enqueue(accepted);
      logger.info(
        {
          queueId: result.messageId,
          duplicate: result.duplicate,
          size,
          uploads: accepted.entries.filter((entry) => entry.state === 'queued').length,
        },
        'message accepted',
      );
      return result;
    } catch (err) {
      authentication?.abort();
      await incoming.discard();
      throw err;
    }
  };

  /** Sender authentication alongside the DATA stream, when an addressed workspace asks for it. */
  function startAuthentication(transaction: Transaction): AuthenticationRun | null {
    if (!needsAuthentication(transaction.workspaces, config.auth.senderAuthentication)) return null;
    return deps.authenticator.start({
      remoteAddress: transaction.remoteAddress,
      helo: transaction.helo,
      mailFrom: transaction.mailFrom,
    });
  }

  function decide(
    walk: WalkResult,
    transaction: Transaction,
    incoming: IncomingMessage,
    size: number,
    rawSha256: string,
    results: AuthenticationResults | null,
  ) {
    const sender = parseFromHeader(walk.fromHeaders);
    // Throws the refusal (550 5.7.1, or 451 4.7.0 on a DNS failure) when no workspace admits.
    const { decisions, authentication } = admitSender({
      sender,
      workspaces: transaction.workspaces,
      defaultMode: config.auth.senderAuthentication,
      results,
      trustedArcSealers,
    });
    const senderAddress = sender.ok ? sender.address.address : null;

    const { documents, skipped } = selectAttachments(walk);
    if (documents.length === 0) {
      throw new RefusalError('NO_SUPPORTED_ATTACHMENT', `no supported attachment: ${describeFound(walk)}`);
    }
    if (documents.length > config.smtp.maxAttachments) {
      throw new RefusalError(
        'TOO_MANY_ATTACHMENTS',
        `${documents.length} supported attachments, at most ${config.smtp.maxAttachments} are taken per message`,
      );
    }

    const now = new Date().toISOString();
    const entries: AttachmentEntry[] = [];
    for (const decision of decisions) {
      if (!decision.admitted) continue;
      for (const part of documents) {
        const type = part.detectedType;
        if (type === null) continue;
        entries.push({
          entry: entries.length,
          part: part.index,
          fileName: sanitizeFileName(part.fileName, type, part.index),
          originalFileName: part.fileName,
          contentType: part.declaredType,
          detectedType: documentMimeType(type),
          size: part.size,
          sha256: part.sha256,
          workspace: decision.identifier,
          state: 'queued',
          reason: null,
          documentIdentifier: null,
          attempts: 0,
          warnings: [],
          updatedAt: now,
        });
      }
    }
    for (const { part, reason } of skipped) {
      entries.push({
        entry: entries.length,
        part: part.index,
        fileName: part.fileName ?? `part ${part.partNumber}`,
        originalFileName: part.fileName,
        contentType: part.declaredType,
        detectedType: null,
        size: part.size,
        sha256: part.sha256,
        workspace: null,
        state: 'skipped',
        reason,
        documentIdentifier: null,
        attempts: 0,
        warnings: [],
        updatedAt: now,
      });
    }

    const summary: MessageSummary = {
      id: incoming.messageId,
      messageId: walk.messageId,
      receivedAt: now,
      remoteAddress: transaction.remoteAddress,
      envelope: { mailFrom: transaction.mailFrom, rcptTo: [...transaction.rcptTo] },
      from: senderAddress,
      subject: walk.subject,
      sourceEmail: `${deps.publicUrl}/v1/messages/${incoming.messageId}/raw`,
      sourceEmailAddress: senderAddress,
      size,
      workspaces: decisions,
      authentication,
    };
    const recipients = [...transaction.rcptTo].map((rcpt) => rcpt.toLowerCase()).sort();
    const deliveryHash = createHash('sha256')
      .update(rawSha256)
      .update('\n')
      .update(recipients.join('\n'))
      .digest('hex');
    return { incoming, summary, entries, deliveryHash };
  }
}

interface Stored {
  walk: WalkResult;
  rawSha256: string;
  size: number;
}

/**
 * Tee the DATA stream into the raw copy and the MIME walk, each with backpressure. Once the
 * message is refused (too large, a bare CR or LF, a walk limit) or storing fails, the rest of
 * DATA is read and dropped, and the reason is thrown after the stream ends.
 */
async function storeAndWalk(
  stream: Readable,
  incoming: IncomingMessage,
  limits: Parameters<typeof walkMessage>[2],
  maxMessageSize: number,
  rejectBareLineEndings: boolean,
  /** Called once, when the message is refused while it streams. */
  onStop: () => void,
): Promise<Stored> {
  const walkInput = new PassThrough({ highWaterMark: 64 * 1024 });
  const walking = walkMessage(walkInput, incoming.parts, limits);
  let stopped: unknown;
  /** The first reason wins; the walk and the authentication branch end at once. */
  const stop = (reason: unknown) => {
    if (stopped !== undefined) return;
    stopped = reason;
    walkInput.destroy();
    onStop();
  };
  walking.catch(stop);
  const hash = createHash('sha256');
  let size = 0;
  const lineEndings = rejectBareLineEndings ? createBareLineEndingScanner() : null;
  const refuseBare = (found: 'cr' | 'lf') =>
    new RefusalError('BARE_LINE_ENDING', describeBareLineEnding(found));

  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (stopped !== undefined) continue;
    size += chunk.length;
    if (size > maxMessageSize) {
      stop(
        new RefusalError(
          'MESSAGE_TOO_LARGE',
          `message exceeds the ${maxMessageSize} bytes this server takes`,
        ),
      );
      continue;
    }
    // Checked before the chunk is stored: smuggled commands never reach Redis.
    const bare = lineEndings?.push(chunk) ?? null;
    if (bare !== null) {
      stop(refuseBare(bare));
      continue;
    }
    hash.update(chunk);
    try {
      await incoming.raw.write(chunk);
      if (!walkInput.write(chunk))
        await Promise.race([once(walkInput, 'drain'), walking.catch(() => undefined)]);
    } catch (err) {
      stop(err);
    }
  }
  const bareAtEnd = lineEndings?.end() ?? null;
  if (bareAtEnd !== null) stop(refuseBare(bareAtEnd));
  if (stopped !== undefined) throw stopped;
  walkInput.end();
  await incoming.raw.end();
  const walk = await walking;
  return { walk, rawSha256: hash.digest('hex'), size };
}
