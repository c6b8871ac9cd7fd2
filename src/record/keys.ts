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
  /** The e-mail as received: a hash of fixed-size chunks (src/queue/raw-copy.ts). */
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
  /** Pub/sub channel told the message id whenever an attachment reaches a final state. */
  settledChannel: string;
  /** Prefix handed to BullMQ: its keys become `<prefix>:{queue}:<name>:…`. */
  queuePrefix: string;
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
    settledChannel: `${prefix}:settled`,
    queuePrefix: `${prefix}:{queue}`,
  };
}
