import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId, type Reply, SmtpSession } from '../../harness/smtp-session.ts';

/** The gateway without Redis: it must answer 451 (the sender keeps the mail) and recover by itself. */
describe('Redis outage', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => harness?.close());

  it('answers 451 4.3.0 when Redis goes away mid-session, and delivers the mail once it is back', async () => {
    const message = await composeMessage({
      attachments: [{ filename: 'outage.pdf', content: uniquePdf('outage') }],
    });
    const session = new SmtpSession(harness.smtpPort);
    await session.reply();
    await session.command('EHLO client.test');
    await session.command('MAIL FROM:<ann@acme.example>');
    expect((await session.command('RCPT TO:<documents@ingest.test>')).code).toBe(250);

    await harness.redis.stop();
    const refused = await session.data(message);
    await session.close();
    expect(refused.text).toMatch(/^451 4\.3\.0 /);
    expect(refused.text).not.toMatch(/ECONNREFUSED|redis|6379/i);
    expect(harness.logs.lines.some((line) => line.includes('internal failure, sender will retry'))).toBe(
      true,
    );

    await harness.redis.start();
    // As a sending server does after a 451: try again until the gateway takes the mail
    // (bounded: the gateway reconnects within seconds).
    let accepted: Reply | null = null;
    for (let attempt = 0; attempt < 100 && accepted?.code !== 250; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      accepted = (await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message })).data;
    }
    expect(accepted?.text).toMatch(/^250 2\.0\.0 queued as /);
    const id = queuedId(accepted);
    expect(await harness.settled(id, 0)).toBe('completed');
    expect(harness.mock.uploads.filter((upload) => upload.file?.fileName === 'outage.pdf')).toHaveLength(1);
  });
});
