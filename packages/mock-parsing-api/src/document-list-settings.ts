import * as z from 'zod';

/**
 * How the mock answers `GET /v3/documents?custom_identifier=…`, whose shape the service's
 * public description does not fix: it only says the route lists documents. The service has
 * been seen to list each result as a bare `Meta` instead of a full Document, and a Django
 * REST framework list may be paged, so a client is tested against each: set at creation
 * (createMockApi's `documentList`, `mock-parsing-api --list-items/--list-page-size`) or
 * while running (`PATCH /_mock/settings`, handle-control.ts).
 */
const listItems = z.enum(['document', 'meta']);
const pageSize = z.int().min(1).max(1000).nullable();

export const documentListSettingsSchema = z.strictObject({
  /** `document`: each result a full Document (default); `meta`: each result its bare Meta. */
  items: listItems.default('document'),
  /** Results per page, past which the answer names a `next` page; null (default): one page. */
  pageSize: pageSize.default(null),
});

/** A change: only the settings given are changed. */
export const documentListChangeSchema = z.strictObject({
  items: listItems.optional(),
  pageSize: pageSize.optional(),
});

export type DocumentListSettings = z.output<typeof documentListSettingsSchema>;
/** What a caller gives: any of the settings, the rest at their defaults (or as they were). */
export type DocumentListSettingsInput = z.input<typeof documentListSettingsSchema>;

/** The settings for a new mock; throws a ZodError naming every problem. */
export function documentListSettings(input: DocumentListSettingsInput = {}): DocumentListSettings {
  return documentListSettingsSchema.parse(input);
}

/** The settings with a change applied; throws a ZodError naming every problem. */
export function changeDocumentListSettings(
  current: DocumentListSettings,
  change: unknown,
): DocumentListSettings {
  const parsed = documentListChangeSchema.parse(change);
  // A key left out keeps its value; `pageSize: null` goes back to one page.
  return {
    items: parsed.items ?? current.items,
    pageSize: parsed.pageSize === undefined ? current.pageSize : parsed.pageSize,
  };
}
