import type { ARCChainEntry, AuthenticateResult } from 'mailauth';
import * as z from 'zod/mini';
import { normalizeDomain } from './normalize-address.ts';
import type {
  arcFirstHopSchema,
  arcResultSchema,
  authenticationResultsSchema,
  dkimSignatureResultSchema,
  dmarcResultSchema,
} from './sender-authentication-schema.ts';

/**
 * What mailauth found, reduced to what the sender policy decides on and the message record
 * shows; sender-authentication-schema.ts defines the shapes.
 */
export type AuthenticationResults = z.output<typeof authenticationResultsSchema>;
export type DkimSignatureResult = z.output<typeof dkimSignatureResultSchema>;
export type DmarcResult = z.output<typeof dmarcResultSchema>;
export type ArcResult = z.output<typeof arcResultSchema>;
export type ArcFirstHop = z.output<typeof arcFirstHopSchema>;

/** Parses one ARC-Authentication-Results header field (mailauth's RFC 8601 parser, loaded with it). */
export type HeaderParser = (line: Buffer | string) => { parsed: unknown };

/** mailauth's result → AuthenticationResults. Pure. */
export function summarizeAuthentication(
  result: AuthenticateResult,
  parseHeader: HeaderParser,
): AuthenticationResults {
  const spf = result.spf;
  return {
    spf: spf ? { result: spf.status.result, domain: domainOf(spf.domain) } : { result: 'none', domain: null },
    dkim: result.dkim.results
      .filter((signature) => signature.signingDomain !== undefined)
      .map((signature) => ({
        result: signature.status.result,
        domain: domainOf(signature.signingDomain),
        selector: signature.selector ?? null,
        unsignedBodyBytes: signature.status.underSized ?? 0,
        comment: signature.status.comment ?? null,
      })),
    dmarc: result.dmarc
      ? {
          result: result.dmarc.status.result,
          fromDomain: domainOf(result.dmarc.status.header?.from),
          policy: result.dmarc.policy ?? null,
          spfAligned: domainOf(result.dmarc.alignment?.spf.result),
          dkimAligned: domainOf(result.dmarc.alignment?.dkim.result),
          dkimUnsignedBodyBytes: result.dmarc.alignment?.dkim.underSized ?? 0,
        }
      : null,
    arc: summarizeArc(result.arc, parseHeader),
  };
}

function summarizeArc(arc: AuthenticateResult['arc'], parseHeader: HeaderParser): ArcResult | null {
  if (!arc) return null;
  const chain: readonly ARCChainEntry[] = arc.chain || [];
  if (chain.length === 0) {
    // A broken chain may not parse into entries; it still counts as an ARC result.
    return arc.status.result === 'none'
      ? null
      : { result: arc.status.result, comment: arc.status.comment ?? null, sealers: [], firstHop: null };
  }
  // A seal without a usable d= is named so that it can match no trusted sealer.
  const sealers = chain.map(
    (entry) => domainOf(stringValue(entry['arc-seal']?.parsed?.d?.value)) ?? '(no valid d=)',
  );
  const first = chain[0]?.['arc-authentication-results']?.original;
  return {
    result: arc.status.result,
    comment: arc.status.comment ?? null,
    sealers,
    firstHop: first === undefined ? null : readFirstHop(first, parseHeader),
  };
}

const method = z.object({ value: z.string(), comment: z.optional(z.string()) });
const spfMethod = z.extend(method, { smtp: z.optional(z.object({ mailfrom: z.optional(z.string()) })) });
const dkimMethod = z.extend(method, {
  header: z.optional(z.object({ d: z.optional(z.string()), i: z.optional(z.string()) })),
});
const dmarcMethod = z.extend(method, { header: z.optional(z.object({ from: z.optional(z.string()) })) });
const arcAuthenticationResults = z.object({
  value: z.optional(z.string()),
  spf: z.catch(z.optional(spfMethod), undefined),
  dkim: z.catch(z.optional(z.array(z.unknown())), undefined),
  dmarc: z.catch(z.optional(dmarcMethod), undefined),
});

/**
 * Reads the ARC-Authentication-Results of instance 1 with mailauth's own RFC 8601 parser.
 * It is parsed afresh because mailauth rewrites the parsed form of the newest set in place
 * while validating, and for a chain of one that set is this one.
 */
function readFirstHop(header: Buffer | string, parseHeader: HeaderParser): ArcFirstHop | null {
  const parsed = arcAuthenticationResults.safeParse(parseHeader(header).parsed);
  if (!parsed.success) return null;
  const { value, spf, dkim, dmarc } = parsed.data;
  return {
    authservId: value ?? null,
    spf: spf ? { result: spf.value, mailFromDomain: domainAfterAt(spf.smtp?.mailfrom) } : null,
    dkim: (dkim ?? []).flatMap((entry) => {
      const signature = dkimMethod.safeParse(entry);
      if (!signature.success) return [];
      const header = signature.data.header;
      return [{ result: signature.data.value, domain: domainOf(header?.d) ?? domainAfterAt(header?.i) }];
    }),
    dmarc: dmarc ? { result: dmarc.value, fromDomain: domainOf(dmarc.header?.from) } : null,
  };
}

function stringValue(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function domainOf(domain: string | undefined | null): string | null {
  return domain ? normalizeDomain(domain) : null;
}

/** The domain of `local@domain` or `@domain` (an AUID), or of a bare domain. */
function domainAfterAt(identity: string | undefined): string | null {
  if (!identity) return null;
  return domainOf(identity.slice(identity.lastIndexOf('@') + 1));
}
