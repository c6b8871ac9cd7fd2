import type { SMTPServerAddress, SMTPServerSession } from 'smtp-server';
import { RefusalError } from '../errors.ts';
import type { IntakeWorkspace } from '../intake/intake-settings-schema.ts';
import type { RoutedWorkspace } from '../intake/route-table.ts';
import { tagKey } from '../sender/subaddress.ts';
import { unknownParameter, utf8AddressRefusal } from './command-parameters.ts';
import type { RateLimiter } from './rate-limit.ts';
import { exceedsRecipientLimit, tlsRequiredRefusal, tooManyRecipients } from './session-limits.ts';
import type { SmtpSettings } from './smtp-settings-schema.ts';

export interface SmtpRoutes {
  /** The workspace an ingest address belongs to (with the address's tag), or undefined. */
  lookup(recipient: string): RoutedWorkspace<IntakeWorkspace> | undefined;
  /** Whether the recipient is a postmaster address the gateway must accept (route-table.ts); absent: none. */
  isPostmaster?(recipient: string): boolean;
}

/**
 * The workspace each accepted recipient was routed to at RCPT, by the recipient smtp-server
 * keeps in the envelope (it pushes the object its hook saw). DATA reads these, not the route
 * table again: a reload between RCPT and DATA must neither drop an accepted recipient nor mix
 * admission policies in one transaction (docs/architecture.md, "One verdict per transaction").
 */
export type RoutedRecipients = WeakMap<SMTPServerAddress, RoutedWorkspace<IntakeWorkspace>>;

export interface SessionChecksOptions {
  settings: SmtpSettings;
  routes: SmtpRoutes;
  /** Filled at RCPT for the DATA transaction. */
  routed: RoutedRecipients;
  rateLimiter?: RateLimiter;
  /** True once the intake is stopping: new sessions and transactions get 421 4.3.2. */
  closing: () => boolean;
}

/** What the session hooks decide before DATA: each resolves with the refusal, or null to go on. */
export interface SessionChecks {
  atConnect(session: SMTPServerSession): Promise<RefusalError | null>;
  atMail(address: SMTPServerAddress, session: SMTPServerSession): Promise<RefusalError | null>;
  atRcpt(address: SMTPServerAddress, session: SMTPServerSession): RefusalError | null;
}

const shuttingDown = () => new RefusalError('SHUTTING_DOWN', 'shutting down, try again later');

export function createSessionChecks(options: SessionChecksOptions): SessionChecks {
  const { settings, routes, rateLimiter } = options;
  return {
    async atConnect(session) {
      if (options.closing()) return shuttingDown();
      return (await rateLimiter?.checkConnection(session.remoteAddress)) ?? null;
    },

    /** The TLS requirement, then the message rates (see rate-limit.ts for what counts). */
    async atMail(address, session) {
      if (options.closing()) return shuttingDown();
      const syntax =
        unknownParameter('MAIL', address) ??
        utf8AddressRefusal(address, address.args ? address.args.SMTPUTF8 === true : false);
      if (syntax) return syntax;
      const tls = tlsRequiredRefusal(settings.requireTls, session);
      if (tls) return tls;
      return (await rateLimiter?.checkMessage(session.remoteAddress, address.address)) ?? null;
    },

    /** The recipient limit, a known ingest address, and one admission policy per transaction. */
    atRcpt(address, session) {
      const syntax =
        unknownParameter('RCPT', address) ?? utf8AddressRefusal(address, session.envelope.smtpUtf8 === true);
      if (syntax) return syntax;
      if (exceedsRecipientLimit(session.envelope.rcptTo, address.address, settings.maxRecipients)) {
        return tooManyRecipients(settings.maxRecipients);
      }
      const routed = routes.lookup(address.address);
      const first = session.envelope.rcptTo[0];
      const firstRouted = first ? (options.routed.get(first) ?? routes.lookup(first.address)) : undefined;
      const refusal = routeRefusal(
        address.address,
        routed,
        first ? { address: first.address, routed: firstRouted } : undefined,
        (recipient) => routes.isPostmaster?.(recipient) ?? false,
      );
      if (refusal || !routed) return refusal;
      const earlier = session.envelope.rcptTo.map((rcpt) => ({
        address: rcpt.address,
        routed: options.routed.get(rcpt) ?? routes.lookup(rcpt.address),
      }));
      const tagRefusal = subaddressRefusal(address.address, routed, earlier);
      if (tagRefusal) return tagRefusal;
      options.routed.set(address, routed);
      return null;
    },
  };
}

/**
 * The rule of RCPT for one recipient, given the transaction's first: a known ingest address,
 * or a postmaster address in a transaction of its own, and one admission policy per
 * transaction. Null: the recipient is taken. Also applied by `ingest-gateway replay`.
 */
export function routeRefusal(
  recipient: string,
  routed: RoutedWorkspace<IntakeWorkspace> | undefined,
  first: { address: string; routed: RoutedWorkspace<IntakeWorkspace> | undefined } | undefined,
  isPostmaster: (recipient: string) => boolean,
): RefusalError | null {
  if (!routed && isPostmaster(recipient)) {
    // Kept for the operator, never uploaded: such mail is a transaction of its own
    // (docs/architecture.md, "Mail for the postmaster").
    if (first?.routed) {
      return new RefusalError(
        'OTHER_ADMISSION_POLICY',
        `<${recipient}>: mail for the postmaster goes in a transaction of its own`,
      );
    }
    return null;
  }
  if (!routed) {
    return new RefusalError('RECIPIENT_UNKNOWN', `<${recipient}>: no such ingest address here`);
  }
  // One reply after DATA speaks for every recipient (docs/architecture.md).
  if (first && first.routed?.policy !== routed.policy) {
    return new RefusalError(
      'OTHER_ADMISSION_POLICY',
      `<${recipient}>: admits senders by another policy than <${first.address}>; send it in its own transaction`,
    );
  }
  return null;
}

/**
 * One tag and one document type per workspace and transaction: a workspace's uploads of one
 * message carry the fields of one tag (workspaces[].subaddresses) and of at most one document
 * type's address, and the record one of each per upload. A recipient that reaches a workspace
 * already in the transaction under another tag (or none; tags compared without case) or by
 * another document type's address (or the workspace's own) gets 452 4.5.3, and the sending
 * server delivers it in a transaction of its own, as for another admission policy. Also
 * applied by `ingest-gateway replay`.
 */
export function subaddressRefusal(
  recipient: string,
  routed: RoutedWorkspace<IntakeWorkspace>,
  earlier: Iterable<{ address: string; routed: RoutedWorkspace<IntakeWorkspace> | undefined }>,
): RefusalError | null {
  const tag = tagKey(routed.subaddress ?? '');
  for (const other of earlier) {
    if (other.routed?.config.identifier !== routed.config.identifier) continue;
    if (other.routed.documentType !== routed.documentType) {
      return new RefusalError(
        'OTHER_SUBADDRESS',
        `<${recipient}>: reaches the workspace of <${other.address}> for another document type; send it in its own transaction`,
      );
    }
    if (tagKey(other.routed.subaddress ?? '') === tag) continue;
    return new RefusalError(
      'OTHER_SUBADDRESS',
      `<${recipient}>: reaches the workspace of <${other.address}> under another tag; send it in its own transaction`,
    );
  }
  return null;
}
