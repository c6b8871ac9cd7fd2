import type { SMTPServerAddress, SMTPServerSession } from 'smtp-server';
import { RefusalError } from '../errors.ts';
import type { IntakeWorkspace } from '../intake/intake-settings-schema.ts';
import type { AdmittingWorkspace } from '../sender/admit-sender.ts';
import type { RateLimiter } from './rate-limit.ts';
import { exceedsRecipientLimit, tlsRequiredRefusal, tooManyRecipients } from './session-limits.ts';
import type { SmtpSettings } from './smtp-settings-schema.ts';

export interface SmtpRoutes {
  /** The workspace an ingest address belongs to, or undefined. */
  lookup(recipient: string): AdmittingWorkspace<IntakeWorkspace> | undefined;
}

/**
 * The workspace each accepted recipient was routed to at RCPT, by the recipient smtp-server
 * keeps in the envelope (it pushes the object its hook saw). DATA reads these, not the route
 * table again: a reload between RCPT and DATA must neither drop an accepted recipient nor mix
 * admission policies in one transaction (DESIGN.md, Ingest rule 7).
 */
export type RoutedRecipients = WeakMap<SMTPServerAddress, AdmittingWorkspace<IntakeWorkspace>>;

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
      const tls = tlsRequiredRefusal(settings.requireTls, session);
      if (tls) return tls;
      return (await rateLimiter?.checkMessage(session.remoteAddress, address.address)) ?? null;
    },

    /** The recipient limit, a known ingest address, and one admission policy per transaction. */
    atRcpt(address, session) {
      if (exceedsRecipientLimit(session.envelope.rcptTo, address.address, settings.maxRecipients)) {
        return tooManyRecipients(settings.maxRecipients);
      }
      const routed = routes.lookup(address.address);
      if (!routed) {
        return new RefusalError('RECIPIENT_UNKNOWN', `<${address.address}>: no such ingest address here`);
      }
      // One reply after DATA speaks for every recipient (DESIGN.md, Ingest rule 7).
      const first = session.envelope.rcptTo[0];
      const firstRouted = first ? (options.routed.get(first) ?? routes.lookup(first.address)) : undefined;
      if (first && firstRouted?.policy !== routed.policy) {
        return new RefusalError(
          'OTHER_ADMISSION_POLICY',
          `<${address.address}>: admits senders by another policy than <${first.address}>; send it in its own transaction`,
        );
      }
      options.routed.set(address, routed);
      return null;
    },
  };
}
