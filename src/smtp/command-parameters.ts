import type { SMTPServerAddress } from 'smtp-server';
import { RefusalError } from '../errors.ts';

/**
 * The parameters of MAIL and RCPT (RFC 5321 4.1.1.11) the gateway takes, and the 8-bit
 * addresses only SMTPUTF8 allows. smtp-server validates the parameters of extensions it knows
 * and hands every other one to the hooks as if it were fine; a client must instead learn that a
 * parameter it sent means nothing here. Pure.
 */

/** An address as edge-server.ts's parser gives it to the hooks. */
export interface EdgeAddress extends SMTPServerAddress {
  duplicate?: string | undefined;
  /** Written with 8-bit (UTF-8) characters between the angle brackets. */
  writtenInUtf8?: boolean;
}

/** Whether the address of a MAIL or RCPT command line, between its angle brackets, has a non-ASCII character. */
export function writtenInUtf8(commandLine: string): boolean {
  const address = /<([^<>]*)>/.exec(commandLine)?.[1] ?? '';
  return /[^\p{ASCII}]/u.test(address);
}

/**
 * What MAIL takes: SIZE (RFC 1870), BODY (RFC 6152, 8BITMIME) and SMTPUTF8 (RFC 6531), the
 * extensions the EHLO reply advertises. DSN (RET, ENVID), REQUIRETLS and AUTH are not offered.
 */
const MAIL_PARAMETERS: ReadonlySet<string> = new Set(['SIZE', 'BODY', 'SMTPUTF8']);
/** What RCPT takes: nothing, as DSN (NOTIFY, ORCPT) is not offered. */
const RCPT_PARAMETERS: ReadonlySet<string> = new Set();

/** `555 5.5.4` for the first parameter the command may not carry, or null. */
export function unknownParameter(command: 'MAIL' | 'RCPT', address: SMTPServerAddress): RefusalError | null {
  const known = command === 'MAIL' ? MAIL_PARAMETERS : RCPT_PARAMETERS;
  const unknown = Object.keys(address.args || {}).find((key) => !known.has(key.toUpperCase()));
  if (unknown === undefined) return null;
  return new RefusalError('UNKNOWN_PARAMETER', `${command} parameter ${unknown} not recognized`);
}

/**
 * `553 5.6.7` for an address written in UTF-8 in a transaction that did not ask for SMTPUTF8
 * (RFC 6531 3.5): at MAIL `smtpUtf8` is whether this MAIL carries the SMTPUTF8 parameter, at
 * RCPT whether the transaction's MAIL did.
 */
export function utf8AddressRefusal(address: EdgeAddress, smtpUtf8: boolean): RefusalError | null {
  if (smtpUtf8 || address.writtenInUtf8 !== true) return null;
  return new RefusalError(
    'UTF8_ADDRESS_WITHOUT_SMTPUTF8',
    `<${address.address}>: an address in UTF-8 needs MAIL FROM with SMTPUTF8 (RFC 6531)`,
  );
}
