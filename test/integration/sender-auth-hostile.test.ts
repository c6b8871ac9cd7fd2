import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFakeDns } from '../support/dns-fake.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../support/messages.ts';
import { deliver } from '../support/smtp-session.ts';

/**
 * Sender authentication reads the DATA stream beside the MIME walk; a hostile message must not
 * cost more because a workspace authenticates senders. A coarse bound of seconds and of
 * hundreds of MiB proves nothing stalls or piles up (before the fix: 2.6 s and +1 GiB).
 */
describe('sender authentication under hostile input', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({
      resolver: createFakeDns({}).resolver,
      workspaces: `
  - identifier: ws-auth
    ingestEmail: documents@ingest.test
    senderAuthentication: aligned
`,
    });
  });
  afterAll(async () => harness?.close());

  it('refuses a 24 MiB header block at the walk limit, and authentication stops there too', async () => {
    const header = Buffer.alloc(24 * 1024 * 1024, 'X-A: b\r\n');
    const message = Buffer.concat([
      Buffer.from('From: ann@acme.example\r\n'),
      header,
      Buffer.from('\r\nbody\r\n'),
    ]);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    const rssBefore = process.memoryUsage().rss;
    delay.enable();
    const { data } = await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message });
    delay.disable();
    const grown = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;
    expect(data?.text).toMatch(/^550 5\.6\.0 a MIME header block is larger/);
    expect(delay.max / 1e6).toBeLessThan(2000);
    // This process is also the client, holding several copies of the 24 MiB message while it
    // dot-stuffs and sends it (~400 MiB here); unfixed, authentication alone added ~1 GiB.
    expect(grown).toBeLessThan(700);
    expect(harness.mock.uploads).toHaveLength(0);
  });

  it('refuses a message with more DKIM signatures than it will check, saying so', async () => {
    const lines = Array.from(
      { length: 20 },
      (_, i) => `DKIM-Signature: v=1; a=rsa-sha256; d=d${i}.example; s=s; bh=x; b=y`,
    );
    const body = await composeMessage({
      from: 'ann@acme.example',
      attachments: [{ filename: 'signed.pdf', content: uniquePdf('signed') }],
    });
    const message = Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n`), body]);
    const { data } = await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message });
    expect(data?.text).toBe(
      '550 5.7.1 sender not authenticated: more than 16 DKIM or ARC signatures, none was checked',
    );
    expect(harness.mock.uploads).toHaveLength(0);
  });
});
