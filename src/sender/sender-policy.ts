import type { z } from 'zod/mini';
import type { ArcResult, AuthenticationResults } from './authentication-results.ts';
import type { senderAuthenticationSchema, senderVerdictSchema } from './sender-authentication-schema.ts';
import type { SenderAuthenticationMode } from './sender-settings-schema.ts';

/** How the results judge the From domain under one mode (sender-authentication-schema.ts). */
export type SenderVerdict = z.output<typeof senderVerdictSchema>;

export interface SenderPolicyInput {
  mode: Exclude<SenderAuthenticationMode, 'off'>;
  /** The header From domain, normalised as parseFromHeader returns it. */
  fromDomain: string;
  results: AuthenticationResults;
  /** ARC sealer domains (normalised) whose ARC-Authentication-Results are believed. */
  trustedArcSealers: ReadonlySet<string>;
  /** The alignment rule, loaded with mailauth by the run that produced `results`. */
  alignsRelaxed: RelaxedAlignment;
}

/**
 * DMARC's relaxed identifier alignment (RFC 7489 §3.1.1): whether the two domains share an
 * Organizational Domain, taken from the Public Suffix List. Pure; it comes with the results
 * (see load-mailauth.ts) so that the policy stays synchronous without loading mailauth itself.
 */
export type RelaxedAlignment = (fromDomain: string, domain: string) => boolean;

/** One message's authentication results, with the alignment rule they are judged by. */
export interface SenderEvidence {
  results: AuthenticationResults;
  alignsRelaxed: RelaxedAlignment;
}

/**
 * Whether the results authenticate the From domain under `mode` (auth-settings-schema.ts
 * says what each mode asks for). Pure. Order: the message's
 * own SPF/DKIM/DMARC results; then a trusted ARC chain; then, if a DNS failure could have
 * changed the answer, temperror; otherwise fail.
 *
 * DKIM signatures whose l= leaves part of the body unsigned never count: anything appended
 * after the signed length (an attachment, a new MIME part) would ride on the signature.
 */
export function evaluateSender(input: SenderPolicyInput): SenderVerdict {
  const { mode, fromDomain, results } = input;
  const direct = mode === 'aligned' ? alignedPass(input) : dmarcPass(fromDomain, results);
  if (direct) return direct;

  const arc = arcPass(input);
  if (arc.pass) return { outcome: 'pass', via: 'arc', domain: arc.sealer };

  const unresolved = temporaryFailures(input);
  if (unresolved.length > 0) {
    return {
      outcome: 'temperror',
      reason: `sender authentication failed temporarily: DNS lookup failed for ${unresolved.join(', ')}; try again later`,
    };
  }

  const notes = [partialSignatureNote(input), arc.note].filter((note) => note !== null);
  const failed =
    mode === 'aligned'
      ? `the From domain ${fromDomain} is not aligned with a passing SPF or DKIM result`
      : `DMARC did not pass for the From domain ${fromDomain} (dmarc=${results.dmarc?.result ?? 'none'})`;
  return {
    outcome: 'fail',
    reason: ['sender not authenticated: ', failed, ...notes.map((n) => `; ${n}`)].join(''),
  };
}

/** Whether `domain` is known and aligned with the From domain under the input's rule. */
function aligned(input: SenderPolicyInput, domain: string | null): boolean {
  return domain !== null && input.alignsRelaxed(input.fromDomain, domain);
}

function alignedPass(input: SenderPolicyInput): SenderVerdict | null {
  const { spf, dkim } = input.results;
  if (spf.result === 'pass' && spf.domain !== null && aligned(input, spf.domain)) {
    return { outcome: 'pass', via: 'spf', domain: spf.domain };
  }
  const signature = dkim.find(
    (entry) => entry.result === 'pass' && entry.unsignedBodyBytes === 0 && aligned(input, entry.domain),
  );
  return signature?.domain ? { outcome: 'pass', via: 'dkim', domain: signature.domain } : null;
}

function dmarcPass(fromDomain: string, results: AuthenticationResults): SenderVerdict | null {
  const dmarc = results.dmarc;
  if (dmarc === null || dmarc.result !== 'pass' || dmarc.fromDomain !== fromDomain) return null;
  // mailauth's DMARC counts an aligned l= signature; here only SPF or a whole-body signature does.
  const domain = dmarc.spfAligned ?? (dmarc.dkimUnsignedBodyBytes === 0 ? dmarc.dkimAligned : null);
  return domain === null ? null : { outcome: 'pass', via: 'dmarc', domain };
}

/**
 * A chain that validates, every seal of it by a trusted sealer, whose first participant
 * recorded results that authenticate the From domain under the mode. Every seal, not just
 * the newest: a seal at instance 1 under an attacker's own domain validates as well as any,
 * and the first-hop results it carries would be the attacker's word.
 */
function arcPass(
  input: SenderPolicyInput,
): { pass: true; sealer: string } | { pass: false; note: string | null } {
  const arc: ArcResult | null = input.results.arc;
  if (arc === null) return { pass: false, note: null };
  if (arc.result !== 'pass')
    return { pass: false, note: `its ARC chain does not validate (arc=${arc.result})` };
  const untrusted = arc.sealers.filter((sealer) => !input.trustedArcSealers.has(sealer));
  if (untrusted.length > 0) {
    return { pass: false, note: `its ARC chain is sealed by ${listed(untrusted)}, not a trusted ARC sealer` };
  }
  const hop = arc.firstHop;
  // A chain that validates has a seal; an empty list would be a summary that lost it.
  if (arc.sealers.length === 0) return { pass: false, note: 'its ARC chain names no sealer' };
  const { fromDomain, mode } = input;
  const dmarc = hop?.dmarc?.result === 'pass' && hop.dmarc.fromDomain === fromDomain;
  const alignedHop =
    mode === 'aligned' &&
    ((hop?.spf?.result === 'pass' && aligned(input, hop.spf.mailFromDomain)) ||
      (hop?.dkim ?? []).some((entry) => entry.result === 'pass' && aligned(input, entry.domain)));
  const last = arc.sealers[arc.sealers.length - 1] ?? '';
  if (dmarc || alignedHop) return { pass: true, sealer: last };
  return {
    pass: false,
    note: `the first hop of its trusted ARC chain did not authenticate ${fromDomain} either`,
  };
}

/** The checks that ended in temperror and could have authenticated the From domain. */
function temporaryFailures(input: SenderPolicyInput): string[] {
  const { mode, fromDomain, results } = input;
  const failed: string[] = [];
  const { spf, dkim, dmarc } = results;
  if (spf.result === 'temperror' && aligned(input, spf.domain)) failed.push(`SPF of ${spf.domain}`);
  for (const entry of dkim) {
    if (entry.result === 'temperror' && aligned(input, entry.domain)) {
      failed.push(`the DKIM key of ${entry.domain}`);
    }
  }
  if (mode === 'dmarc') {
    // Without a record (none) DMARC cannot pass, whatever SPF and DKIM would have said.
    if (dmarc?.result === 'none') return [];
    if (dmarc?.result === 'temperror') failed.push(`the DMARC record of ${fromDomain}`);
  }
  return failed;
}

/**
 * At most three names: a chain has up to 50 seals (RFC 8617 §4.2.1) and the reply line should
 * stay within RFC 5321 §4.5.3.1.5's 512 octets.
 */
function listed(names: readonly string[]): string {
  const shown = names.slice(0, 3).join(', ');
  return names.length > 3 ? `${shown} and ${names.length - 3} more` : shown;
}

function partialSignatureNote(input: SenderPolicyInput): string | null {
  const partial = input.results.dkim.find(
    (entry) => entry.result === 'pass' && entry.unsignedBodyBytes > 0 && aligned(input, entry.domain),
  );
  return partial
    ? `the DKIM signature of ${partial.domain} does not count: its l= leaves ${partial.unsignedBodyBytes} body bytes unsigned`
    : null;
}

/** What the message record keeps of a message's sender authentication. */
export type SenderAuthentication = z.output<typeof senderAuthenticationSchema>;
