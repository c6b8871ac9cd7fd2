import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { GatewayConfig } from '../config/schema.ts';
import { RefusalError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { ReceiveMessage, RoutedWorkspace } from './receive-message.ts';
import { acceptedReply, replyFor, toSmtpError } from './smtp-reply.ts';

export interface SmtpRoutes {
  /** The workspace an ingest address belongs to, or undefined. */
  lookup(recipient: string): RoutedWorkspace | undefined;
}

export interface SmtpIntakeOptions {
  config: GatewayConfig;
  routes: SmtpRoutes;
  receive: ReceiveMessage;
  logger: Logger;
  /** Called with each outcome, for metrics. */
  onOutcome?: (outcome: 'accepted' | 'refused' | 'failed', responseCode: number) => void;
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

export function createSmtpIntake(options: SmtpIntakeOptions): SmtpIntake {
  const { config, routes, receive } = options;
  const log = options.logger.child({ component: 'smtp' });
  let closing: Promise<void> | undefined;
  let listening = false;
  const inData = new Set<Promise<unknown>>();
  const shuttingDown = () =>
    toSmtpError(replyFor(new RefusalError('SHUTTING_DOWN', 'shutting down, try again later')));

  const server = new SMTPServer({
    name: config.smtp.hostname,
    banner: 'ingest-gateway',
    size: config.smtp.maxMessageSize,
    authOptional: true,
    disabledCommands: ['AUTH'],
    // Replies carry their enhanced status codes in the text (see smtp-reply.ts).
    hideENHANCEDSTATUSCODES: true,
    hideDSN: true,
    socketTimeout: config.smtp.socketTimeout,
    closeTimeout: config.smtp.closeTimeout,
    logger: false,
    onConnect(_session, callback) {
      callback(closing ? shuttingDown() : null);
    },
    onMailFrom(_address, _session, callback) {
      callback(closing ? shuttingDown() : null);
    },
    onRcptTo(address, _session, callback) {
      if (routes.lookup(address.address)) return callback();
      const reply = replyFor(
        new RefusalError('RECIPIENT_UNKNOWN', `<${address.address}>: no such ingest address here`),
      );
      callback(toSmtpError(reply));
    },
    onData(stream, session, callback) {
      const task = handleData(stream, session).then(
        (message) => callback(null, message),
        (err: Error) => callback(err),
      );
      inData.add(task);
      void task.finally(() => inData.delete(task));
    },
  });
  server.on('error', (err) => log.error({ err }, 'smtp server error'));

  async function handleData(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<string> {
    const sessionLog = log.child({ sessionId: session.id, transaction: session.transaction });
    const workspaces: RoutedWorkspace[] = [];
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
          mailFrom: mailFrom ? mailFrom.address : null,
          rcptTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          workspaces,
        },
        sessionLog,
      );
      options.onOutcome?.('accepted', 250);
      return acceptedReply(result.messageId);
    } catch (err) {
      const reply = replyFor(err);
      if (reply.internal)
        sessionLog.error({ err }, 'message not accepted: internal failure, sender will retry');
      else sessionLog.info({ reply: `${reply.responseCode} ${reply.message}` }, 'message refused');
      options.onOutcome?.(reply.internal ? 'failed' : 'refused', reply.responseCode);
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
        server.listen(config.smtp.port, config.smtp.host, () => {
          server.server.off('error', reject);
          resolve();
        });
      });
      listening = true;
      const port = (server.server.address() as AddressInfo).port;
      log.info({ host: config.smtp.host, port }, 'smtp listening');
      return { port };
    },
    close() {
      closing ??= (async () => {
        if (!listening) return;
        const deadline = new Promise<void>((resolve) =>
          setTimeout(resolve, config.smtp.closeTimeout).unref(),
        );
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
