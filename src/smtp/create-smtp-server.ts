import type { AddressInfo } from 'node:net';
import type {
  SMTPServerAddress,
  SMTPServerDataStream,
  SMTPServerError,
  SMTPServerOptions,
  SMTPServerSession,
} from 'smtp-server';
import { RefusalError } from '../errors.ts';
import type { IntakeWorkspace } from '../intake/intake-settings-schema.ts';
import type { ReceiveMessage } from '../intake/receive-message.ts';
import type { Logger } from '../logger.ts';
import { type GatewayMetrics, type RefusalStage, refusalReason } from '../metrics.ts';
import type { AdmittingWorkspace } from '../sender/admit-sender.ts';
import { classifyConnectionError } from './connection-error.ts';
import { EdgeSmtpServer } from './edge-server.ts';
import { compileNetworkList } from './network-list.ts';
import type { RateLimiter } from './rate-limit.ts';
import {
  disabledCommands,
  exceedsRecipientLimit,
  tlsRequiredRefusal,
  tooManyRecipients,
} from './session-limits.ts';
import { acceptedReply, replyFor, toSmtpError } from './smtp-reply.ts';
import type { SmtpSettings } from './smtp-settings-schema.ts';
import type { StartTlsOptions } from './tls-options.ts';

export interface SmtpRoutes {
  /** The workspace an ingest address belongs to, or undefined. */
  lookup(recipient: string): AdmittingWorkspace<IntakeWorkspace> | undefined;
}

export interface SmtpIntakeOptions {
  settings: SmtpSettings;
  routes: SmtpRoutes;
  receive: ReceiveMessage;
  logger: Logger;
  /** Called with each outcome, for metrics. */
  onOutcome?: (outcome: 'accepted' | 'refused' | 'failed', responseCode: number) => void;
  /** Counts refusals by stage and reason; absent: nothing is counted. */
  metrics?: GatewayMetrics;
  /** Connection and message rates (smtp.rateLimit); absent: none are counted. */
  rateLimiter?: RateLimiter;
  /** The STARTTLS certificate (tls-options.ts); absent or null: STARTTLS is not offered. */
  tls?: StartTlsOptions | null;
}

export interface SmtpIntake {
  /** Listen; resolves with the bound port (config port 0 picks a free one). */
  start(): Promise<{ port: number }>;
  readonly listening: boolean;
  /**
   * Stop taking mail: new sessions and new transactions get 421, transactions in DATA run to
   * their reply (up to smtp.closeTimeout), then every connection is closed. Idempotent.
   */
  close(): Promise<void>;
}

/** Where a refusal happened and whom it refused: every refusal's log line says both. */
interface RefusedAt {
  stage: 'connect' | 'MAIL' | 'RCPT';
  sessionId: string;
  remoteAddress: string | null;
  /** The envelope sender; null before MAIL and for the null reverse-path. */
  mailFrom: string | null;
  recipient?: string;
}

const REFUSED: Record<RefusedAt['stage'], string> = {
  connect: 'connection refused',
  MAIL: 'sender refused',
  RCPT: 'recipient refused',
};

/** The refusals metric's stage label of each hook. */
const METRIC_STAGE: Record<RefusedAt['stage'], RefusalStage> = {
  connect: 'connect',
  MAIL: 'mail',
  RCPT: 'rcpt',
};

/** The client and the envelope sender of a session, as every refusal's log line carries them. */
function whoSends(session: SMTPServerSession): Omit<RefusedAt, 'stage'> {
  const mailFrom = session.envelope.mailFrom;
  return {
    sessionId: session.id,
    remoteAddress: session.remoteAddress || null,
    mailFrom: mailFrom ? mailFrom.address || null : null,
  };
}

export function createSmtpIntake(options: SmtpIntakeOptions): SmtpIntake {
  const { settings, routes, receive } = options;
  const log = options.logger.child({ component: 'smtp' });
  let closing: Promise<void> | undefined;
  let listening = false;
  const inData = new Set<Promise<unknown>>();
  const shuttingDown = () => new RefusalError('SHUTTING_DOWN', 'shutting down, try again later');

  const edge = {
    sessionTimeout: settings.sessionTimeout,
    trustedProxies: compileNetworkList(settings.proxyProtocolFrom),
    onRefusal: (stage: RefusalStage, refusal: RefusalError) => countRefusal(stage, refusal),
  };
  const serverOptions: SMTPServerOptions = {
    name: settings.hostname,
    banner: 'ingest-gateway',
    size: settings.maxMessageSize,
    authOptional: true,
    disabledCommands: disabledCommands(Boolean(options.tls)),
    ...options.tls,
    // Past it smtp-server answers `421 <hostname> Too many connected clients` and closes.
    maxClients: settings.maxClients,
    // Replies carry their enhanced status codes in the text (see smtp-reply.ts).
    hideENHANCEDSTATUSCODES: true,
    hideDSN: true,
    socketTimeout: settings.socketTimeout,
    closeTimeout: settings.closeTimeout,
    logger: false,
    onConnect(session, callback) {
      answer(admitConnection(session), callback, { stage: 'connect', ...whoSends(session) });
    },
    onMailFrom(address, session, callback) {
      const who = { ...whoSends(session), mailFrom: address.address };
      answer(admitSender(address, session), callback, { stage: 'MAIL', ...who });
    },
    onRcptTo(address, session, callback) {
      const who = { stage: 'RCPT' as const, ...whoSends(session), recipient: address.address };
      answer(Promise.resolve(admitRecipient(address, session)), callback, who);
    },
    onData(stream, session, callback) {
      const task = handleData(stream, session).then(
        (message) => callback(null, message),
        (err: Error) => callback(err),
      );
      inData.add(task);
      void task.finally(() => inData.delete(task));
    },
  };
  const server = new EdgeSmtpServer(serverOptions, edge);
  server.on('error', (err) => {
    const seen = classifyConnectionError(err);
    switch (seen.kind) {
      case 'client-gone':
        log.info({ remoteAddress: seen.remoteAddress, code: seen.code }, 'client disconnected');
        return;
      case 'tls-failed': {
        const { remoteAddress, code, reason } = seen;
        log.info({ remoteAddress, code, reason }, 'TLS handshake failed');
        return;
      }
      case 'internal':
        log.error({ err }, 'smtp server error');
    }
  });

  async function admitConnection(session: SMTPServerSession): Promise<RefusalError | null> {
    if (closing) return shuttingDown();
    return (await options.rateLimiter?.checkConnection(session.remoteAddress)) ?? null;
  }

  /** At MAIL: the TLS requirement, then the message rates (see rate-limit.ts for what counts). */
  async function admitSender(address: SMTPServerAddress, session: SMTPServerSession) {
    if (closing) return shuttingDown();
    const tls = tlsRequiredRefusal(settings.requireTls, session);
    if (tls) return tls;
    return (await options.rateLimiter?.checkMessage(session.remoteAddress, address.address)) ?? null;
  }

  function admitRecipient(address: SMTPServerAddress, session: SMTPServerSession): RefusalError | null {
    if (exceedsRecipientLimit(session.envelope.rcptTo, address.address, settings.maxRecipients)) {
      return tooManyRecipients(settings.maxRecipients);
    }
    const routed = routes.lookup(address.address);
    if (!routed)
      return new RefusalError('RECIPIENT_UNKNOWN', `<${address.address}>: no such ingest address here`);
    // One reply after DATA speaks for every recipient (DESIGN.md, Ingest rule 7).
    const first = session.envelope.rcptTo[0];
    if (first && routes.lookup(first.address)?.policy !== routed.policy) {
      return new RefusalError(
        'OTHER_ADMISSION_POLICY',
        `<${address.address}>: admits senders by another policy than <${first.address}>; send it in its own transaction`,
      );
    }
    return null;
  }

  /**
   * An smtp-server hook's callback, from a decision: the refusal's reply, or go on. A refusal
   * is logged with who was refused, since the client may never say what it did about it.
   */
  function answer(
    decision: Promise<RefusalError | null>,
    callback: (err?: SMTPServerError | null) => void,
    who: RefusedAt,
  ): void {
    decision.then(
      (refusal) => {
        if (!refusal) return callback(null);
        const reply = replyFor(refusal);
        log.info({ ...who, reply: `${reply.responseCode} ${reply.message}` }, REFUSED[who.stage]);
        countRefusal(METRIC_STAGE[who.stage], refusal);
        callback(toSmtpError(reply));
      },
      (err: unknown) => {
        log.error({ err, ...who }, 'session check failed');
        countRefusal(METRIC_STAGE[who.stage], err);
        callback(toSmtpError(replyFor(err)));
      },
    );
  }

  function countRefusal(stage: RefusalStage, err: unknown): void {
    options.metrics?.smtpRefusals.inc({ stage, reason: refusalReason(err) });
  }

  async function handleData(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<string> {
    const sessionLog = log.child({
      transaction: session.transaction,
      ...whoSends(session),
    });
    const workspaces: AdmittingWorkspace<IntakeWorkspace>[] = [];
    const seen = new Set<string>();
    for (const rcpt of session.envelope.rcptTo) {
      const routed = routes.lookup(rcpt.address);
      if (routed && !seen.has(routed.config.identifier)) {
        seen.add(routed.config.identifier);
        workspaces.push(routed);
      }
    }
    const mailFrom = session.envelope.mailFrom;
    try {
      const result = await receive(
        stream,
        {
          remoteAddress: session.remoteAddress || null,
          // false (typed string) until the client has sent HELO/EHLO.
          helo: session.hostNameAppearsAs || null,
          mailFrom: mailFrom ? mailFrom.address : null,
          rcptTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          workspaces,
        },
        sessionLog,
      );
      options.onOutcome?.('accepted', 250);
      void options.rateLimiter?.countAccepted(session.remoteAddress, mailFrom ? mailFrom.address : '');
      return acceptedReply(result.messageId);
    } catch (err) {
      const reply = replyFor(err);
      if (reply.internal)
        sessionLog.error({ err }, 'message not accepted: internal failure, sender will retry');
      else sessionLog.info({ reply: `${reply.responseCode} ${reply.message}` }, 'message refused');
      options.onOutcome?.(reply.internal ? 'failed' : 'refused', reply.responseCode);
      countRefusal('data', err);
      throw toSmtpError(reply);
    }
  }

  return {
    get listening() {
      return listening;
    },
    async start() {
      await new Promise<void>((resolve, reject) => {
        server.server.once('error', reject);
        server.listen(settings.port, settings.host, () => {
          server.server.off('error', reject);
          resolve();
        });
      });
      listening = true;
      const port = (server.server.address() as AddressInfo).port;
      log.info({ host: settings.host, port }, 'smtp listening');
      return { port };
    },
    close() {
      closing ??= (async () => {
        if (!listening) return;
        const deadline = new Promise<void>((resolve) => setTimeout(resolve, settings.closeTimeout).unref());
        await Promise.race([Promise.allSettled([...inData]), deadline]);
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const connection of server.connections) {
          connection.send(421, '4.3.2 shutting down, try again later');
          connection.close();
        }
        await closed;
        listening = false;
        log.info('smtp closed');
      })();
      return closing;
    },
  };
}
