import type { z } from 'zod/mini';
import { englishIssueMessages } from '../english-issues.ts';
import { redactUrl } from './redact-config.ts';

/**
 * How a validation issue reads in `check-config`: one `path: message` line per problem,
 * paths written as in the file (`workspaces[0].whitelistIngestAddresses[2]`).
 */

type Issue = z.core.$ZodIssue;
type RawIssue = z.core.$ZodRawIssue;

/** `['workspaces', 0, 'ingestEmail']` → `workspaces[0].ingestEmail`; the root is `(root)`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') {
      text += `[${key}]`;
    } else {
      const name = String(key);
      text += text === '' ? name : `.${name}`;
    }
  }
  return text === '' ? '(root)' : text;
}

/** One line per problem; an unknown-keys issue names each key on its own line. */
export function formatIssue(issue: Issue): string[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => `${formatPath([...issue.path, key])}: ${issue.message}`);
  }
  return [`${formatPath(issue.path)}: ${issue.message}`];
}

/**
 * The messages for issues whose schema gives none. zod's defaults speak of its own types
 * ("Invalid input: expected string, received undefined"); these speak of the file. Others
 * read as zod's English words them ("Invalid option: expected one of ...").
 */
export function configErrorMap(issue: RawIssue): ReturnType<typeof englishIssueMessages> {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      // A secret is never printed back, even when it has the wrong type (an all-digit
      // ${VAR} interpolates as a number): check-config output and logs must not carry it.
      return `expected ${article(issue.expected)}, got ${
        secretKeys.has(String(issue.path?.at(-1)))
          ? `a ${typeof issue.input} (not shown)`
          : describe(issue.input)
      }`;
    case 'unrecognized_keys': {
      const known = knownKeys(issue.schema);
      return known.length > 0 ? `unknown key; expected one of ${known.join(', ')}` : 'unknown key';
    }
    default:
      return englishIssueMessages(issue);
  }
}

/** Keys whose values are secrets (the parsing API key, the HTTP API token, a webhook's secret). */
const secretKeys = new Set(['apiKey', 'token', 'secret']);

function article(expected: string): string {
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

function describe(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'a list';
  if (typeof input === 'object') return 'a mapping';
  // A URL in the wrong place (`redis: redis://user:secret@host`) is shown without its password.
  if (typeof input === 'string') return `the string ${JSON.stringify(redactUrl(input))}`;
  return `${typeof input} ${String(input)}`;
}

/** The keys a strict object accepts, listed so a typo is one glance from its fix. */
function knownKeys(schema: RawIssue['schema']): string[] {
  const def = schema?._zod.def;
  if (def === undefined || !('shape' in def) || typeof def.shape !== 'object' || def.shape === null) {
    return [];
  }
  return Object.keys(def.shape);
}
