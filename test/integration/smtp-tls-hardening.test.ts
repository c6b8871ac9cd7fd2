import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startTlsHarness } from '../../harness/gateway-harness.ts';

/**
 * The STARTTLS session as testssl.sh and sslscan probe it, through openssl s_client: a
 * client-initiated TLS 1.2 renegotiation ends the connection, and TLS 1.2 offers only
 * forward-secret suites, the server's order first.
 */
describe('SMTP TLS hardening', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startTlsHarness();
  });
  afterAll(async () => harness?.close());

  /** openssl s_client through STARTTLS; its output collected, its exit awaited by `exited`. */
  function sClient(...args: string[]) {
    const child: ChildProcessWithoutNullStreams = spawn('openssl', [
      's_client',
      '-connect',
      `127.0.0.1:${harness.smtpPort}`,
      '-starttls',
      'smtp',
      '-servername',
      'gateway.test',
      ...args,
    ]);
    let output = '';
    const seen: Array<{ text: RegExp; resolve: () => void }> = [];
    const take = (chunk: Buffer) => {
      output += chunk.toString('latin1');
      for (const waiter of seen.filter((w) => w.text.test(output))) {
        seen.splice(seen.indexOf(waiter), 1);
        waiter.resolve();
      }
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const exited = once(child, 'close').then(() => 'exited' as const);
    return {
      child,
      exited,
      get output() {
        return output;
      },
      /** Resolves once the output matches `text`. */
      until(text: RegExp): Promise<void> {
        if (text.test(output)) return Promise.resolve();
        return new Promise((resolve) => seen.push({ text, resolve }));
      },
    };
  }

  it('ends the connection when the client renegotiates TLS 1.2', async () => {
    const client = sClient('-tls1_2');
    try {
      // s_client prints the session once the handshake is done, then reads commands from stdin.
      await client.until(/Verify return code/);
      // The handshake is done and the session answers (smtp-server's NOOP reply is `250 OK`;
      // s_client also prints the end of the EHLO reply it read before STARTTLS).
      client.child.stdin.write('NOOP\r\n');
      await client.until(/\n250 OK/);
      // A line "R" asks s_client to renegotiate. Once it has verified the certificate again
      // (the second handshake done), a NOOP would be answered, had the server gone on.
      client.child.stdin.write('R\n');
      const renegotiated = client.until(/RENEGOTIATING[\s\S]*verify (?:error|return)/).then(() => {
        client.child.stdin.write('NOOP\r\n');
        return client.until(/\n250 OK[\s\S]*\n250 OK/);
      });
      const outcome = await Promise.race([client.exited, renegotiated.then(() => 'answered' as const)]);
      expect(client.output).toContain('RENEGOTIATING');
      expect(outcome).toBe('exited');
    } finally {
      client.child.kill();
    }
  });

  it('negotiates an ECDHE suite by default', async () => {
    const client = sClient('-tls1_2');
    try {
      await client.until(/Cipher is /);
      expect(client.output).toMatch(/Cipher is ECDHE-ECDSA-AES128-GCM-SHA256/);
    } finally {
      client.child.kill();
    }
  });

  it('refuses TLS 1.2 suites without forward secrecy (RSA key exchange, CBC)', async () => {
    // The certificate is ECDSA, so RSA suites could not be used anyway: ask for what an ECDSA
    // certificate would allow without ephemeral keys or AEAD.
    const client = sClient('-tls1_2', '-cipher', 'ECDHE-ECDSA-AES128-SHA:AES128-GCM-SHA256:AES256-SHA');
    try {
      await client.exited;
      expect(client.output).toMatch(/handshake failure|no shared cipher|alert/i);
      expect(client.output).not.toMatch(/Cipher is (?!\(NONE\))/);
    } finally {
      client.child.kill();
    }
  });
});
