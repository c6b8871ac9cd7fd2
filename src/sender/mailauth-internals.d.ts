/**
 * Types for the two modules of mailauth the gateway uses beyond its typed entry points
 * (index.d.ts covers authenticate(), dkimSign() and the result shapes). Both are the code
 * mailauth itself runs for the same job, so the gateway aligns domains and reads
 * Authentication-Results exactly as its own DMARC and ARC checks do. Only what is used is
 * declared; parsed header values are `unknown` and checked where they are read.
 */

declare module 'mailauth/lib/tools.js' {
  /**
   * The first entry of `domains` aligned with `fromDomain`, or false. Relaxed (strict false):
   * the Organizational Domains, taken from the Public Suffix List, are equal; strict: the
   * names are equal. Names are compared lower-cased, in A-labels, without a trailing dot.
   */
  export function getAlignment(
    fromDomain: string,
    domains: readonly string[],
    strict?: boolean,
  ): { domain: string } | false;
}

declare module 'mailauth/lib/parse-dkim-headers.js' {
  /**
   * Parses one header field. For Authentication-Results and ARC-Authentication-Results the
   * RFC 8601 grammar: `{ value: authserv-id, i?, spf?, dmarc?, dkim?: [] }`, each method
   * `{ value: result, <ptype>: { <property>: value }, comment? }`.
   */
  export default function parseDkimHeaders(line: Buffer | string): { parsed: unknown };
}
