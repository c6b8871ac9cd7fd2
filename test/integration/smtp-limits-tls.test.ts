import { once } from 'node:events';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';
import { createTransport } from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startTlsHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { queuedId, SmtpSession } from '../../harness/smtp-session.ts';

/** STARTTLS with a configured certificate, TLS 1.2 at least, and smtp.requireTls. */
describe('SMTP STARTTLS', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startTlsHarness();
  });
  afterAll(async () => {
    await harness?.close();
  });

  /** A session up to the 220 that starts the handshake. */
  async function startTls(): Promise<SmtpSession> {
    const client = new SmtpSession(harness.smtpPort);
    await client.reply();
    await client.command('EHLO client.test');
    expect((await client.command('STARTTLS')).text).toBe('220 Ready to start TLS');
    return client;
  }

  it('offers STARTTLS and refuses MAIL before it with 530 5.7.0', async () => {
    const client = new SmtpSession(harness.smtpPort);
    try {
      await client.reply();
      const ehlo = await client.command('EHLO client.test');
      expect(ehlo.text).toMatch(/^250-STARTTLS$/m);
      expect((await client.command('MAIL FROM:<ann@acme.example>')).text).toBe(
        '530 5.7.0 must issue a STARTTLS command first',
      );
      // MAIL was refused, so RCPT has no transaction to join.
      expect((await client.command('RCPT TO:<documents@ingest.test>')).text).toBe(
        '503 Error: need MAIL command',
      );
    } finally {
      await client.close();
    }
  });

  it('takes mail over TLS with the configured certificate', async () => {
    const transport = createTransport({
      host: '127.0.0.1',
      port: harness.smtpPort,
      secure: false,
      requireTLS: true,
      tls: { rejectUnauthorized: false, servername: 'gateway.test' },
    });
    try {
      const message = await composeMessage({
        attachments: [{ filename: 't.pdf', content: uniquePdf('tls') }],
      });
      const info = await transport.sendMail({
        envelope: { from: 'ann@acme.example', to: ['documents@ingest.test'] },
        raw: message,
      });
      expect(info.response).toMatch(/^250 2\.0\.0 queued as /);
      expect(await harness.settled(queuedId({ code: 250, text: info.response }), 0)).toBe('completed');
    } finally {
      transport.close();
    }
  });

  it('presents the configured certificate and negotiates TLS 1.2 or later', async () => {
    const client = await startTls();
    const socket = tlsConnect({
      socket: client.socket,
      rejectUnauthorized: false,
      servername: 'gateway.test',
    });
    try {
      await once(socket, 'secureConnect');
      expect(socket.getPeerX509Certificate()?.subject).toBe('CN=gateway.test');
      expect(['TLSv1.2', 'TLSv1.3']).toContain(socket.getProtocol());
    } finally {
      socket.destroy();
      await client.close();
    }
  });

  it('refuses a client that offers TLS 1.1 at most', async () => {
    const client = await startTls();
    const socket: TLSSocket = tlsConnect({
      socket: client.socket,
      rejectUnauthorized: false,
      minVersion: 'TLSv1',
      maxVersion: 'TLSv1.1',
      // Security level 0 lets this client offer TLS 1.1 at all: the refusal must be the server's.
      ciphers: 'DEFAULT@SECLEVEL=0',
    });
    try {
      const [err] = (await once(socket, 'error').catch((error: unknown) => [error])) as [
        Error & { code?: string },
      ];
      expect(err.code).toBe('ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
    } finally {
      socket.destroy();
      await client.close();
    }
  });
});
