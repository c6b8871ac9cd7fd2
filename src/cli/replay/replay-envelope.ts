import { Headers } from '@zone-eu/mailsplit';
import addressparser from 'nodemailer/lib/addressparser';

/** MAIL FROM and RCPT TO of a replayed message, as a sending server would have given them. */
export interface ReplayEnvelope {
  mailFrom: string | null;
  rcptTo: string[];
}

export interface EnvelopeChoice {
  /** --to: the recipients, whatever the message says. */
  to?: readonly string[];
  /** --from: the envelope sender, whatever the message says. */
  from?: string;
  /** The sender on an mbox separator line. */
  separatorSender: string | null;
  /** Whether an address is one the gateway takes mail for (an ingest or postmaster address). */
  isServed(address: string): boolean;
}

/**
 * The envelope of a message from its header block (README, "Replaying mail"). Recipients:
 * --to; else the served addresses among Delivered-To and X-Original-To, which the mailbox
 * that kept the message was given by its MTA; else the served addresses among To and Cc;
 * else the first address of those headers, which RCPT then refuses as unknown. Sender:
 * --from; else Return-Path, the mbox separator's sender, the From address, in that order;
 * `<>` (a bounce) stays the null sender.
 */
export function replayEnvelope(headBlock: Buffer, choice: EnvelopeChoice): ReplayEnvelope {
  const headers = new Headers(headerBlock(headBlock));
  const addressesOf = (...keys: string[]) =>
    keys.flatMap((key) => headers.getDecoded(key).flatMap((header) => addressesIn(header.value)));
  return {
    mailFrom: choice.from ?? senderOf(headers, choice.separatorSender, addressesOf),
    rcptTo: choice.to ? [...choice.to] : recipientsOf(addressesOf, choice.isServed),
  };
}

function recipientsOf(
  addressesOf: (...keys: string[]) => string[],
  isServed: (a: string) => boolean,
): string[] {
  const delivered = addressesOf('delivered-to', 'x-original-to');
  const written = addressesOf('to', 'cc');
  for (const candidates of [delivered, written]) {
    const served = unique(candidates.filter(isServed));
    if (served.length > 0) return served;
  }
  const [first] = [...delivered, ...written];
  return first === undefined ? [] : [first];
}

function senderOf(
  headers: Headers,
  separatorSender: string | null,
  addressesOf: (...keys: string[]) => string[],
): string | null {
  const returnPath = headers.getDecoded('return-path')[0]?.value.trim();
  if (returnPath !== undefined) {
    return returnPath === '<>' ? null : (addressesIn(returnPath)[0] ?? null);
  }
  return separatorSender ?? addressesOf('from')[0] ?? null;
}

function addressesIn(value: string): string[] {
  return addressparser(value, { flatten: true })
    .map((entry) => entry.address)
    .filter((address): address is string => typeof address === 'string' && address.includes('@'));
}

function unique(addresses: readonly string[]): string[] {
  const seen = new Set<string>();
  return addresses.filter((address) => {
    const key = address.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The header block: up to the first empty line (CRLF or LF line ends), or all of `head`. */
function headerBlock(head: Buffer): Buffer {
  const crlf = head.indexOf('\r\n\r\n');
  const lf = head.indexOf('\n\n');
  const ends = [crlf === -1 ? -1 : crlf + 2, lf === -1 ? -1 : lf + 1].filter((end) => end !== -1);
  return ends.length === 0 ? head : head.subarray(0, Math.min(...ends));
}
