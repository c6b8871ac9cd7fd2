import { isMap, isScalar, isSeq } from 'yaml';

export type Env = Readonly<Record<string, string | undefined>>;

export interface PathProblem {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/**
 * `$${` (an escaped `${`), a `${...}` reference, or a `${` never closed, in that order so
 * the escape wins over the reference it would otherwise start.
 */
const REFERENCE = /\$\$\{|\$\{([^}]*)\}|\$\{/g;
/** `NAME` or `NAME:-default`, as in POSIX sh; the default is used when NAME is unset or empty. */
const NAME_AND_DEFAULT = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?$/;

export type Interpolated =
  | { readonly ok: true; readonly value: string }
  | { readonly ok: false; readonly problems: string[] };

/** Replace every `${VAR}` / `${VAR:-default}` in one string from `env`; `$${` stays as `${`. */
export function interpolate(text: string, env: Env): Interpolated {
  const problems: string[] = [];
  const value = text.replace(REFERENCE, (match, reference: string | undefined) => {
    if (match === '$${') {
      return '${';
    }
    if (reference === undefined) {
      problems.push(`"\${" is not closed by "}" (write "$\${" for a literal "\${")`);
      return match;
    }
    const parts = NAME_AND_DEFAULT.exec(reference);
    const name = parts?.[1];
    if (parts === null || name === undefined) {
      problems.push(`"${match}" is not a reference: expected \${NAME} or \${NAME:-default}`);
      return match;
    }
    const fallback = parts[2];
    const set = env[name];
    if (fallback !== undefined) {
      return set === undefined || set === '' ? fallback : set;
    }
    if (set === undefined) {
      problems.push(`environment variable ${name} is not set (write \${${name}:-default} to give a default)`);
      return match;
    }
    return set;
  });
  return problems.length === 0 ? { ok: true, value } : { ok: false, problems };
}

/**
 * Interpolate every string value of a parsed YAML document in place, collecting problems
 * with their paths. A plain (unquoted, untagged) scalar that becomes an integer or a boolean
 * takes that type, as if it had been written in the file: `port: ${SMTP_PORT}` is a number,
 * `port: "${SMTP_PORT}"` stays a string. Keys are not interpolated.
 */
export function interpolateTree(node: unknown, env: Env, path: (string | number)[] = []): PathProblem[] {
  if (isMap(node)) {
    return node.items.flatMap((pair) => {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      return interpolateTree(pair.value, env, [...path, key]);
    });
  }
  if (isSeq(node)) {
    return node.items.flatMap((item, index) => interpolateTree(item, env, [...path, index]));
  }
  if (!isScalar(node) || typeof node.value !== 'string' || !node.value.includes('${')) {
    return [];
  }
  const result = interpolate(node.value, env);
  if (!result.ok) {
    return result.problems.map((message) => ({ path, message }));
  }
  node.value = node.type === 'PLAIN' && node.tag === undefined ? retype(result.value) : result.value;
  return [];
}

/** The YAML 1.2 core-schema reading of an integer or boolean; anything else stays a string. */
function retype(text: string): string | number | boolean {
  if (/^[-+]?[0-9]+$/.test(text) && Number.isSafeInteger(Number(text))) {
    return Number(text);
  }
  if (text === 'true' || text === 'false') {
    return text === 'true';
  }
  return text;
}
