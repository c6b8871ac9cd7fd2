import type { Readable } from 'node:stream';
import type { AuthenticateOptions, AuthenticateResult } from 'mailauth';
import type { RelaxedAlignment } from './sender-policy.ts';

/** The parts of mailauth the gateway runs, once loaded. */
export interface Mailauth {
  /** SPF, DKIM, DMARC and ARC for one message as it streams in. */
  authenticate(input: Readable, options: AuthenticateOptions): Promise<AuthenticateResult>;
  /** DMARC's relaxed alignment, exactly as mailauth's own DMARC and ARC checks compute it. */
  alignsRelaxed: RelaxedAlignment;
  /** Parses one Authentication-Results style header field (RFC 8601), as mailauth does. */
  parseHeader(line: Buffer | string): { parsed: unknown };
}

/**
 * Loads mailauth. It is imported here, at start when a workspace authenticates senders (else on
 * the first message that needs it), and nowhere statically: with what it brings (tldts's Public
 * Suffix List and Joi, about 21 MiB RSS), loading it always would cost every daemon whose
 * workspaces all leave senderAuthentication `off`, the default.
 */
export async function loadMailauth(): Promise<Mailauth> {
  const [main, tools, headers] = await Promise.all([
    import('mailauth'),
    import('mailauth/lib/tools.js'),
    import('mailauth/lib/parse-dkim-headers.js'),
  ]);
  return {
    authenticate: (input, options) => main.authenticate(input, options),
    alignsRelaxed: (fromDomain, domain) => tools.getAlignment(fromDomain, [domain], false) !== false,
    parseHeader: headers.default,
  };
}
