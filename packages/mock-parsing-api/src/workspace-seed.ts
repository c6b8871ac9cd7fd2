import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import * as z from 'zod';
import { type DocumentTypeSeed, documentTypeSeedSchema } from './document-type-store.ts';
import { errorMessage } from './error-message.ts';
import {
  collectionFor,
  defaultCollection,
  defaultOrganization,
  defaultValidationToolConfig,
  generatedIngestEmail,
} from './workspace-defaults.ts';
import { type MockOrganization, type MockWorkspace, VISIBILITIES } from './workspace-shape.ts';

/**
 * What the mock's workspaces start as: a fixture file (YAML or JSON) of partial Workspaces,
 * or a gateway configuration's `workspaces`. Only `identifier` is required; everything left
 * out gets a plausible default (workspace-defaults.ts), so a fixture says only what a test
 * cares about.
 */

const text = z.string().min(1);
const count = z.int().min(0);

const booleanFlags = [
  'hideActions',
  'hideCollection',
  'hideEditPages',
  'hideExport',
  'hideFilename',
  'hideShowRawValues',
  'hideReject',
  'hideReparse',
  'hideRunOcr',
  'hideTags',
  'hideWarnings',
  'hideDocumentStatus',
  'restrictDocumentSplitting',
  'disableCurrencyFormatting',
  'disableEditDocumentMetadata',
  'disableManualAnnotationEditing',
] as const;

const validationToolSeedSchema = z.strictObject(
  Object.fromEntries(booleanFlags.map((flag) => [flag, z.boolean().optional()])) as Record<
    (typeof booleanFlags)[number],
    z.ZodOptional<z.ZodBoolean>
  >,
);

const organizationSeedSchema = z.strictObject({
  identifier: text.optional(),
  name: text.optional(),
  userRole: text.optional(),
  avatar: z.string().optional(),
  resthookSignatureKey: text.optional(),
  isTrial: z.boolean().optional(),
  validationToolConfig: validationToolSeedSchema.optional(),
  showCustomFieldCreation: z.boolean().optional(),
});

const collectionSeedSchema = z.strictObject({
  identifier: text,
  name: text.optional(),
  /** The extractor's identifier; default `invoice`. */
  extractor: text.optional(),
  unvalidatedDocsCount: count.optional(),
  confirmedDocsCount: count.optional(),
});

const memberSeedSchema = z.strictObject({
  id: z.int().min(1),
  name: z.string(),
  username: text,
  email: text,
  avatar: z.string().optional(),
});

export const workspaceSeedSchema = z.strictObject({
  identifier: text,
  name: text.optional(),
  organization: organizationSeedSchema.optional(),
  visibility: z.enum(VISIBILITIES).optional(),
  collections: z.array(collectionSeedSchema).optional(),
  documentTypes: z.array(text).optional(),
  rejectInvalidDocuments: z.boolean().optional(),
  rejectDuplicates: z.boolean().nullable().optional(),
  members: z.array(memberSeedSchema).optional(),
  unvalidatedDocsCount: count.optional(),
  confirmedDocsCount: count.optional(),
  /** Default: one generated from the identifier (the service generates it). */
  ingestEmail: text.optional(),
  whitelistIngestAddresses: z.array(text).nullable().optional(),
  /** The splitter's identifier, or the `{identifier, name}` a response shows; default none. */
  documentSplitter: z
    .union([text, z.strictObject({ identifier: text, name: text.optional() })])
    .nullable()
    .optional(),
});

export type WorkspaceSeed = z.input<typeof workspaceSeedSchema>;

/**
 * A fixture file: a mapping with a `workspaces` list (as a gateway configuration has) and,
 * optionally, the organization's `documentTypes` (document-type-store.ts); or the bare list
 * of workspaces.
 */
const fixtureSchema = z.strictObject({
  workspaces: z.array(workspaceSeedSchema),
  documentTypes: z.array(documentTypeSeedSchema).optional(),
});

/** What a fixture file seeds. */
export interface MockFixture {
  workspaces: WorkspaceSeed[];
  documentTypes: DocumentTypeSeed[];
}

/** A fixture file that cannot be read or is not a list of workspaces. */
export class WorkspaceFixtureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkspaceFixtureError';
  }
}

/** Reads and validates a fixture file's workspaces; the error names the file and every problem in it. */
export async function loadWorkspaceFixture(path: string): Promise<WorkspaceSeed[]> {
  return (await loadFixture(path)).workspaces;
}

/** Reads and validates a fixture file: its workspaces and document types. */
export async function loadFixture(path: string): Promise<MockFixture> {
  let source: string;
  try {
    source = await readFile(path, 'utf8');
  } catch (caught) {
    throw new WorkspaceFixtureError(`cannot read the workspace fixture ${path}: ${errorMessage(caught)}`);
  }
  let raw: unknown;
  try {
    // YAML 1.2 is a superset of JSON, so one parser reads both kinds of fixture.
    raw = parse(source);
  } catch (caught) {
    throw new WorkspaceFixtureError(
      `the workspace fixture ${path} is not YAML or JSON: ${errorMessage(caught)}`,
    );
  }
  // A bare list is read as the `workspaces` of a mapping, so problems have one path form.
  const parsed = fixtureSchema.safeParse(Array.isArray(raw) ? { workspaces: raw } : raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
    throw new WorkspaceFixtureError(
      `the workspace fixture ${path} is not a list of workspaces:\n  - ${problems.join('\n  - ')}`,
    );
  }
  return { workspaces: parsed.data.workspaces, documentTypes: parsed.data.documentTypes ?? [] };
}

/** The gateway configuration's view of a workspace, all the mock needs from it. */
export interface ConfiguredWorkspace {
  readonly identifier: string;
  /** Absent: the mock generates one, as the service does. */
  readonly ingestEmail?: string | undefined;
  readonly whitelistIngestAddresses?: readonly string[] | null | undefined;
}

/**
 * Seeds from a gateway configuration, so the in-process mock knows the workspaces the
 * gateway routes to, with the same ingest address and allow-list. The first entry of an
 * identifier wins: the service has one ingest address per workspace.
 */
export function workspaceSeedsFromConfig(workspaces: readonly ConfiguredWorkspace[]): WorkspaceSeed[] {
  const seen = new Set<string>();
  const seeds: WorkspaceSeed[] = [];
  for (const workspace of workspaces) {
    if (seen.has(workspace.identifier)) continue;
    seen.add(workspace.identifier);
    seeds.push({
      identifier: workspace.identifier,
      ...(workspace.ingestEmail === undefined ? {} : { ingestEmail: workspace.ingestEmail }),
      whitelistIngestAddresses:
        workspace.whitelistIngestAddresses === undefined || workspace.whitelistIngestAddresses === null
          ? null
          : [...workspace.whitelistIngestAddresses],
    });
  }
  return seeds;
}

/** `first`, then the seeds of `second` whose identifier `first` does not have. */
export function combineSeeds(
  first: readonly WorkspaceSeed[],
  second: readonly WorkspaceSeed[],
): WorkspaceSeed[] {
  const seeded = new Set(first.map((seed) => seed.identifier));
  return [...first, ...second.filter((seed) => !seeded.has(seed.identifier))];
}

/**
 * Full Workspaces from seeds. Seeds are validated here too (a caller in code may pass
 * anything); a later seed of an identifier already seen replaces nothing, it is refused.
 */
export function buildWorkspaces(seeds: readonly WorkspaceSeed[]): MockWorkspace[] {
  const shared = defaultOrganization();
  const seen = new Set<string>();
  return seeds.map((input, index) => {
    const seed = workspaceSeedSchema.parse(input);
    if (seen.has(seed.identifier)) {
      throw new Error(`workspace seed ${index}: identifier ${seed.identifier} is seeded twice`);
    }
    seen.add(seed.identifier);
    return buildWorkspace(seed, shared);
  });
}

function buildWorkspace(seed: z.output<typeof workspaceSeedSchema>, shared: MockOrganization): MockWorkspace {
  const { validationToolConfig, ...organization } = seed.organization ?? {};
  const splitter = seed.documentSplitter;
  const collections = seed.collections?.map((collection) =>
    collectionFor({ ...collection, extractorName: collection.extractor }),
  ) ?? [defaultCollection(seed.identifier)];
  return {
    identifier: seed.identifier,
    organization: {
      ...shared,
      ...organization,
      validationToolConfig: { ...defaultValidationToolConfig(), ...validationToolConfig },
    },
    name: seed.name ?? seed.identifier,
    visibility: seed.visibility ?? 'organization',
    collections,
    documentTypes: seed.documentTypes ?? [],
    rejectInvalidDocuments: seed.rejectInvalidDocuments ?? false,
    rejectDuplicates: seed.rejectDuplicates === undefined ? false : seed.rejectDuplicates,
    members: (seed.members ?? []).map((member) => ({
      ...member,
      avatar: member.avatar ?? `https://files.example.com/avatars/${member.id}.png?signature=mock`,
    })),
    // A workspace's counts default to the sum of its collections', as the service's would be.
    unvalidatedDocsCount:
      seed.unvalidatedDocsCount ?? collections.reduce((sum, c) => sum + c.unvalidatedDocsCount, 0),
    confirmedDocsCount:
      seed.confirmedDocsCount ?? collections.reduce((sum, c) => sum + c.confirmedDocsCount, 0),
    ingestEmail: seed.ingestEmail ?? generatedIngestEmail(seed.identifier),
    whitelistIngestAddresses: seed.whitelistIngestAddresses ?? null,
    documentSplitter:
      splitter === undefined || splitter === null
        ? null
        : typeof splitter === 'string'
          ? { identifier: splitter, name: splitter }
          : { identifier: splitter.identifier, name: splitter.name ?? splitter.identifier },
  };
}
