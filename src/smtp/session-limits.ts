import type { SMTPServerAddress, SMTPServerSession } from 'smtp-server';
import { RefusalError } from '../errors.ts';

/**
 * The per-session decisions of the SMTP edge that need no I/O: which commands exist, how many
 * recipients a transaction may name, whether MAIL may start before STARTTLS. Pure; the
 * smtp-server hooks in create-smtp-server.ts call them.
 */

/**
 * Commands the gateway never serves, whatever smtp-server would do with them:
 * - AUTH: an MX takes mail for its own addresses from anyone; credentials would only be a
 *   target for password guessing;
 * - XCLIENT, XFORWARD: they let a client claim another address (Postfix proxies use them);
 *   the gateway learns a proxied address from the PROXY protocol, and only from the load
 *   balancers listed in smtp.proxyProtocolFrom;
 * - WIZ, SHELL, KILL: sendmail jokes smtp-server answers; nothing but fingerprinting surface.
 */
const NEVER_SERVED = ['AUTH', 'XCLIENT', 'XFORWARD', 'WIZ', 'SHELL', 'KILL'] as const;

/**
 * smtp-server's disabledCommands. Without a configured certificate STARTTLS is disabled
 * too, so it is not advertised: smtp-server would otherwise offer it with a built-in
 * certificate whose private key is published.
 */
export function disabledCommands(startTls: boolean): string[] {
  return startTls ? [...NEVER_SERVED] : [...NEVER_SERVED, 'STARTTLS'];
}

/**
 * Whether RCPT TO `address` would make the transaction name more than `max` recipients. A
 * repeated address (compared without case, as smtp-server does) replaces its entry and adds
 * none, so it is never refused for the count.
 */
export function exceedsRecipientLimit(
  accepted: readonly SMTPServerAddress[],
  address: string,
  max: number,
): boolean {
  if (accepted.length < max) return false;
  const key = address.toLowerCase();
  return !accepted.some((rcpt) => rcpt.address.toLowerCase() === key);
}

export function tooManyRecipients(max: number): RefusalError {
  return new RefusalError(
    'TOO_MANY_RECIPIENTS',
    `too many recipients: at most ${max} per message; send the rest in another transaction`,
  );
}

/** With smtp.requireTls, a transaction may only start in a TLS session (RFC 3207 4). */
export function tlsRequiredRefusal(requireTls: boolean, session: Pick<SMTPServerSession, 'secure'>) {
  return requireTls && !session.secure
    ? new RefusalError('TLS_REQUIRED', 'must issue a STARTTLS command first')
    : null;
}
