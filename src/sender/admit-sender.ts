import type { z } from 'zod/mini';
import { RefusalError } from '../errors.ts';
import type { AllowListMatcher } from './compile-allow-list.ts';
import type { FromHeaderResult } from './parse-from-header.ts';
import type { workspaceDecisionSchema } from './sender-authentication-schema.ts';
import {
  evaluateSender,
  type SenderAuthentication,
  type SenderEvidence,
  type SenderVerdict,
} from './sender-policy.ts';
import type { SenderAuthenticationMode, SenderWorkspace } from './sender-settings-schema.ts';

/** One addressed workspace's answer to the sender, as the message record keeps it. */
export type WorkspaceDecision = z.output<typeof workspaceDecisionSchema>;

/**
 * A workspace mail is addressed to, with its allow-list compiled once: what routing a
 * recipient yields, what a transaction holds, and what the admit decision reads.
 */
export interface AdmittingWorkspace<W extends SenderWorkspace = SenderWorkspace> {
  readonly config: W;
  readonly admits: AllowListMatcher;
  /** Its admission policy (admission-policy.ts): recipients of one transaction share it. */
  readonly policy: string;
}

export interface AdmitSenderInput {
  /** The header From, as parseFromHeader read it. */
  sender: FromHeaderResult;
  /** The addressed workspaces, each once. */
  workspaces: readonly AdmittingWorkspace[];
  /** auth.senderAuthentication: the mode of workspaces that name none. */
  defaultMode: SenderAuthenticationMode;
  /** What authentication found; null when no workspace asked for it (see needsAuthentication). */
  evidence: SenderEvidence | null;
  trustedArcSealers: ReadonlySet<string>;
}

export interface AdmitSenderResult {
  decisions: WorkspaceDecision[];
  authentication: SenderAuthentication | null;
  /**
   * The workspaces that hold the message for want of a listed sender (`unlistedSenders: hold`),
   * in order, when none admits it: it is kept for them, nothing uploaded until it is released.
   * Empty when some workspace admits the sender.
   */
  holdingFor: string[];
}

/** The mode a workspace uses: its own, else the configured default. */
export function senderAuthenticationOf(gate: AdmittingWorkspace, defaultMode: SenderAuthenticationMode) {
  return gate.config.senderAuthentication ?? defaultMode;
}

/** Whether any addressed workspace authenticates senders, so the message must be checked. */
export function needsAuthentication(
  workspaces: readonly AdmittingWorkspace[],
  defaultMode: SenderAuthenticationMode,
) {
  return workspaces.some((gate) => senderAuthenticationOf(gate, defaultMode) !== 'off');
}

/**
 * Which addressed workspaces admit the sender. Each workspace first authenticates the From
 * under its own mode (is it genuine?), then applies its allow-list to that From (is it
 * allowed?); checking in that order means a refusal never tells a forger whether the
 * forged address is on the list. Pure; throws the RefusalError the message is answered with:
 * - any workspace's authentication hit a DNS failure: SENDER_AUTHENTICATION_TEMPFAIL (451),
 *   even if another admits, so no workspace loses a message the sender would deliver again;
 * - no workspace admits, one for want of authentication: SENDER_NOT_AUTHENTICATED (550 5.7.1);
 * - no workspace admits: SENDER_NOT_ADMITTED (550 5.7.1), as before authentication existed,
 *   unless a workspace whose allow-list alone refused the sender holds unlisted senders
 *   (`unlistedSenders: hold`): then the result names the workspaces holding it.
 */
export function admitSender(input: AdmitSenderInput): AdmitSenderResult {
  const { sender, defaultMode } = input;
  const fromDomain = sender.ok ? sender.address.domain : null;
  const verdicts: SenderAuthentication['verdicts'] = {};
  const { evidence } = input;
  const verdictFor = (mode: 'aligned' | 'dmarc'): SenderVerdict => {
    const known = verdicts[mode];
    if (known) return known;
    if (evidence === null) throw new Error(`sender authentication (${mode}) asked for without results`);
    const verdict: SenderVerdict = sender.ok
      ? evaluateSender({
          mode,
          fromDomain: sender.address.domain,
          results: evidence.results,
          trustedArcSealers: input.trustedArcSealers,
          alignsRelaxed: evidence.alignsRelaxed,
        })
      : { outcome: 'fail', reason: `sender not authenticated: ${sender.reason}` };
    verdicts[mode] = verdict;
    return verdict;
  };

  let temporary: string | null = null;
  let unauthenticated: string | null = null;
  const holdingFor: string[] = [];
  const decisions = input.workspaces.map((gate): WorkspaceDecision => {
    const mode = senderAuthenticationOf(gate, defaultMode);
    const decision = (admitted: boolean, reason: string | null): WorkspaceDecision => ({
      identifier: gate.config.identifier,
      admitted,
      reason,
      ...(mode === 'off' ? {} : { senderAuthentication: mode }),
    });
    if (mode !== 'off') {
      const verdict = verdictFor(mode);
      if (verdict.outcome === 'temperror') {
        temporary ??= verdict.reason;
        return decision(false, verdict.reason);
      }
      if (verdict.outcome === 'fail') {
        unauthenticated ??= verdict.reason;
        return decision(false, verdict.reason);
      }
    }
    const rules = gate.config.whitelistIngestAddresses;
    // An open workspace admits any sender (docs/architecture.md), even one whose From says nothing usable.
    if (!rules || rules.length === 0) return decision(true, null);
    if (!sender.ok) return decision(false, sender.reason);
    const admitted = gate.admits(sender.address);
    if (!admitted && gate.config.unlistedSenders === 'hold') holdingFor.push(gate.config.identifier);
    return decision(admitted, admitted ? null : 'sender not in the allow-list');
  });

  if (temporary !== null) throw new RefusalError('SENDER_AUTHENTICATION_TEMPFAIL', temporary);
  const authentication = evidence === null ? null : { fromDomain, results: evidence.results, verdicts };
  if (!decisions.some((decision) => decision.admitted)) {
    if (unauthenticated === null && holdingFor.length > 0) return { decisions, authentication, holdingFor };
    if (unauthenticated !== null) throw new RefusalError('SENDER_NOT_AUTHENTICATED', unauthenticated);
    // The reply says which check failed, never which rule would have passed.
    const why = sender.ok
      ? `sender ${sender.address.address} is not admitted for this address`
      : `sender not admitted: ${sender.reason}`;
    throw new RefusalError('SENDER_NOT_ADMITTED', why);
  }
  return { decisions, authentication, holdingFor: [] };
}
