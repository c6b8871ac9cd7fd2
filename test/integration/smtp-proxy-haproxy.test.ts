import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { startHaproxy, type TestHaproxy } from '../../harness/haproxy.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { queuedId, SmtpSession } from '../../harness/smtp-session.ts';

/**
 * haproxy as the load balancer, an independent sender of PROXY v2: it starts each connection it
 * forwards with a v2 header for the client, and checks the gateway with connections of its own
 * that start with a v2 LOCAL header and speak SMTP.
 */
describe('behind haproxy sending PROXY protocol v2', () => {
  let harness: Harness;
  let haproxy: TestHaproxy;
  const sessions: SmtpSession[] = [];

  beforeAll(async () => {
    harness = await startHarness({ smtp: { proxyProtocolFrom: ['127.0.0.1/32'] } });
    haproxy = await startHaproxy({ backendPort: harness.smtpPort });
  });
  afterAll(async () => {
    await Promise.all(sessions.map((session) => session.close()));
    await haproxy?.stop();
    await harness?.close();
  });

  it('records the client haproxy saw, not haproxy', async () => {
    // The client on 127.0.0.2; haproxy reaches the gateway from 127.0.0.1, the listed balancer.
    const session = new SmtpSession(haproxy.port, '127.0.0.1', '127.0.0.2');
    sessions.push(session);
    expect((await session.reply()).code).toBe(220);
    expect((await session.command('EHLO client.test')).code).toBe(250);
    expect((await session.command('MAIL FROM:<ann@acme.example>')).code).toBe(250);
    expect((await session.command('RCPT TO:<documents@ingest.test>')).code).toBe(250);
    const message = await composeMessage({
      attachments: [{ filename: 'h.pdf', content: uniquePdf('haproxy') }],
    });
    const reply = await session.data(message);
    expect((await harness.record(queuedId(reply))).remoteAddress).toBe('127.0.0.2');
  });

  it('passes haproxy’s health checks (LOCAL, then SMTP) and logs nothing of them above info', async () => {
    const from = harness.logs.lines.length;
    const checking = await startHaproxy({ backendPort: harness.smtpPort, healthChecks: 300 });
    try {
      // L7OK: a check connection started with LOCAL was greeted and its HELO answered 250.
      const deadline = Date.now() + 15_000;
      let server = await checking.server();
      while (server.check_status !== 'L7OK' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        server = await checking.server();
      }
      expect(server).toEqual({ status: 'UP', check_status: 'L7OK' });
    } finally {
      await checking.stop();
    }
    const loud = harness.logs.lines
      .slice(from)
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .filter((line) => line.level > 30 || /refused/.test(line.msg));
    expect(loud).toEqual([]);
  });
});
