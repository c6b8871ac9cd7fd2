import { inMockOrganization, type MockOrganizationSummary } from './document-side.ts';
import { rotatedIngestEmail } from './workspace-defaults.ts';
import { buildWorkspaces, type WorkspaceSeed } from './workspace-seed.ts';
import type { MockWorkspace, WorkspacePatch, WorkspaceSettings } from './workspace-shape.ts';

/**
 * The mock's workspaces by identifier, and a log of every request made to them. Reads hand
 * out copies, so neither a handler nor a test can change a workspace except through
 * `update`, as a client can only through PATCH.
 */

/** One request to `/v3/workspaces/…` as the mock received it, whether or not it succeeded. */
export interface WorkspaceRequest {
  method: string;
  /** The workspace identifier from the path. */
  identifier: string;
  /** The parsed JSON body; undefined for none, the text itself when it was not JSON. */
  body: unknown;
  /** The response status. */
  status: number;
  /** ISO 8601. */
  receivedAt: string;
}

export interface WorkspaceStore {
  get(identifier: string): MockWorkspace | undefined;
  list(): MockWorkspace[];
  /** Applies a validated patch; undefined when there is no such workspace. */
  update(identifier: string, patch: WorkspacePatch): MockWorkspace | undefined;
  /**
   * Creates a workspace from a seed (workspace-seed.ts), as the service does when a user makes
   * one; throws when the identifier is taken or the seed is invalid.
   */
  add(seed: WorkspaceSeed): MockWorkspace;
  /** Deletes a workspace; false when there was none. */
  remove(identifier: string): boolean;
  /**
   * Gives a workspace a new `ingestEmail`, as the service does when the address is refreshed:
   * `ingestEmail` when given, else a generated one that differs from every earlier one.
   */
  rotate(identifier: string, ingestEmail?: string): MockWorkspace | undefined;
  /** What an upload to this workspace must honour; undefined for an unknown workspace. */
  settings(identifier: string): WorkspaceSettings | undefined;
  /** Every request to the workspace endpoints, oldest first. */
  readonly requests: readonly WorkspaceRequest[];
  record(request: WorkspaceRequest): void;
}

export function createWorkspaceStore(
  seeds: readonly WorkspaceSeed[] = [],
  /** The organization a workspace added at run time belongs to, when its seed names none. */
  organization?: MockOrganizationSummary,
): WorkspaceStore {
  const workspaces = new Map<string, MockWorkspace>();
  /** Rotations so far, so each generated address is new. */
  let rotations = 0;
  /** Splitter names the seeds gave, so an update by identifier shows the same name. */
  const splitterNames = new Map<string, string>();
  for (const workspace of buildWorkspaces(seeds)) {
    workspaces.set(workspace.identifier, workspace);
    const splitter = workspace.documentSplitter;
    if (splitter) splitterNames.set(splitter.identifier, splitter.name);
  }
  const requests: WorkspaceRequest[] = [];

  return {
    get(identifier) {
      const workspace = workspaces.get(identifier);
      return workspace && structuredClone(workspace);
    },
    list() {
      return [...workspaces.values()].map((workspace) => structuredClone(workspace));
    },
    update(identifier, patch) {
      const current = workspaces.get(identifier);
      if (current === undefined) return undefined;
      const { documentSplitter, documentTypes, whitelistIngestAddresses, ...scalars } = patch;
      const next: MockWorkspace = {
        ...current,
        ...scalars,
        ...(documentTypes === undefined ? {} : { documentTypes: [...documentTypes] }),
        ...(whitelistIngestAddresses === undefined
          ? {}
          : { whitelistIngestAddresses: whitelistIngestAddresses && [...whitelistIngestAddresses] }),
        ...(documentSplitter === undefined
          ? {}
          : {
              documentSplitter: {
                identifier: documentSplitter,
                name: splitterNames.get(documentSplitter) ?? documentSplitter,
              },
            }),
      };
      workspaces.set(identifier, next);
      return structuredClone(next);
    },
    add(seed) {
      if (workspaces.has(seed.identifier)) {
        throw new Error(`workspace ${seed.identifier} exists already`);
      }
      const [seeded] = organization ? inMockOrganization([seed], organization) : [seed];
      const [workspace] = buildWorkspaces(seeded ? [seeded] : []);
      if (workspace === undefined) throw new Error('no workspace was built');
      workspaces.set(workspace.identifier, workspace);
      return structuredClone(workspace);
    },
    remove(identifier) {
      return workspaces.delete(identifier);
    },
    rotate(identifier, ingestEmail) {
      const current = workspaces.get(identifier);
      if (current === undefined) return undefined;
      rotations += 1;
      const next = { ...current, ingestEmail: ingestEmail ?? rotatedIngestEmail(identifier, rotations) };
      workspaces.set(identifier, next);
      return structuredClone(next);
    },
    settings(identifier) {
      const workspace = workspaces.get(identifier);
      return (
        workspace && {
          rejectDuplicates: workspace.rejectDuplicates,
          rejectInvalidDocuments: workspace.rejectInvalidDocuments,
          ...(workspace.documentSplitter ? { documentSplitter: workspace.documentSplitter.identifier } : {}),
        }
      );
    },
    requests,
    record(request) {
      requests.push(request);
    },
  };
}
