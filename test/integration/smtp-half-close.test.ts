import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';

/**
 * A client may pipeline QUIT behind the message's final dot and shut its side of the
 * connection down at once (RFC 2920; Exim does so): it still reads the replies. The gateway
 * must answer the message and the QUIT before it closes, or the sender never learns that
 * the message was taken (and sends it again) or refused (and never bounces it).
 */
async function sendAndHalfClose(port: number, message: Buffer): Promise<string> {
  const socket = connect({ port, host: '127.0.0.1' });
  let received = '';
  socket.setEncoding('utf8');
  let arrived: () => void = () => undefined;
  socket.on('data', (chunk: string) => {
    received += chunk;
    arrived();
  });
  const waitFor = async (pattern: RegExp) => {
    while (!pattern.test(received)) {
      await new Promise<void>((resolve) => {
        arrived = resolve;
      });
    }
  };
  const closed = once(socket, 'close');
  await waitFor(/^220 /m);
  socket.write('EHLO client.test\r\n');
  await waitFor(/^250 /m);
  socket.write('MAIL FROM:<ann@acme.example>\r\nRCPT TO:<documents@ingest.test>\r\nDATA\r\n');
  await waitFor(/^354 /m);
  socket.end(`${message.toString('latin1').replace(/\r?\n/g, '\r\n')}\r\n.\r\nQUIT\r\n`);
  await closed;
  return received;
}

describe('a client that sends QUIT behind the final dot and half-closes', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => harness?.close());

  it('gets the 250 of the message it sent, and the 221', async () => {
    const message = await composeMessage({
      to: 'documents@ingest.test',
      attachments: [{ filename: 'half-close.pdf', content: uniquePdf('half-close') }],
    });
    const replies = await sendAndHalfClose(harness.smtpPort, message);
    expect(replies).toMatch(/^250 2\.0\.0 queued as [0-9a-z]+/m);
    expect(replies).toMatch(/^221 /m);
  });

  it('is answered and closed when it half-closes mid-session without QUIT', async () => {
    const socket = connect({ port: harness.smtpPort, host: '127.0.0.1' });
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    const closed = once(socket, 'close');
    await once(socket, 'data');
    socket.end('EHLO client.test\r\nMAIL FROM:<ann@acme.example>\r\n');
    // Closed by the gateway once both are answered, not left open until smtp.socketTimeout.
    await closed;
    expect(received).toMatch(/^250-/m);
    expect(received).toMatch(/^250 Accepted/m);
  });

  it('gets the 550 of a message it refuses, and the 221', async () => {
    const message = await composeMessage({ to: 'documents@ingest.test', text: 'no attachment here' });
    const replies = await sendAndHalfClose(harness.smtpPort, message);
    expect(replies).toMatch(/^550 5\.6\.0 /m);
    expect(replies).toMatch(/^221 /m);
  });
});
