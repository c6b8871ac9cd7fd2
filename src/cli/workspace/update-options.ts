import type { WorkspaceUpdate } from '../../parsing-api/service-workspace.ts';
import { AllowListRuleError, compileAllowList } from '../../sender/compile-allow-list.ts';

/**
 * The options of `ingest-gateway workspace update ID` turned into a WorkspaceUpdate
 * (docs/parsing-api.md, "Workspaces") holding exactly the fields given. Every value is checked here,
 * before anything is sent, and every problem names its option, so a typo costs no request.
 * Allow-list rules go through the gateway's own compileAllowList: a rule the service would
 * take but the gateway could not apply to the mail it receives is refused too.
 */

/** The raw option values as node:util parseArgs gives them; absent means "not given". */
export interface UpdateOptionValues {
  name?: string | undefined;
  visibility?: string | undefined;
  'reject-invalid-documents'?: string | undefined;
  'reject-duplicates'?: string | undefined;
  'document-types'?: string | undefined;
  whitelist?: string | undefined;
  'document-splitter'?: string | undefined;
}

export const UPDATE_OPTION_NAMES = [
  'name',
  'visibility',
  'reject-invalid-documents',
  'reject-duplicates',
  'document-types',
  'whitelist',
  'document-splitter',
] as const satisfies ReadonlyArray<keyof UpdateOptionValues>;

export type UpdateOptions = { ok: true; update: WorkspaceUpdate } | { ok: false; problems: string[] };

export function parseUpdateOptions(values: UpdateOptionValues): UpdateOptions {
  const update: WorkspaceUpdate = {};
  const problems: string[] = [];

  if (values.name !== undefined) {
    if (values.name.trim() === '') problems.push('--name must not be empty');
    else update.name = values.name;
  }
  if (values.visibility !== undefined) {
    const visibility = values.visibility;
    if (visibility === 'organization' || visibility === 'private') update.visibility = visibility;
    else problems.push(`--visibility must be organization or private, not ${JSON.stringify(visibility)}`);
  }
  const rejectInvalid = values['reject-invalid-documents'];
  if (rejectInvalid !== undefined) {
    const flag = parseBoolean(rejectInvalid);
    if (flag === undefined) {
      problems.push(`--reject-invalid-documents must be true or false, not ${JSON.stringify(rejectInvalid)}`);
    } else update.rejectInvalidDocuments = flag;
  }
  const rejectDuplicates = values['reject-duplicates'];
  if (rejectDuplicates !== undefined) {
    const flag = rejectDuplicates === 'null' ? null : parseBoolean(rejectDuplicates);
    if (flag === undefined) {
      problems.push(
        `--reject-duplicates must be true, false or null, not ${JSON.stringify(rejectDuplicates)}`,
      );
    } else update.rejectDuplicates = flag;
  }
  const documentTypes = values['document-types'];
  if (documentTypes !== undefined) {
    const list = parseList(documentTypes);
    if (list === undefined) {
      problems.push(`--document-types has an empty entry in ${JSON.stringify(documentTypes)}`);
    } else update.documentTypes = list;
  }
  if (values.whitelist !== undefined) {
    const rules = values.whitelist === 'null' ? null : parseList(values.whitelist);
    if (rules === undefined) {
      problems.push(`--whitelist has an empty entry in ${JSON.stringify(values.whitelist)}`);
    } else {
      const refused = refusedRules(rules ?? []);
      if (refused.length === 0) update.whitelistIngestAddresses = rules;
      else problems.push(...refused.map((reason) => `--whitelist: ${reason}`));
    }
  }
  const splitter = values['document-splitter'];
  if (splitter !== undefined) {
    if (splitter.trim() === '') problems.push('--document-splitter must not be empty');
    else update.documentSplitter = splitter;
  }

  if (problems.length > 0) return { ok: false, problems };
  if (Object.keys(update).length === 0) {
    return {
      ok: false,
      problems: [
        `nothing to update: give at least one of ${UPDATE_OPTION_NAMES.map((n) => `--${n}`).join(', ')}`,
      ],
    };
  }
  return { ok: true, update };
}

function parseBoolean(text: string): boolean | undefined {
  if (text === 'true') return true;
  if (text === 'false') return false;
  return undefined;
}

/**
 * `A,B` → ["A", "B"], entries trimmed; `""` → [] (clears the list). An empty entry
 * (`A,,B`, a trailing comma) is most likely a mistake, so it is refused, not dropped.
 */
function parseList(text: string): string[] | undefined {
  if (text.trim() === '') return [];
  const entries = text.split(',').map((entry) => entry.trim());
  return entries.includes('') ? undefined : entries;
}

/** The reason for each rule the gateway's allow-list compiler refuses. */
function refusedRules(rules: readonly string[]): string[] {
  const reasons: string[] = [];
  for (const rule of rules) {
    try {
      compileAllowList([rule]);
    } catch (caught) {
      if (!(caught instanceof AllowListRuleError)) throw caught;
      reasons.push(caught.message);
    }
  }
  return reasons;
}
