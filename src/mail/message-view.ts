import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Splitter, type SplitterChunk } from '@zone-eu/mailsplit';
import libmime from 'libmime';
import { transferDecoder } from './decoders/transfer-decoder.ts';

/**
 * A stored message as a person reads it on the console's message page: every header of the
 * top-level message, and its text and HTML bodies decoded to strings. Not on the DATA path:
 * it reads a copy already stored, for one page view, and bounds what it holds.
 */
export interface MessageView {
  /** Every top-level header, in order, its value unfolded and its encoded words decoded. */
  headers: Array<{ name: string; value: string }>;
  /** The first text/plain part that is not an attachment; null: none. */
  text: string | null;
  /** The first text/html part that is not an attachment; null: none. */
  html: string | null;
  /** Whether a body was longer than MAX_VIEW_BODY_BYTES and is shown cut. */
  cut: boolean;
}

/** Bytes of a body (as sent, transfer-encoded) the view keeps: a page, not an archive. */
export const MAX_VIEW_BODY_BYTES = 2 * 1024 * 1024;

type MimeNode = Extract<SplitterChunk, { type: 'node' }>;

interface OpenBody {
  kind: 'text' | 'html';
  encoding: string;
  charset: string | undefined;
  chunks: Buffer[];
  bytes: number;
}

export async function readMessageView(raw: Readable): Promise<MessageView> {
  const view: MessageView = { headers: [], text: null, html: null, cut: false };
  const splitter = new Splitter({ ignoreEmbedded: true });
  let open: OpenBody | null = null;
  const close = async () => {
    if (open === null) return;
    const body = open;
    open = null;
    const decoded = await decodeBody(body);
    if (body.kind === 'text') view.text ??= decoded;
    else view.html ??= decoded;
  };
  raw.pipe(splitter);
  for await (const item of splitter as AsyncIterable<SplitterChunk>) {
    if (item.type === 'node') {
      await close();
      if (item.root) view.headers = headersOf(item);
      const kind = bodyKind(item);
      const wanted = kind !== null && (kind === 'text' ? view.text === null : view.html === null);
      if (wanted) {
        open = {
          kind,
          encoding: (item.encoding || '').toLowerCase(),
          charset: item.charset || undefined,
          chunks: [],
          bytes: 0,
        };
      }
    } else if (item.type === 'body' && open !== null) {
      const body: OpenBody = open;
      if (body.bytes >= MAX_VIEW_BODY_BYTES) {
        view.cut = true;
        continue;
      }
      const room = MAX_VIEW_BODY_BYTES - body.bytes;
      const kept = item.value.length > room ? item.value.subarray(0, room) : item.value;
      if (kept.length < item.value.length) view.cut = true;
      body.chunks.push(kept);
      body.bytes += kept.length;
    }
  }
  await close();
  return view;
}

/** A leaf the page shows as the message's text or HTML: not an attachment, not an attached message's. */
function bodyKind(node: MimeNode): 'text' | 'html' | null {
  if (node.multipart !== false) return null;
  const disposition = node.headers === false ? '' : node.headers.getFirst('content-disposition');
  if (/^\s*attachment/i.test(disposition)) return null;
  const type = node.contentType === false ? 'text/plain' : node.contentType;
  if (type === 'text/plain') return 'text';
  if (type === 'text/html') return 'html';
  return null;
}

function headersOf(node: MimeNode): MessageView['headers'] {
  if (node.headers === false) return [];
  return node.headers.getList().map((line) => {
    const text = line.line.replace(/\r?\n[ \t]*/g, ' ');
    const colon = text.indexOf(':');
    const name = colon < 0 ? text : text.slice(0, colon);
    const value = colon < 0 ? '' : text.slice(colon + 1).trim();
    let decoded = value;
    try {
      decoded = libmime.decodeWords(value);
    } catch {
      // A malformed encoded word is shown as sent.
    }
    return { name, value: decoded };
  });
}

async function decodeBody(body: OpenBody): Promise<string> {
  const parts: Buffer[] = [];
  await pipeline(
    Readable.from(body.chunks),
    transferDecoder(body.encoding),
    libmime.createDecodeStream(body.charset),
    async (decoded: AsyncIterable<Buffer>) => {
      for await (const chunk of decoded) parts.push(chunk);
    },
  );
  return Buffer.concat(parts).toString('utf8');
}
