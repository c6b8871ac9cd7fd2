import { createTransport } from 'nodemailer';

/** One notice as it goes to the relay. */
export interface OutgoingNotice {
  /** MAIL FROM; "" is the null sender `<>`. */
  envelopeFrom: string;
  to: string;
  from: string;
  subject: string;
  text: string;
  /** The received message's Message-ID (without <>), to thread the notice under it; null when it had none. */
  inReplyTo: string | null;
  /** The notice's own Message-ID (without <>): the same on every attempt, so a copy sent twice reads as one. */
  messageId: string;
}

export interface RelayTransport {
  /** Resolves once the relay took the notice (250 to DATA); rejects with why it did not. */
  send(notice: OutgoingNotice): Promise<void>;
  close(): void;
}

/**
 * The relay of notices.smtp, through nodemailer: smtps: speaks TLS from the first byte, smtp:
 * upgrades with STARTTLS when offered; a user and password in the URL log in. The URL is read
 * here and nowhere logged.
 */
export function createRelayTransport(
  relayUrl: string,
  timeoutMs: number,
  /** The name the gateway greets the relay with (EHLO): smtp.hostname. */
  clientName: string,
): RelayTransport {
  const url = new URL(relayUrl);
  const secure = url.protocol === 'smtps:';
  const transport = createTransport({
    host: url.hostname.replace(/^\[|\]$/g, ''),
    ...(url.port === '' ? {} : { port: Number(url.port) }),
    secure,
    name: clientName,
    ...(url.username === ''
      ? {}
      : { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } }),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    logger: false,
  });
  return {
    async send(notice) {
      await transport.sendMail({
        // RFC 3834 section 3.3: no answer to the answer. The null sender (the default) sends
        // any bounce of the notice nowhere.
        envelope: { from: notice.envelopeFrom === '' ? false : notice.envelopeFrom, to: [notice.to] },
        from: notice.from,
        to: notice.to,
        subject: notice.subject,
        text: notice.text,
        messageId: `<${notice.messageId}>`,
        headers: {
          // RFC 3834 section 5: an automatic reply; other responders must not answer it.
          'Auto-Submitted': 'auto-replied',
          // Exchange and Outlook send no out-of-office or other automatic reply to it.
          'X-Auto-Response-Suppress': 'All',
        },
        ...(notice.inReplyTo === null
          ? {}
          : { inReplyTo: `<${notice.inReplyTo}>`, references: `<${notice.inReplyTo}>` }),
      });
    },
    close() {
      transport.close();
    },
  };
}

/** The relay's host and port, for a log line: never its user or password. */
export function relayEndpoint(relayUrl: string): string {
  const url = URL.parse(relayUrl);
  if (url === null) return 'invalid URL';
  return `${url.protocol}//${url.host}`;
}
