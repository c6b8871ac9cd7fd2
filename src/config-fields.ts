import * as z from 'zod/mini';

/**
 * The field types the configuration schema is made of, each with the message an operator
 * reads in `check-config`. Messages say what is expected, the path is added when reported.
 */

/** An integer in [min, max]; one message for every way it can be wrong. */
export function integer(min: number, max: number) {
  const error = `expected an integer from ${min} to ${max}`;
  return z.int({ error }).check(z.gte(min, { error }), z.lte(max, { error }));
}

export function nonEmptyString() {
  return z.string().check(z.minLength(1, { error: 'must not be empty' }));
}

/** A TCP port; 0 asks the OS for a free one, which tests and side-by-side instances use. */
export function port() {
  return integer(0, 65_535);
}

/**
 * An absolute http(s) URL without credentials, query or fragment, returned without trailing
 * slashes so a path can be appended (`${baseUrl}/v3/documents`).
 */
export function baseUrl() {
  return z.pipe(
    z.string(),
    z.transform((text: string, ctx) => {
      const url = URL.parse(text);
      if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
        ctx.issues.push({
          code: 'custom',
          message: `expected an http(s) URL, got ${JSON.stringify(text)}`,
          input: text,
        });
        return z.NEVER;
      }
      if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
        ctx.issues.push({
          code: 'custom',
          message: 'must not hold credentials, a query or a fragment',
          input: text,
        });
        return z.NEVER;
      }
      return url.href.replace(/\/+$/, '');
    }),
  );
}

/** A Redis URL as ioredis reads it; `rediss:` is Redis over TLS. */
export function redisUrl() {
  return z.string().check(
    z.refine(
      (text) => {
        const protocol = URL.parse(text)?.protocol;
        return protocol === 'redis:' || protocol === 'rediss:';
      },
      { error: 'expected a redis:// or rediss:// URL' },
    ),
  );
}

/** pino's levels; `silent` turns logging off. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** A validated section, frozen: what the components receive. */
export type DeepReadonly<T> = T extends (infer Item)[]
  ? readonly DeepReadonly<Item>[]
  : T extends object
    ? { readonly [Key in keyof T]: DeepReadonly<T[Key]> }
    : T;
