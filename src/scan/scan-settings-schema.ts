import * as z from 'zod/mini';
import { baseUrl, type DeepReadonly, integer, nonEmptyString, port } from '../config-fields.ts';

/**
 * What the configuration says about scanning (README, "Scanning for malware and spam"): the
 * `scan` section, which names the clamd and rspamd the operator runs, and the keys of a
 * workspace that say what their verdicts do to its mail. src/config composes them into the
 * whole file and checks that a workspace names a policy only for a configured scanner.
 */

/** Milliseconds a scanner may keep a message waiting (see README); default 30000. */
const scannerTimeout = () => z._default(integer(100, 600_000), 30_000);

/** clamd, over its own protocol (INSTREAM): on a Unix socket, or on host and port. */
const clamavSchema = z
  .strictObject({
    /** clamd's LocalSocket, e.g. /run/clamav/clamd.ctl. */
    socket: z.optional(nonEmptyString()),
    /** clamd's TCPAddr, with `port` (its TCPSocket). */
    host: z.optional(nonEmptyString()),
    port: z.optional(port()),
    timeout: scannerTimeout(),
  })
  .check(
    z.superRefine((clamav, ctx) => {
      const tcp = clamav.host !== undefined || clamav.port !== undefined;
      if (clamav.socket !== undefined && tcp) {
        ctx.addIssue({
          code: 'custom',
          path: ['socket'],
          message: 'give either socket or host and port, not both',
        });
      } else if (clamav.socket === undefined && (clamav.host === undefined || clamav.port === undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: clamav.host === undefined ? ['host'] : ['port'],
          message: 'clamd is reached by socket, or by host and port together',
        });
      }
    }),
  );

/** rspamd's normal worker (POST /checkv2). */
const rspamdSchema = z.strictObject({
  /** Base URL of the normal worker, e.g. http://127.0.0.1:11333. */
  url: baseUrl(),
  /** The worker's `password`, sent as the Password header; optional, never printed. Env RSPAMD_PASSWORD. */
  password: z.optional(z.string()),
  timeout: scannerTimeout(),
});

/**
 * What a message that could not be scanned gets: `tempfail` answers 451 4.7.1 so the sending
 * server retries (nothing unscanned gets in); `accept` takes it and records it as unscanned.
 */
export const UNAVAILABLE_POLICIES = ['tempfail', 'accept'] as const;

/** The `scan` section; both scanners absent: nothing is scanned. */
export const scanSettingsSchema = z.strictObject({
  clamav: z.optional(clamavSchema),
  rspamd: z.optional(rspamdSchema),
  /** Default tempfail. */
  unavailable: z._default(
    z.enum(UNAVAILABLE_POLICIES, { error: `expected one of ${UNAVAILABLE_POLICIES.join(', ')}` }),
    'tempfail',
  ),
});

export type ScanSettings = DeepReadonly<z.output<typeof scanSettingsSchema>>;
export type ClamavSettings = NonNullable<ScanSettings['clamav']>;
export type RspamdSettings = NonNullable<ScanSettings['rspamd']>;

export const MALWARE_POLICIES = ['refuse', 'hold'] as const;
export const SPAM_POLICIES = ['refuse', 'hold', 'tag', 'off'] as const;
export type MalwarePolicy = (typeof MALWARE_POLICIES)[number];
export type SpamPolicy = (typeof SPAM_POLICIES)[number];

/**
 * A workspace's keys that say what a verdict does to its mail. Absent: `refuse` when the
 * scanner is configured (a scanner the operator set up is applied), nothing when it is not.
 */
export const scanWorkspaceFields = {
  /** What clamd's `FOUND` does: `refuse` (550 5.7.1 naming the signature) or `hold` (250, kept, nothing uploaded). */
  malware: z.optional(z.enum(MALWARE_POLICIES, { error: `expected one of ${MALWARE_POLICIES.join(', ')}` })),
  /**
   * What rspamd's action does: `refuse` (reject 550 5.7.1; soft reject and greylist 451 4.7.1),
   * `hold` (reject: 250, kept, nothing uploaded; the rest as refuse), `tag` (accepted, the
   * verdict recorded) or `off` (not applied).
   */
  spam: z.optional(z.enum(SPAM_POLICIES, { error: `expected one of ${SPAM_POLICIES.join(', ')}` })),
};

/** A workspace as scanning sees it. */
export interface ScanWorkspace {
  readonly malware?: MalwarePolicy | undefined;
  readonly spam?: SpamPolicy | undefined;
}

/** The policies a transaction applies: those of its workspaces (they share one, see route-table). */
export interface ScanPolicy {
  malware: MalwarePolicy;
  spam: SpamPolicy;
}

/** The policy of one workspace, its absent keys filled from what is configured. */
export function scanPolicyOf(workspace: ScanWorkspace): ScanPolicy {
  return { malware: workspace.malware ?? 'refuse', spam: workspace.spam ?? 'refuse' };
}

/** The problems of a workspace's scan keys under the `scan` section: a policy for a scanner that is not configured. */
export function scanWorkspaceIssues(
  workspace: ScanWorkspace,
  scan: ScanSettings,
): { key: 'malware' | 'spam'; message: string }[] {
  const issues: { key: 'malware' | 'spam'; message: string }[] = [];
  if (workspace.malware !== undefined && scan.clamav === undefined) {
    issues.push({ key: 'malware', message: 'needs scan.clamav to be configured' });
  }
  if (workspace.spam !== undefined && scan.rspamd === undefined) {
    issues.push({ key: 'spam', message: 'needs scan.rspamd to be configured' });
  }
  return issues;
}
