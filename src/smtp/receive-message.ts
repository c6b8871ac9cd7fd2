import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import type { Redis } from 'ioredis';
import type { GatewayConfig, WorkspaceConfig } from '../config/schema.ts';
import { RefusalError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { documentMimeType } from '../mail/detect-type.ts';
import { sanitizeFileName } from '../mail/sanitize-file-name.ts';
import { describeFound, selectAttachments } from '../mail/select-attachments.ts';
import { type WalkResult, walkMessage } from '../mail/walk-message.ts';
import type { KeySpace } from '../queue/keys.ts';
import type { AttachmentEntry, MessageSummary, WorkspaceDecision } from '../queue/message-record.ts';
import { type IncomingMessage, openIncomingMessage } from '../queue/message-store.ts';
import type { EnqueueResult, Producer } from '../queue/producer.ts';
import type { NormalizedAddress } from '../whitelist/normalize-address.ts';
import { parseFromHeader } from '../whitelist/parse-from-header.ts';
import { newMessageId } from './message-id.ts';

/** What the SMTP session knows about the transaction when DATA starts. */
export interface Transaction {
  remoteAddress: string | null;
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

  return async function receive(stream, transaction, logger) {
    const incoming = openIncomingMessage(redis, keys, newMessageId());
    try {
      const { walk, rawSha256, size } = await storeAndWalk(
        stream,
        incoming,
        limits,
        config.smtp.maxMessageSize,
      );
      const accepted = decide(walk, transaction, incoming, size, rawSha256);
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
      await incoming.discard();
      throw err;
    }
  };

  function decide(
    walk: WalkResult,
    transaction: Transaction,
    incoming: IncomingMessage,
    size: number,
    rawSha256: string,
  ) {
    const sender = parseFromHeader(walk.fromHeaders);
    const decisions: WorkspaceDecision[] = transaction.workspaces.map(({ config: workspace, admits }) => {
      const open = !workspace.whitelistIngestAddresses || workspace.whitelistIngestAddresses.length === 0;
      // An open workspace admits any sender (DESIGN.md), even one whose From says nothing usable.
      if (open) return { identifier: workspace.identifier, admitted: true, reason: null };
      if (!sender.ok) return { identifier: workspace.identifier, admitted: false, reason: sender.reason };
      const admitted = admits(sender.address);
      return {
        identifier: workspace.identifier,
        admitted,
        reason: admitted ? null : 'sender not in the allow-list',
      };
    });
    if (!decisions.some((decision) => decision.admitted)) {
      // The reply says which check failed, never which rule would have passed.
      const why = sender.ok
        ? `sender ${sender.address.address} is not admitted for this address`
        : `sender not admitted: ${sender.reason}`;
      throw new RefusalError('SENDER_NOT_ADMITTED', why);
    }
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
 * message is refused (too large, a walk limit) or storing fails, the rest of DATA is read and
 * dropped, and the reason is thrown after the stream ends.
 */
async function storeAndWalk(
  stream: Readable,
  incoming: IncomingMessage,
  limits: Parameters<typeof walkMessage>[2],
  maxMessageSize: number,
): Promise<Stored> {
  const walkInput = new PassThrough({ highWaterMark: 64 * 1024 });
  const walking = walkMessage(walkInput, incoming.parts, limits);
  let stopped: unknown;
  walking.catch((err: unknown) => {
    stopped ??= err;
    walkInput.destroy();
  });
  const hash = createHash('sha256');
  let size = 0;

  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (stopped !== undefined) continue;
    size += chunk.length;
    if (size > maxMessageSize) {
      stopped = new RefusalError(
        'MESSAGE_TOO_LARGE',
        `message exceeds the ${maxMessageSize} bytes this server takes`,
      );
      walkInput.destroy();
      continue;
    }
    hash.update(chunk);
    try {
      await incoming.raw.write(chunk);
      if (!walkInput.write(chunk))
        await Promise.race([once(walkInput, 'drain'), walking.catch(() => undefined)]);
    } catch (err) {
      stopped ??= err;
      walkInput.destroy();
    }
  }
  if (stopped !== undefined) throw stopped;
  walkInput.end();
  await incoming.raw.end();
  const walk = await walking;
  return { walk, rawSha256: hash.digest('hex'), size };
}
