/**
 * Every Redis key the gateway writes, in one place.
 *
 * All keys of one message (its raw copy, its parts while they arrive, its blobs and its
 * record) share the hash tag `{<messageId>}`, so on Redis Cluster they live in one slot and
 * one MULTI can commit them. The BullMQ queue has a tag of its own; the document index and
 * the duplicate-delivery index are looked up by other keys and carry their own tags. No
 * transaction spans two tags.
 */
export interface MessageKeys {
  /** The e-mail as received: a hash of fixed-size chunks (src/store/raw-copy.ts). */
  raw: string;
  /** The decoded bytes of leaf `index` while the message arrives (renamed to its blob at commit). */
  part(index: number): string;
  /** A stored attachment, content-addressed by the SHA-256 of its decoded bytes. */
  blob(sha256: string): string;
  /**
   * An attachment stored as part of the raw copy: where its bytes lie in it and how they are
   * encoded (a PartSpan as JSON), in place of a blob.
   */
  span(sha256: string): string;
  /** The entries whose uploads still need a blob (a set of entry numbers per blob). */
  blobRefs(sha256: string): string;
  /** The message record (hash). */
  record: string;
}

export interface KeySpace {
  readonly prefix: string;
  message(messageId: string): MessageKeys;
  /** Which message and entry produced a document the service created. */
  document(documentIdentifier: string): string;
  /** Content hash of a delivery → the message id it was accepted as. */
  delivery(contentHash: string): string;
  /**
   * The listing index: a sorted set of message ids scored by receivedAt (milliseconds), for
   * GET /v1/messages newest first. Its own hash tag: it is written after the message's MULTI.
   */
  messageIndex: string;
  /** The refusal log: a capped stream of refused connections, senders, recipients and messages (refusal-log.ts). */
  refusalLog: string;
  /** The notices sent to one sender in the last hour (src/notices/sender-rate.ts), by a digest of the address. */
  noticeRate(senderDigest: string): string;
  /** Pub/sub channel told the message id whenever an attachment reaches a final state. */
  settledChannel: string;
  /** Prefix handed to BullMQ: its keys become `<prefix>:{queue}:<name>:…`. */
  queuePrefix: string;
  /**
   * Senders allowed at a release (a hash: `<workspace>\n<rule>` → when and by which message),
   * which every instance adds to the workspace's allow-list.
   */
  allowedSenders: string;
  /** Held while one instance changes a workspace's allow-list on the parsing service. */
  allowListLock(workspace: string): string;
  /** The route table read from the parsing service (discovery), shared by every instance. */
  discoveryTable: string;
  /** Held by the one instance reading the service now, for `discovery.every`. */
  discoveryLock: string;
  /** Parse events pushed by the service (trackCompletion via resthook); one hash tag for all. */
  resthooks: ResthookKeys;
}

export interface ResthookKeys {
  /** Held by the one instance that makes or removes subscriptions (SET NX with an expiry). */
  lock: string;
  /** The set of workspaces that have subscriptions. */
  workspaces: string;
  /** A workspace's subscriptions and its organization's signing key (JSON). */
  workspace(identifier: string): string;
  /** The handshake's secret, written while a subscription is being made, for its maker to confirm. */
  handshake: string;
  /** An outcome pushed before its document's upload was recorded, until the upload takes it (JSON). */
  pending(documentIdentifier: string): string;
  /** A delivery already taken, by the digest of its signature (expires after the accepted age). */
  seen(digest: string): string;
}

export function createKeySpace(prefix: string): KeySpace {
  return {
    prefix,
    message(messageId) {
      const base = `${prefix}:{${messageId}}`;
      return {
        raw: `${base}:raw`,
        part: (index) => `${base}:part:${index}`,
        blob: (sha256) => `${base}:blob:${sha256}`,
        span: (sha256) => `${base}:span:${sha256}`,
        blobRefs: (sha256) => `${base}:refs:${sha256}`,
        record: `${base}:record`,
      };
    },
    document: (documentIdentifier) => `${prefix}:doc:{${documentIdentifier}}`,
    delivery: (contentHash) => `${prefix}:delivery:{${contentHash}}`,
    messageIndex: `${prefix}:{messages}:index`,
    refusalLog: `${prefix}:{refusals}:log`,
    noticeRate: (senderDigest) => `${prefix}:notice-rate:{${senderDigest}}`,
    settledChannel: `${prefix}:settled`,
    queuePrefix: `${prefix}:{queue}`,
    allowedSenders: `${prefix}:{allowed-senders}`,
    allowListLock: (workspace) => `${prefix}:allow-list-lock:{${workspace}}`,
    discoveryTable: `${prefix}:{discovery}:table`,
    discoveryLock: `${prefix}:{discovery}:lock`,
    resthooks: {
      lock: `${prefix}:{resthooks}:lock`,
      workspaces: `${prefix}:{resthooks}:workspaces`,
      workspace: (identifier) => `${prefix}:{resthooks}:workspace:${identifier}`,
      handshake: `${prefix}:{resthooks}:handshake`,
      pending: (documentIdentifier) => `${prefix}:{resthooks}:pending:${documentIdentifier}`,
      seen: (digest) => `${prefix}:{resthooks}:seen:${digest}`,
    },
  };
}
