import { compileAllowList } from './compile-allow-list.ts';
import { normalizeAddress } from './normalize-address.ts';
import type { SenderWorkspace } from './sender-settings-schema.ts';

/** What a release may allow from then on: the sender's address, or every address of its domain. */
export type AllowScope = 'address' | 'domain';

/**
 * The allow-list rule that admits `sender` (a header From address as the record keeps it):
 * the address itself, or `*@domain`. Null when the address is not one a rule can name.
 */
export function allowRuleFor(sender: string, scope: AllowScope): string | null {
  const address = normalizeAddress(sender);
  if (address === null) return null;
  const rule = scope === 'address' ? address.address : `*@${address.domain}`;
  return usableRule(rule) ? rule : null;
}

/** Whether the gateway can apply `rule` (compile-allow-list.ts refuses the rest). */
export function usableRule(rule: string): boolean {
  try {
    compileAllowList([rule]);
    return true;
  } catch {
    // The rule's text is what is wrong; the caller only needs to know it is not usable.
    return false;
  }
}

/** Whether `rules` already names `rule`: rules compare without case, as the matcher does. */
export function namesRule(rules: readonly string[], rule: string): boolean {
  const wanted = rule.toLowerCase();
  return rules.some((existing) => existing.toLowerCase() === wanted);
}

/**
 * The workspaces with the senders allowed at a release added to their allow-lists. A
 * workspace whose configured list is empty admits every sender already and stays open; one
 * with a list gets the added rules after its own, each once. A rule the gateway cannot apply
 * is left out rather than failing the whole table. Pure.
 */
export function withAllowedSenders<W extends SenderWorkspace>(
  workspaces: readonly W[],
  added: ReadonlyMap<string, readonly string[]>,
): W[] {
  return workspaces.map((workspace) => {
    const own = workspace.whitelistIngestAddresses ?? [];
    const extra = added.get(workspace.identifier) ?? [];
    if (own.length === 0 || extra.length === 0) return workspace;
    const rules = [...own];
    for (const rule of extra) {
      if (!namesRule(rules, rule) && usableRule(rule)) rules.push(rule);
    }
    return rules.length === own.length ? workspace : { ...workspace, whitelistIngestAddresses: rules };
  });
}
