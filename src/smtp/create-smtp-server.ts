import type { AddressInfo } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { SMTPServerOptions } from 'smtp-server';
import type { RefusalError } from '../errors.ts';
import type { ReceiveMessage } from '../intake/receive-message.ts';
import { listenOnHost } from '../listen-host.ts';
import type { Logger } from '../logger.ts';
import type { GatewayMetrics, RefusalStage } from '../metrics.ts';
import type { RefusalLog } from '../record/refusal-log.ts';
import { classifyConnectionError } from './connection-error.ts';
import { createDataTransaction } from './data-transaction.ts';
import { EdgeSmtpServer } from './edge-server.ts';
import { compileNetworkList } from './network-list.ts';
import type { RateLimiter } from './rate-limit.ts';
import { createRefusalAnswers, whoSends } from './refusal-answer.ts';
import { createRefusedRecipients } from './refused-recipients.ts';
import { createSessionChecks, type RoutedRecipients, type SmtpRoutes } from './session-checks.ts';
import { disabledCommands } from './session-limits.ts';
import type { SmtpSettings } from './smtp-settings-schema.ts';
import type { StartTlsOptions } from './tls-options.ts';

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
  /** Where each refusal is remembered (GET /v1/refusals); absent: nowhere. */
  refusalLog?: RefusalLog;
}

export interface SmtpIntake {
  /** Listen; resolves with the bound port (config port 0 picks a free one). */
  start(): Promise<{ port: number }>;
  readonly listening: boolean;
  /**
   * Puts a new STARTTLS key and certificate in force for the handshakes that start from now
   * on (a reload); sessions already encrypted keep theirs. Only where STARTTLS is offered.
   */
  replaceTls(tls: StartTlsOptions): void;
  /**
   * Stop taking mail: new sessions and new transactions get 421, transactions in DATA run to
   * their reply (up to smtp.closeTimeout), then every connection is closed. Idempotent.
   */
  close(): Promise<void>;
}

export function createSmtpIntake(options: SmtpIntakeOptions): SmtpIntake {
  const { settings } = options;
  const log = options.logger.child({ component: 'smtp' });
  let closing: Promise<void> | undefined;
  let listening = false;
  const inData = new Set<Promise<unknown>>();
  const refusals = createRefusalAnswers(log, options.metrics, options.refusalLog);
  const routed: RoutedRecipients = new WeakMap();
  const checks = createSessionChecks({
    settings,
    routes: options.routes,
    routed,
    closing: () => closing !== undefined,
    ...(options.rateLimiter ? { rateLimiter: options.rateLimiter } : {}),
  });
  const refusedRecipients = createRefusedRecipients({
    settings,
    logger: log,
    ...(options.rateLimiter ? { rateLimiter: options.rateLimiter } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  const onData = createDataTransaction({
    routes: options.routes,
    routed,
    receive: options.receive,
    log,
    refusals,
    ...(options.refusalLog ? { refusalLog: options.refusalLog } : {}),
    ...(options.rateLimiter ? { rateLimiter: options.rateLimiter } : {}),
    ...(options.onOutcome ? { onOutcome: options.onOutcome } : {}),
  });

  const edge = {
    sessionTimeout: settings.sessionTimeout,
    trustedProxies: compileNetworkList(settings.proxyProtocolFrom),
    onProxyRefused: (balancer: string, reason: string) =>
      log.warn({ remoteAddress: balancer, reason }, 'PROXY header refused'),
    onRefusal: (stage: RefusalStage, refusal: RefusalError) => refusals.count(stage, refusal),
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
    // An option of patches/smtp-server+3.21.6.patch: the wait for early talkers.
    greetingDelay: settings.greetingDelay,
    logger: false,
    allowHalfOpen: true,
    // Each hook is a one-line adapter: the decision is session-checks.ts's, the reply refusal-answer.ts's.
    onConnect(session, callback) {
      refusals.answer(checks.atConnect(session), callback, { stage: 'connect', ...whoSends(session) });
    },
    onSecure(socket, _session, callback) {
      // A client-initiated TLS 1.2 renegotiation (Node allows three in ten minutes) costs the
      // server a handshake each, for nothing the session needs: it now ends the connection.
      if (socket instanceof TLSSocket) socket.disableRenegotiation();
      callback();
    },
    onMailFrom(address, session, callback) {
      const who = { ...whoSends(session), mailFrom: address.address };
      refusals.answer(checks.atMail(address, session), callback, { stage: 'MAIL', ...who });
    },
    onRcptTo(address, session, callback) {
      const who = { stage: 'RCPT' as const, ...whoSends(session), recipient: address.address };
      const decision = refusedRecipients.atRcpt(session, address.address, () =>
        checks.atRcpt(address, session),
      );
      refusals.answer(decision, callback, who);
    },
    onClose(session) {
      refusedRecipients.closed(session);
    },
    onData(stream, session, callback) {
      const task = onData(stream, session).then(
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

  return {
    get listening() {
      return listening;
    },
    replaceTls(tls) {
      server.updateSecureContext({ key: tls.key, cert: tls.cert });
    },
    async start() {
      const listen = (host: string) =>
        new Promise<void>((resolve, reject) => {
          server.server.once('error', reject);
          server.listen(settings.port, host, () => {
            server.server.off('error', reject);
            resolve();
          });
        });
      const { host } = await listenOnHost(settings.host, listen, log);
      listening = true;
      const port = (server.server.address() as AddressInfo).port;
      log.info({ host, port }, 'smtp listening');
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
