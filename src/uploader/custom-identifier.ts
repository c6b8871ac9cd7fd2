/**
 * The `customIdentifier` form field (docs/parsing-api.md, "Uploading a document") as a template
 * over the message: `{queueId}-{attachmentIndex}` or `{from}: {subject}`. Checked when the
 * configuration loads, so an unknown placeholder is a configuration problem and never a surprise at
 * upload time; rendered per upload from values the worker reads from the message record.
 *
 * `{{` and `}}` write a literal brace; any other brace that is not part of a placeholder is
 * refused, so a typo such as `{queueId` does not reach the service as text.
 */

/** The placeholders a template may use, each described for the configuration error message. */
export const CUSTOM_IDENTIFIER_PLACEHOLDERS = [
  /** The Message-ID header, without angle brackets ("" when the message had none). */
  'messageId',
  /** The header From address ("" when it could not be parsed). */
  'from',
  'subject',
  /** The attachment's position among the message's documents, from 1. */
  'attachmentIndex',
  /** The sanitised file name sent upstream. */
  'fileName',
  /** The gateway's id of the message, as in the `250 queued as <id>` reply. */
  'queueId',
  /** The workspace identifier. */
  'workspace',
] as const;

export type CustomIdentifierPlaceholder = (typeof CUSTOM_IDENTIFIER_PLACEHOLDERS)[number];

export type CustomIdentifierValues = Readonly<Record<CustomIdentifierPlaceholder, string>>;

type Piece = { text: string } | { placeholder: CustomIdentifierPlaceholder };

/** `{name}`, `{{`, `}}`, or a lone brace (an error). */
const TOKEN = /\{\{|\}\}|\{([^{}]*)\}|[{}]/g;

const KNOWN = new Set<string>(CUSTOM_IDENTIFIER_PLACEHOLDERS);

function isPlaceholder(name: string): name is CustomIdentifierPlaceholder {
  return KNOWN.has(name);
}

/** The template split into text and placeholders, or every problem in it. */
export function parseCustomIdentifier(
  template: string,
): { ok: true; pieces: Piece[] } | { ok: false; problems: string[] } {
  const pieces: Piece[] = [];
  const problems: string[] = [];
  let last = 0;
  for (const match of template.matchAll(TOKEN)) {
    if (match.index > last) pieces.push({ text: template.slice(last, match.index) });
    last = match.index + match[0].length;
    const [token, name] = match;
    if (token === '{{' || token === '}}') {
      pieces.push({ text: token[0] ?? '' });
    } else if (name === undefined) {
      problems.push(`lone "${token}" at position ${match.index}; write {{ or }} for a literal brace`);
    } else if (isPlaceholder(name)) {
      pieces.push({ placeholder: name });
    } else {
      problems.push(
        `unknown placeholder {${name}}; expected one of ${CUSTOM_IDENTIFIER_PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}`,
      );
    }
  }
  if (last < template.length) pieces.push({ text: template.slice(last) });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, pieces };
}

/**
 * Control characters (a folded Subject keeps none, but an encoded word can decode to one)
 * are dropped from the values: the result is a form field, and a line break in it would
 * only confuse whoever reads the identifier later.
 */
const CONTROL = /\p{Cc}/gu;

/** The identifier for one upload. Throws for a template the configuration would have refused. */
export function renderCustomIdentifier(template: string, values: CustomIdentifierValues): string {
  const parsed = parseCustomIdentifier(template);
  if (!parsed.ok) throw new Error(`invalid customIdentifier template: ${parsed.problems.join('; ')}`);
  return parsed.pieces
    .map((piece) => ('text' in piece ? piece.text : values[piece.placeholder].replace(CONTROL, '')))
    .join('');
}
