import type { LeafPart } from '../mail/leaf-part.ts';
import type { PartReader } from '../mail/part-store.ts';
import type { WalkResult } from '../mail/walk-message.ts';
import { MAX_CONFIRMATION_TEXT } from './forwarding-confirmation.ts';

/**
 * The text of the top-level message's body as a person reads it: the plain-text body, else
 * the HTML body with its markup dropped and its links' targets kept. Null when no body was
 * stored (the walk stores them only when asked; collect-body.ts). For the few messages a
 * person must read in the record, such as a forwarding confirmation.
 */
export async function readBodyText(walk: WalkResult, reader: PartReader): Promise<string | null> {
  const bodies = walk.parts.filter(
    (part) => part.role === 'body' && part.depth === 0 && part.stored && part.size > 0,
  );
  const plain = bodies.find((part) => part.declaredType === 'text/plain');
  const html = bodies.find((part) => part.declaredType === 'text/html');
  const chosen: LeafPart | undefined = plain ?? html;
  if (chosen === undefined) return null;
  const text = (await reader.readPart(chosen.index)).toString('utf8').replace(/^\uFEFF/, '');
  return (chosen === plain ? text : textOfHtml(text)).slice(0, MAX_CONFIRMATION_TEXT);
}

const ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
};

/** Markup dropped, line breaks kept, each link's target written after its text. Pure. */
export function textOfHtml(html: string): string {
  return html
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, '')
    .replace(
      /<a\b[^>]*\bhref\s*=\s*["']([^"']*)["'][^>]*>([\s\S]*?)<\/a\s*>/gi,
      (_all, href: string, inner: string) => (inner.includes(href) ? inner : `${inner} ${href}`),
    )
    .replace(/<(br|\/p|\/div|\/tr|\/h\d|\/li)\b[^>]*>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#\d{1,7}|#x[0-9a-f]{1,6}|[a-z]+);/gi, (all, name: string) => {
      const hex = /^#x/i.test(name);
      const point = hex
        ? Number.parseInt(name.slice(2), 16)
        : name.startsWith('#')
          ? Number(name.slice(1))
          : null;
      if (point === null) return ENTITIES[name.toLowerCase()] ?? all;
      return point <= 0x10ffff ? String.fromCodePoint(point) : all;
    })
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
