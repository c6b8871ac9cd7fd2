import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import type { Env } from '../../config/interpolate-env.ts';
import { ConfigError, parseConfig } from '../../config/load-config.ts';
import { asError } from '../../errors.ts';
import type { ServiceWorkspace } from '../../parsing-api/service-workspace.ts';
import { WorkspaceApiError, type WorkspaceClient } from '../../parsing-api/workspace-client.ts';
import { type CommandStreams, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, type Output } from './command-io.ts';
import { ConfigRewriteError, rewriteWorkspaces, type WorkspaceEdit } from './config-rewrite.ts';
import { compareWorkspace, inSync, type LocalWorkspace, type WorkspaceComparison } from './workspace-diff.ts';

/**
 * `ingest-gateway workspace sync [--write]`: reads every configured workspace from the
 * service and reports, per workspace, where the service's `ingestEmail` and
 * `whitelistIngestAddresses` differ from the configuration. The service generates the
 * ingest address and may change it, and the allow-list can be edited in its web app, so the
 * gateway's copy drifts; `--write` takes the service's values into the file (comments and
 * layout kept, config-rewrite.ts), after checking that the result is still a valid
 * configuration. A workspace the service does not know is reported and left in the file:
 * deleting a route is a decision for a person.
 *
 * Exit code: 0 when every workspace could be read (differences are a result, not an error);
 * 1 when the service refused or did not answer for at least one (the others are still
 * reported, and with --write still written); 2 when --write would make the file invalid or
 * cannot edit it, in which case nothing is written.
 */

export interface SyncOptions {
  /** The configured workspaces, in the file's order. */
  workspaces: readonly LocalWorkspace[];
  /** The file they were read from; --write rewrites it. */
  configPath: string;
  write: boolean;
  /** The environment the configuration was loaded with, to validate the rewritten file alike. */
  env: Env;
  /**
   * `discovery` is set: the entries are settings over the service's workspaces, and only the
   * ingestEmail and allow-list an entry names (its overrides) are compared.
   */
  discovery?: boolean;
  /** Hears how many of the workspaces have been read from the service. */
  onProgress?: (done: number, total: number) => void;
}

type Fetched = { ok: true; workspace: ServiceWorkspace } | { ok: false; error: WorkspaceApiError };

export async function syncWorkspacesCommand(
  options: SyncOptions,
  client: WorkspaceClient,
  streams: CommandStreams,
): Promise<number> {
  const { stdout } = streams;
  // One request per workspace; a workspace routed from two addresses is read once.
  const fetched = new Map<string, Fetched>();
  const identifiers = new Set(options.workspaces.map((workspace) => workspace.identifier));
  for (const identifier of identifiers) {
    options.onProgress?.(fetched.size, identifiers.size);
    fetched.set(identifier, await readWorkspace(client, identifier));
  }
  options.onProgress?.(fetched.size, identifiers.size);

  const edits: WorkspaceEdit[] = [];
  let unreadable = 0;
  let differing = 0;
  options.workspaces.forEach((local, index) => {
    const result = fetched.get(local.identifier);
    if (result === undefined) return;
    if (!result.ok) {
      unreadable += 1;
      stdout.write(describeFailure(local, result.error, options.configPath));
      return;
    }
    const comparison = compareWorkspace(local, result.workspace, options.discovery === true);
    if (inSync(comparison)) {
      stdout.write(
        `${label(local)}: ${followsService(local, options) ? 'follows the service' : 'in sync'}\n`,
      );
      return;
    }
    differing += 1;
    stdout.write(`${label(local)}: differs from the service\n${describeDifferences(comparison)}`);
    const edit = editFor(index, local.identifier, comparison);
    if (edit) edits.push(edit);
  });

  const total = options.workspaces.length;
  stdout.write(
    `${total - differing - unreadable} in sync, ${differing} different, ${unreadable} not read from the service\n`,
  );
  if (!options.write) {
    if (edits.length > 0)
      stdout.write(`run with --write to take the service's values into ${options.configPath}\n`);
  } else if (edits.length === 0) {
    stdout.write(`nothing to write to ${options.configPath}\n`);
  } else {
    const written = await writeEdits(options, edits, streams);
    if (written !== EXIT_OK) return written;
  }
  return unreadable > 0 ? EXIT_REFUSED : EXIT_OK;
}

async function readWorkspace(client: WorkspaceClient, identifier: string): Promise<Fetched> {
  try {
    return { ok: true, workspace: await client.getWorkspace(identifier) };
  } catch (caught) {
    if (caught instanceof WorkspaceApiError) return { ok: false, error: caught };
    throw caught;
  }
}

function label(local: LocalWorkspace): string {
  return `${local.identifier} (${local.ingestEmail ?? "the service's address"})`;
}

/** With discovery, an entry that overrides neither the address nor the allow-list. */
function followsService(local: LocalWorkspace, options: SyncOptions): boolean {
  return (
    options.discovery === true &&
    local.ingestEmail === undefined &&
    local.whitelistIngestAddresses === undefined
  );
}

function describeFailure(local: LocalWorkspace, error: WorkspaceApiError, configPath: string): string {
  if (error.status === 404) {
    return `${label(local)}: the service does not know this workspace; it stays in ${configPath}\n  ${error.message}\n`;
  }
  return `${label(local)}: could not be read: ${error.message}\n`;
}

function describeDifferences(comparison: WorkspaceComparison): string {
  const lines: string[] = [];
  const email = comparison.ingestEmail;
  if (email) {
    lines.push(
      email.service === null
        ? `  ingestEmail: local ${email.local}, the service has none (left as it is)`
        : `  ingestEmail: local ${email.local}, service ${email.service}`,
    );
  }
  const rules = comparison.whitelistIngestAddresses;
  if (rules) {
    lines.push(
      `  whitelistIngestAddresses: local ${describeRules(rules.local)}, service ${describeRules(rules.service)}`,
    );
    if (rules.onlyLocal.length > 0) lines.push(`    only local: ${rules.onlyLocal.join(', ')}`);
    if (rules.onlyService.length > 0) lines.push(`    only at the service: ${rules.onlyService.join(', ')}`);
  }
  return lines.map((line) => `${line}\n`).join('');
}

function describeRules(rules: readonly string[] | null): string {
  return rules === null ? 'any sender' : JSON.stringify(rules);
}

function editFor(
  index: number,
  identifier: string,
  comparison: WorkspaceComparison,
): WorkspaceEdit | undefined {
  const ingestEmail = comparison.ingestEmail?.service ?? undefined;
  const rules = comparison.whitelistIngestAddresses;
  if (ingestEmail === undefined && rules === undefined) return undefined;
  return {
    index,
    identifier,
    ...(ingestEmail === undefined ? {} : { ingestEmail }),
    ...(rules === undefined
      ? {}
      : { whitelistIngestAddresses: rules.service === null ? null : [...rules.service] }),
  };
}

/** Rewrites, re-validates, and only then replaces the file (by rename, so never half-written). */
async function writeEdits(
  options: SyncOptions,
  edits: WorkspaceEdit[],
  streams: CommandStreams,
): Promise<number> {
  const path = options.configPath;
  const refuse = (reason: string) => {
    streams.stderr.write(`${reason}\nnothing was written to ${path}\n`);
    return EXIT_USAGE;
  };
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (caught) {
    return refuse(`cannot read ${path}: ${asError(caught).message}`);
  }
  let rewrite: ReturnType<typeof rewriteWorkspaces>;
  try {
    rewrite = rewriteWorkspaces(text, edits);
  } catch (caught) {
    if (!(caught instanceof ConfigRewriteError)) throw caught;
    return refuse(`cannot edit ${path}: ${caught.message}`);
  }
  try {
    const reloaded = parseConfig({ text: rewrite.text, env: options.env, source: path });
    const unchanged = edits.filter((edit) => !applied(edit, reloaded.workspaces[edit.index]));
    if (unchanged.length > 0) {
      return refuse(
        `the edit of ${unchanged.map((edit) => edit.identifier).join(', ')} did not take; change it by hand`,
      );
    }
  } catch (caught) {
    if (!(caught instanceof ConfigError)) throw caught;
    return refuse(
      `with the service's values ${path} would not be a valid configuration:\n${problemList(caught.problems)}`,
    );
  }
  await replaceFile(path, rewrite.text);
  writeNotes(streams.stdout, rewrite.notes);
  streams.stdout.write(
    `wrote ${path}: took the service's values for ${edits.map((edit) => edit.identifier).join(', ')}\n`,
  );
  return EXIT_OK;
}

/** Whether the reloaded configuration now agrees with the service on the fields edited. */
function applied(edit: WorkspaceEdit, reloaded: LocalWorkspace | undefined): boolean {
  if (reloaded === undefined || reloaded.identifier !== edit.identifier) return false;
  const comparison = compareWorkspace(reloaded, {
    ingestEmail: edit.ingestEmail ?? reloaded.ingestEmail,
    whitelistIngestAddresses:
      edit.whitelistIngestAddresses === undefined
        ? reloaded.whitelistIngestAddresses
        : edit.whitelistIngestAddresses,
  });
  return inSync(comparison);
}

async function replaceFile(path: string, text: string): Promise<void> {
  const { mode } = await stat(path);
  const temporary = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, text, { mode });
    await rename(temporary, path);
  } catch (caught) {
    await rm(temporary, { force: true });
    throw caught;
  }
}

function writeNotes(out: Output, notes: readonly string[]): void {
  for (const note of notes) out.write(`note: ${note}\n`);
}

function problemList(problems: readonly string[]): string {
  return problems.map((problem) => `  - ${problem}`).join('\n');
}
