import { startTestGateway } from 'ingest-gateway/testing';
import { afterAll, expect, it } from 'vitest';

const gateway = await startTestGateway();
afterAll(() => gateway.close());

it('uploads an e-mailed invoice to the parsing API', async () => {
  const pdf = Buffer.from('%PDF-1.4\n%%EOF\n');
  await gateway.sendMail({
    subject: 'Invoice 42',
    attachments: [{ filename: 'invoice-42.pdf', content: pdf }],
  });
  const message = await gateway.waitForMessage({ q: 'Invoice 42' });
  expect(message.attachments[0]?.state).toBe('uploaded');
  expect(gateway.uploads()[0]?.file?.fileName).toBe('invoice-42.pdf');
});
