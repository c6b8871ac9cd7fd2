import * as z from 'zod';
import { generatedIngestEmail, rotatedIngestEmail } from './workspace-defaults.ts';

/**
 * The mock's document types, listed by `GET /v3/document_types?organization=…`. The service's
 * public description names document types only by identifier (a workspace's `documentTypes`);
 * a listed one here has the fields an e-mail gateway reads: its own ingest address and the
 * workspace it belongs to, when it belongs to one. Reads hand out copies.
 */
export interface MockDocumentType {
  identifier: string;
  name: string;
  /** The organization's identifier. */
  organization: string;
  /** The workspace's identifier; null for a type of the whole organization. */
  workspace: string | null;
  /** The address mail for this type is sent to; null when the type has none. */
  ingestEmail: string | null;
}

const text = z.string().min(1);

export const documentTypeSeedSchema = z.strictObject({
  identifier: text,
  name: text.optional(),
  /** Default: the mock's organization. */
  organization: text.optional(),
  workspace: text.nullable().optional(),
  /** Default: one generated from the identifier; null: no address. */
  ingestEmail: text.nullable().optional(),
});

export type DocumentTypeSeed = z.input<typeof documentTypeSeedSchema>;

export interface DocumentTypeStore {
  get(identifier: string): MockDocumentType | undefined;
  list(): MockDocumentType[];
  /** Throws when the identifier is taken or the seed is invalid. */
  add(seed: DocumentTypeSeed): MockDocumentType;
  /** False when there was none. */
  remove(identifier: string): boolean;
  /** A new `ingestEmail`: the one given, else a generated one unlike every earlier one. */
  rotate(identifier: string, ingestEmail?: string): MockDocumentType | undefined;
}

export function createDocumentTypeStore(
  seeds: readonly DocumentTypeSeed[],
  /** The organization of a seed that names none. */
  organization: string,
): DocumentTypeStore {
  const types = new Map<string, MockDocumentType>();
  let rotations = 0;
  const store: DocumentTypeStore = {
    get(identifier) {
      const type = types.get(identifier);
      return type && structuredClone(type);
    },
    list() {
      return [...types.values()].map((type) => structuredClone(type));
    },
    add(input) {
      const seed = documentTypeSeedSchema.parse(input);
      if (types.has(seed.identifier)) throw new Error(`document type ${seed.identifier} exists already`);
      const type: MockDocumentType = {
        identifier: seed.identifier,
        name: seed.name ?? seed.identifier,
        organization: seed.organization ?? organization,
        workspace: seed.workspace ?? null,
        ingestEmail:
          seed.ingestEmail === undefined ? generatedIngestEmail(seed.identifier) : seed.ingestEmail,
      };
      types.set(type.identifier, type);
      return structuredClone(type);
    },
    remove(identifier) {
      return types.delete(identifier);
    },
    rotate(identifier, ingestEmail) {
      const current = types.get(identifier);
      if (current === undefined) return undefined;
      rotations += 1;
      const next = { ...current, ingestEmail: ingestEmail ?? rotatedIngestEmail(identifier, rotations) };
      types.set(identifier, next);
      return structuredClone(next);
    },
  };
  for (const seed of seeds) store.add(seed);
  return store;
}
