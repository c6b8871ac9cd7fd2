import * as z from 'zod/mini';
import { type DeepReadonly, integer, nonEmptyString } from '../config-fields.ts';

/**
 * The `discovery` section (docs/discovery.md): the route table read from the parsing service,
 * the workspaces and document types of one organization with their ingest addresses.
 */
export const discoverySettingsSchema = z.strictObject({
  /** The organization whose workspaces and document types are read. */
  organization: nonEmptyString(),
  /** Milliseconds between reads of the service; default 300000 (5 min). */
  every: z._default(integer(1000, 86_400_000), 300_000),
  /**
   * Seconds an address the service replaced (a rotated ingestEmail) still routes to its
   * workspace, so mail sent to the old address in the meantime is not refused; default
   * 604800 (7 days), 0 for none.
   */
  rotationGrace: z._default(integer(0, 31_536_000), 604_800),
});

export type DiscoverySettings = DeepReadonly<z.output<typeof discoverySettingsSchema>>;
