import * as z from 'zod/mini';

/**
 * What the message record keeps of a message's sender authentication, as schemas: the types
 * of authentication-results.ts, sender-policy.ts and admit-sender.ts are derived from them,
 * and GET /v1/openapi.json describes the record's `authentication` and `workspaces` with them.
 * Domains are normalised as the allow-list compares them (lower case, A-labels, no trailing
 * dot); results are RFC 8601 result keywords (`pass`, `fail`, `temperror`, …).
 */

const result = z.string().check(z.describe('An RFC 8601 result keyword: pass, fail, none, temperror, …'));
const domain = (description: string) => z.nullable(z.string()).check(z.describe(description));

export const dkimSignatureResultSchema = z.object({
  result,
  domain: domain('The d= domain'),
  selector: z.nullable(z.string()),
  unsignedBodyBytes: z
    .int()
    .check(
      z.gte(0),
      z.describe(
        'Body bytes an l= tag leaves unsigned: content anyone may have appended. 0 when all is signed',
      ),
    ),
  comment: z.nullable(z.string()),
});

export const dmarcResultSchema = z.object({
  result,
  fromDomain: domain('The author domain DMARC evaluated (header.from)'),
  policy: z
    .nullable(z.string())
    .check(z.describe('The policy that applies (p=, sp= or np=); null without a record')),
  spfAligned: domain('The SPF domain that aligned, if any'),
  dkimAligned: domain('The DKIM d= domain that aligned, preferring signatures that cover the whole body'),
  dkimUnsignedBodyBytes: z
    .int()
    .check(
      z.gte(0),
      z.describe('Body bytes the aligned DKIM signature leaves unsigned (l=); 0 when it covers the body'),
    ),
});

export const arcFirstHopSchema = z.object({
  authservId: z.nullable(z.string()),
  spf: z.nullable(z.object({ result, mailFromDomain: z.nullable(z.string()) })),
  dkim: z.array(z.object({ result, domain: z.nullable(z.string()) })),
  dmarc: z.nullable(z.object({ result, fromDomain: z.nullable(z.string()) })),
});

export const arcResultSchema = z.object({
  result: z
    .string()
    .check(z.describe('pass: every seal and the newest ARC-Message-Signature verify (RFC 8617 §5.2)')),
  comment: z.nullable(z.string()),
  sealers: z
    .array(z.string())
    .check(z.describe('The d= of each ARC-Seal, instance 1 first (`(no valid d=)` where there is none)')),
  firstHop: z
    .nullable(arcFirstHopSchema)
    .check(z.describe('What the first ARC participant recorded in its ARC-Authentication-Results (i=1)')),
});

export const authenticationResultsSchema = z.object({
  spf: z
    .object({ result, domain: z.nullable(z.string()) })
    .check(z.describe('SPF for the MAIL FROM domain (the HELO name for a null sender), RFC 7208')),
  dkim: z
    .array(dkimSignatureResultSchema)
    .check(z.describe('One entry per DKIM-Signature; empty when the message is not signed')),
  dmarc: z
    .nullable(dmarcResultSchema)
    .check(z.describe('null when DMARC could not be evaluated (no single From domain)')),
  arc: z.nullable(arcResultSchema).check(z.describe('null when the message carries no ARC set')),
});

/** The modes that authenticate: every senderAuthentication but `off`. */
export const authenticatingModes = ['aligned', 'dmarc'] as const;

export const senderVerdictSchema = z.discriminatedUnion('outcome', [
  z
    .object({
      outcome: z.literal('pass'),
      via: z.enum(['spf', 'dkim', 'dmarc', 'arc']),
      domain: z.string(),
    })
    .check(z.describe('`domain` authenticated the From domain; `via` is the check that did')),
  z
    .object({ outcome: z.literal('fail'), reason: z.string() })
    .check(
      z.describe('`reason` completes the 550 5.7.1 reply: which check failed, never which rule would pass'),
    ),
  z
    .object({ outcome: z.literal('temperror'), reason: z.string() })
    .check(z.describe('A DNS lookup the answer depends on failed; `reason` completes the 451 4.7.0 reply')),
]);

export const senderAuthenticationSchema = z.object({
  fromDomain: domain('The header From domain the results were judged for; null when the From is unusable'),
  results: authenticationResultsSchema,
  verdicts: z
    .object({ aligned: z.optional(senderVerdictSchema), dmarc: z.optional(senderVerdictSchema) })
    .check(z.describe('The verdict under each mode the addressed workspaces use')),
});

export const workspaceDecisionSchema = z.object({
  identifier: z.string(),
  admitted: z
    .boolean()
    .check(
      z.describe(
        'Whether the sender was admitted: authenticated as the workspace asks, then by its allow-list',
      ),
    ),
  reason: z.nullable(z.string()),
  senderAuthentication: z.optional(
    z
      .enum(authenticatingModes)
      .check(
        z.describe(
          "The workspace's senderAuthentication when it is not off; absent for off, so records of workspaces that do not authenticate read as before",
        ),
      ),
  ),
});
