import * as z from 'zod/mini';
import { type DeepReadonly, integer, nonEmptyString } from '../config-fields.ts';
import { AllowListRuleError, compileAllowList } from './compile-allow-list.ts';
import { isDnsServerAddress } from './dns-resolver.ts';
import { normalizeDomain } from './normalize-address.ts';

/**
 * What the configuration says about senders: the `auth` and `dns` sections, and the keys of a
 * workspace that decide whom it admits. src/config composes them into the whole file. Kept
 * apart from the code that authenticates, so that loading the configuration loads none of it.
 */

/**
 * How a workspace authenticates the header From before its allow-list is applied:
 * - `off`: not at all (the From is taken as written; anyone can forge it);
 * - `aligned`: SPF or DKIM passes for a domain aligned with the From domain (DMARC's relaxed
 *   alignment, RFC 7489 §3.1, whether or not the domain publishes a DMARC record);
 * - `dmarc`: DMARC passes for the From domain (so the domain must publish a record).
 */
export const SENDER_AUTHENTICATION_MODES = ['off', 'aligned', 'dmarc'] as const;
export type SenderAuthenticationMode = (typeof SENDER_AUTHENTICATION_MODES)[number];

/** `off`, `aligned` or `dmarc`. */
export function senderAuthenticationMode() {
  return z.enum(SENDER_AUTHENTICATION_MODES, {
    error: `expected one of ${SENDER_AUTHENTICATION_MODES.join(', ')}`,
  });
}

/** What a workspace does with mail from a sender its allow-list does not name. */
export const UNLISTED_SENDER_POLICIES = ['refuse', 'hold'] as const;

/** The `auth` section. */
export const authSettingsSchema = z.strictObject({
  /**
   * What workspaces without their own `senderAuthentication` use; default off, as before
   * sender authentication existed. Production should say aligned (or dmarc).
   */
  senderAuthentication: z._default(senderAuthenticationMode(), 'off'),
  /**
   * Domains whose ARC seals are believed (forwarders and mailing lists the operator trusts):
   * a message whose ARC chain validates and is sealed only by these may be admitted on the
   * results its first sealer recorded. Default none. Stored normalised (lower case, A-labels).
   */
  trustedArcSealers: z._default(
    z.array(
      z.pipe(
        z.string(),
        z.transform((text: string, ctx) => {
          const domain = normalizeDomain(text);
          if (domain === null) {
            ctx.issues.push({
              code: 'custom',
              message: `expected a domain name, got ${JSON.stringify(text)}`,
              input: text,
            });
            return z.NEVER;
          }
          return domain;
        }),
      ),
    ),
    [],
  ),
});

/** The `dns` section: the resolver SPF, DKIM, DMARC and ARC ask. */
export const dnsSettingsSchema = z.strictObject({
  /**
   * Resolver addresses (`10.0.0.53`, `10.0.0.53:5353`, `[::1]:5353`); default [], the
   * system's (/etc/resolv.conf). Addresses, not names: the resolver cannot look itself up.
   */
  servers: z._default(
    z.array(
      z.string().check(
        z.refine(isDnsServerAddress, {
          error: 'expected an IP address, optionally with a port (10.0.0.53:5353, [::1]:5353)',
        }),
      ),
    ),
    [],
  ),
  /** Milliseconds one query waits for an answer before it is retried; default 5000. */
  timeout: z._default(integer(100, 60_000), 5000),
  /** Times each query is sent to each server; default 2. */
  tries: z._default(integer(1, 10), 2),
});

/** The validated, frozen `auth` section. */
export type AuthSettings = DeepReadonly<z.output<typeof authSettingsSchema>>;

/** A workspace's keys that decide whom it admits. */
export const senderWorkspaceFields = {
  /**
   * Sender rules (`*@acme.example`, `ap@partner.example`); absent, null or [] admits anyone.
   * Compiled when the configuration loads, that a bad rule is a configuration problem, not a surprise per message.
   */
  whitelistIngestAddresses: z.optional(
    z.nullable(
      z.array(
        z.string().check(
          z.superRefine((rule, ctx) => {
            try {
              compileAllowList([rule]);
            } catch (error) {
              if (!(error instanceof AllowListRuleError)) throw error;
              ctx.addIssue({ code: 'custom', message: error.message });
            }
          }),
        ),
      ),
    ),
  ),
  /**
   * How the header From is authenticated before the allow-list applies: off, aligned or dmarc;
   * absent: auth.senderAuthentication.
   */
  senderAuthentication: z.optional(senderAuthenticationMode()),
  /**
   * What a sender its allow-list does not name gets: `refuse` (550 5.7.1) or `hold` (250; the
   * message is kept, nothing uploaded, until it is released or discarded); default refuse.
   * A sender that fails authentication is refused either way.
   */
  unlistedSenders: z._default(z.enum(UNLISTED_SENDER_POLICIES), 'refuse'),
};

const senderWorkspaceSchema = z.object({
  identifier: nonEmptyString(),
  ...senderWorkspaceFields,
  unlistedSenders: z.optional(z.enum(UNLISTED_SENDER_POLICIES)),
});

/** A workspace as the sender check sees it (`unlistedSenders` absent: refuse). */
export type SenderWorkspace = DeepReadonly<z.output<typeof senderWorkspaceSchema>>;
