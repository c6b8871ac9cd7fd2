/**
 * HTML built from templates that escape every value they are given. Mail is hostile input:
 * a subject, a display name or a file name may hold markup, and nothing read from a message
 * may reach a page unescaped. Only a template's own literal text and other `Html` values
 * pass through as markup, so forgetting to escape cannot happen by omission.
 */
export class Html {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

/** What a template accepts: markup, text to escape, nothing (null, undefined, false), or lists of these. */
export type Rendered = Html | string | number | boolean | null | undefined | readonly Rendered[];

const entities: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text for an element's content or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => entities[char] ?? char);
}

export function html(strings: TemplateStringsArray, ...values: Rendered[]): Html {
  let text = strings[0] ?? '';
  for (const [i, value] of values.entries()) text += render(value) + (strings[i + 1] ?? '');
  return new Html(text);
}

function render(value: Rendered): string {
  if (value instanceof Html) return value.text;
  if (value === null || value === undefined || value === false || value === true) return '';
  if (typeof value === 'string') return escapeHtml(value);
  if (typeof value === 'number') return String(value);
  return value.map(render).join('');
}
