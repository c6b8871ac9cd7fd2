import { Minimatch, type MinimatchOptions } from 'minimatch';
import { type NormalizedAddress, normalizeDomain } from './normalize-address.ts';

/** A `whitelistIngestAddresses` rule the gateway cannot apply; thrown when compiling, never when matching. */
export class AllowListRuleError extends Error {
  readonly rule: string;
  readonly reason: string;

  constructor(rule: string, reason: string) {
    super(`allow-list rule ${JSON.stringify(rule)} ${reason}`);
    this.name = 'AllowListRuleError';
    this.rule = rule;
    this.reason = reason;
  }
}

export type AllowListMatcher = (address: NormalizedAddress) => boolean;

/**
 * Plain wildcards only (docs/architecture.md, "The sender check"). A leading `!` or `#`, braces and extglobs
 * would otherwise widen a rule in ways a reader of the list does not expect; the rule text
 * refuses them too, so they are never silently read as literal characters either. The
 * platform is fixed so a `\` escapes the same way on every machine.
 */
const MATCH_OPTIONS: MinimatchOptions = {
  nonegate: true,
  nocomment: true,
  nobrace: true,
  noext: true,
  noglobstar: true,
  nocase: true,
  dot: true,
  platform: 'linux',
};

/**
 * minimatch matches paths and never lets `*` cross a `/`, which is legal in a local part
 * (RFC 5322 atext). Both sides swap it for NUL, which no admitted address or rule can hold.
 */
function hideSlashes(local: string): string {
  return local.replaceAll('/', '\u0000');
}

const WILDCARD = /[*?[]/;
/** A wildcard domain label: LDH plus `*` and `?`. Classes and IDN would need per-label punycode. */
const WILDCARD_DOMAIN = /^[a-z0-9*?-]+(?:\.[a-z0-9*?-]+)*$/;

/**
 * Compile `whitelistIngestAddresses` into a matcher. Absent, null or empty admits any sender
 * (the service's own rule). Each rule is split at its `@`; the local pattern is matched
 * case-insensitively with minimatch, the domain pattern is normalised like an address domain
 * and compared exactly (or with minimatch when it has wildcards). Matching the two halves
 * apart is what keeps a `*` from spanning the `@`.
 */
export function compileAllowList(rules: readonly string[] | null | undefined): AllowListMatcher {
  if (rules === null || rules === undefined || rules.length === 0) {
    return () => true;
  }
  const compiled = rules.map(compileRule);
  return (address) => compiled.some((matches) => matches(address));
}

function compileRule(rule: string): AllowListMatcher {
  const reason = refusal(rule);
  if (reason !== null) {
    throw new AllowListRuleError(rule, reason);
  }
  const at = rule.lastIndexOf('@');
  const local = new Minimatch(hideSlashes(rule.slice(0, at)), MATCH_OPTIONS);
  const matchesDomain = compileDomain(rule, rule.slice(at + 1));
  return (address) => matchesDomain(address.domain) && local.match(hideSlashes(address.local));
}

/** Why a rule is refused, from its text alone; null when it is usable. */
function refusal(rule: string): string | null {
  if (rule === '') {
    return 'is empty';
  }
  if (/[\p{Cc}\p{Cf}\s]/u.test(rule)) {
    return 'holds whitespace or a control character';
  }
  if (rule.startsWith('!')) {
    return 'starts with "!": negation is not supported';
  }
  if (rule.startsWith('#')) {
    return 'starts with "#": comments are not supported';
  }
  if (rule.includes('**')) {
    return 'holds "**": use a single "*"';
  }
  if (/[{}]/.test(rule)) {
    return 'holds a brace: brace expansion is not supported, list each address as its own rule';
  }
  if (/[()]/.test(rule)) {
    return 'holds a parenthesis: extglobs like +(a|b) are not supported';
  }
  const ats = rule.split('@').length - 1;
  if (ats !== 1) {
    return ats === 0 ? 'has no "@"' : `has ${ats} "@", expected one`;
  }
  const at = rule.indexOf('@');
  if (at === 0) {
    return 'has nothing before "@"';
  }
  if (at === rule.length - 1) {
    return 'has nothing after "@"';
  }
  return null;
}

function compileDomain(rule: string, pattern: string): (domain: string) => boolean {
  if (!WILDCARD.test(pattern)) {
    const domain = normalizeDomain(pattern);
    if (domain === null) {
      throw new AllowListRuleError(
        rule,
        `has ${JSON.stringify(pattern)} for a domain, which is not a hostname`,
      );
    }
    return (candidate) => candidate === domain;
  }
  const lowered = (pattern.endsWith('.') ? pattern.slice(0, -1) : pattern).toLowerCase();
  // Labels without wildcards still take their ASCII form, so `*.bücher.example` works.
  const labels = lowered.split('.').map((label) => (WILDCARD.test(label) ? label : normalizeDomain(label)));
  const ascii = labels.join('.');
  if (labels.includes(null) || !WILDCARD_DOMAIN.test(ascii)) {
    throw new AllowListRuleError(
      rule,
      `has ${JSON.stringify(pattern)} for a domain pattern; use letters, digits, "-", "." and the wildcards "*" and "?"`,
    );
  }
  const matcher = new Minimatch(ascii, MATCH_OPTIONS);
  return (candidate) => matcher.match(candidate);
}
