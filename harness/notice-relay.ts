import { SMTPServer } from 'smtp-server';

/** One message the relay took: its envelope as the client gave it, and its bytes. */
export interface RelayedMessage {
  mailFrom: string;
  rcptTo: string[];
  raw: string;
}

/**
 * A real SMTP server standing in for the operator's outbound relay (notices.smtp): it keeps
 * every message with its envelope, and can go down (its port closed, connections refused)
 * and come back on the same port.
 */
export interface NoticeRelay {
  readonly port: number;
  readonly url: string;
  readonly messages: RelayedMessage[];
  /** The users that logged in, when the relay asks for a login. */
  readonly logins: string[];
  /** Resolves with the first message, past or future, the predicate accepts. */
  waitFor(predicate: (message: RelayedMessage) => boolean): Promise<RelayedMessage>;
  /** Closes the port: the gateway's connections are refused until start(). */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** With `login`, the relay offers AUTH (over plain SMTP, as a test may) and takes only that user and password. */
export async function startNoticeRelay(login?: { user: string; password: string }): Promise<NoticeRelay> {
  const messages: RelayedMessage[] = [];
  const logins: string[] = [];
  const waiters: { predicate: (message: RelayedMessage) => boolean; resolve: (m: RelayedMessage) => void }[] =
    [];
  let server: SMTPServer | null = null;
  let port = 0;

  function open(): SMTPServer {
    return new SMTPServer({
      authOptional: login === undefined,
      allowInsecureAuth: true,
      disabledCommands: login === undefined ? ['STARTTLS', 'AUTH'] : ['STARTTLS'],
      logger: false,
      onAuth(auth, _session, callback) {
        if (login === undefined || auth.username !== login.user || auth.password !== login.password) {
          callback(new Error('Invalid username or password'));
          return;
        }
        logins.push(auth.username);
        callback(null, { user: auth.username });
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const from = session.envelope.mailFrom;
          const message: RelayedMessage = {
            mailFrom: from === false ? '' : from.address,
            rcptTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            raw: Buffer.concat(chunks).toString(),
          };
          messages.push(message);
          for (const waiter of [...waiters]) {
            if (!waiter.predicate(message)) continue;
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter.resolve(message);
          }
          callback();
        });
      },
    });
  }

  async function start(): Promise<void> {
    const next = open();
    await new Promise<void>((resolve, reject) => {
      next.server.once('error', reject);
      next.listen(port, '127.0.0.1', () => resolve());
    });
    const address = next.server.address();
    if (typeof address !== 'object' || address === null) throw new Error('relay has no port');
    port = address.port;
    server = next;
  }

  async function stop(): Promise<void> {
    const running = server;
    server = null;
    if (running) await new Promise<void>((resolve) => running.close(() => resolve()));
  }

  await start();
  return {
    get port() {
      return port;
    },
    get url() {
      return `smtp://127.0.0.1:${port}`;
    },
    messages,
    logins,
    waitFor(predicate) {
      const found = messages.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
    stop,
    start,
    close: stop,
  };
}
