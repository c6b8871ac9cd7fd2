import type { SplitterChunk } from '@zone-eu/mailsplit';
import libmime from 'libmime';

/** What the top-level message's own headers say, as the record and the sender checks read them. */
export interface TopHeaders {
  /** Message-ID header of the top-level message, without <>. */
  messageId: string | null;
  /** Decoded (RFC 2047) Subject; null when there is none. */
  subject: string | null;
  /** Raw values (unfolded, NOT decoded) of every top-level From header, in order. */
  fromHeaders: string[];
}

type MimeNode = Extract<SplitterChunk, { type: 'node' }>;

/** What the walk reports from the top-level message's own headers. */
export function readTopHeaders(node: MimeNode): TopHeaders {
  const headers = node.headers;
  if (headers === false) return { messageId: null, subject: null, fromHeaders: [] };
  const messageId = headers.getFirst('message-id');
  const bracketed = /<([^<>]*)>/.exec(messageId)?.[1]?.trim();
  return {
    messageId: bracketed || messageId || null,
    subject: headers.hasHeader('subject') ? libmime.decodeWords(headers.getFirst('subject')) : null,
    // Unfolding (RFC 5322 2.2.3) removes only the line breaks; the value is otherwise as sent.
    fromHeaders: headers.get('from').map((line) =>
      line
        .slice(line.indexOf(':') + 1)
        .replace(/\r?\n|\r/g, '')
        .trim(),
    ),
  };
}
