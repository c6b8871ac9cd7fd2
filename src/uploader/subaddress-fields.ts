import * as z from 'zod/mini';
import { tagKey } from '../sender/subaddress.ts';
import { uploadFieldsSchema } from './upload-options-schema.ts';

/**
 * `workspaces[].subaddresses`: the upload fields of mail addressed with a tag
 * (`inbox+invoices@…`), by tag. A tag's fields go over the workspace's `upload` block field by
 * field, so `{invoices: {documentType: …}}` changes the document type and keeps the rest.
 */

/**
 * A tag as it can follow the separator in an address: no whitespace, control characters,
 * `@`, quotes or backslashes (an address holding those is refused before any lookup).
 */
const TAG = /^[^\s\p{Cc}\p{Cf}@"\\]+$/u;

/** Also when a field is wrong, so that every problem is listed at once. */
const everyProblem = { when: ({ value }: { value: unknown }) => typeof value === 'object' && value !== null };

/**
 * The fields of one tag: any field of the `upload` block but `snake_case`, which changes how
 * the service's answers are read, also by completion tracking, and so stays the workspace's.
 */
const tagFieldsSchema = uploadFieldsSchema.check(
  z.superRefine((fields, ctx) => {
    if (fields.snake_case !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['snake_case'],
        message: 'is the workspace’s: set it in upload, not per tag',
      });
    }
  }, everyProblem),
);

/** Tags to their fields; tags are compared without case, so two that differ only in case are refused. */
export const subaddressesSchema = z.record(z.string(), tagFieldsSchema).check(
  z.superRefine((byTag, ctx) => {
    const seen = new Map<string, string>();
    for (const tag of Object.keys(byTag)) {
      // Checked here rather than by the key's schema, which would only say the key is invalid.
      if (!TAG.test(tag)) {
        ctx.addIssue({
          code: 'custom',
          path: [tag],
          message:
            'expected a tag as written after the separator, e.g. invoices: no space, @, quote or backslash',
        });
        continue;
      }
      const first = seen.get(tagKey(tag));
      if (first === undefined) seen.set(tagKey(tag), tag);
      else
        ctx.addIssue({
          code: 'custom',
          path: [tag],
          message: `is the tag ${first} again (tags are compared without case)`,
        });
    }
  }, everyProblem),
);
