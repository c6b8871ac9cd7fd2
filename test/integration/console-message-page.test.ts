import { once } from 'node:events';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../harness/browser.ts';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, sampleFile } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';

/**
 * The message page as a developer testing mail uses it (what Mailpit shows): the HTML body in
 * a sandboxed frame that runs no script and loads nothing remote, the text body, every
 * header, the raw source, and previews of a stored image and PDF. In Debian's chromium;
 * screenshots go to CONSOLE_SCREENSHOTS, else a temporary folder.
 */
describe('web console: the message page', () => {
  let harness: Harness;
  let browser: Browser;
  let page: Page;
  let shots: string;
  /** A server standing for a remote site: a tracking pixel and a remote style sheet point here. */
  let remote: Server;
  const remoteRequests: string[] = [];
  let id = '';

  beforeAll(async () => {
    remote = createServer((req, res) => {
      remoteRequests.push(req.url ?? '');
      res.end();
    });
    remote.listen(0, '127.0.0.1');
    await once(remote, 'listening');
    const remoteUrl = `http://127.0.0.1:${(remote.address() as AddressInfo).port}`;
    // A held message keeps its documents' bytes: the previews have something to show.
    harness = await startHarness({
      workspaces: [
        {
          identifier: 'ws-hold',
          ingestEmail: 'hold@ingest.test',
          whitelistIngestAddresses: ['*@partner.example'],
          unlistedSenders: 'hold',
        },
      ],
    });
    const message = await composeMessage({
      from: 'Dev <dev@app.example>',
      to: 'hold@ingest.test',
      subject: 'Welcome, Zoë',
      headers: { 'X-Campaign': 'signup-42' },
      text: 'Hello Zoë,\nyour account is ready.',
      html:
        `<html><head><link rel="stylesheet" href="${remoteUrl}/style.css"></head><body>` +
        `<h1 id="greeting">Hello Zoë</h1><p>Your account is ready.</p>` +
        `<img src="${remoteUrl}/pixel.png" alt="">` +
        `<script>document.getElementById('greeting').textContent = 'script ran'</script></body></html>`,
      attachments: [
        { filename: 'photo.png', content: sampleFile('image.png'), contentType: 'image/png' },
        { filename: 'invoice.pdf', content: sampleFile('sample.pdf'), contentType: 'application/pdf' },
      ],
    });
    const { data } = await deliver(harness.smtpPort, {
      from: 'dev@app.example',
      to: ['hold@ingest.test'],
      message,
    });
    id = queuedId(data);
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    shots = process.env.CONSOLE_SCREENSHOTS ?? (await mkdtemp(join(tmpdir(), 'ingest-gateway-message-')));
    await mkdir(shots, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await harness?.close();
    remote?.close();
  });

  it('shows the HTML body in a sandbox: no script runs, nothing remote is loaded', async () => {
    await page.goto(`${harness.httpUrl}/messages/${id}`);
    const frame = page.locator('iframe.mail-html');
    expect(await frame.getAttribute('sandbox')).toBe('');
    const body = page.frameLocator('iframe.mail-html');
    expect(await body.locator('#greeting').textContent()).toBe('Hello Zoë');
    expect(await body.locator('p').textContent()).toBe('Your account is ready.');
    const response = await fetch(`${harness.httpUrl}/messages/${id}/body.html`);
    expect(response.headers.get('content-security-policy')).toMatch(/^sandbox; default-src 'none';/);
    expect(remoteRequests).toEqual([]);
    await frame.screenshot({ path: join(shots, 'message-html-body.png') });
  });

  it('shows the text body, every header decoded, and the raw source', async () => {
    expect(await page.locator('[data-field="text"]').textContent()).toBe(
      'Hello Zoë,\nyour account is ready.',
    );
    const header = (name: string) =>
      page
        .locator('table.headers tr', { has: page.getByRole('rowheader', { name, exact: true }) })
        .locator('td');
    expect(await header('Subject').textContent()).toBe('Welcome, Zoë');
    expect(await header('X-Campaign').textContent()).toBe('signup-42');
    expect(await header('From').textContent()).toBe('Dev <dev@app.example>');
    await page.getByText('Show the e-mail as received').click();
    const raw = (await page.locator('[data-field="raw"]').textContent()) ?? '';
    expect(raw).toContain('X-Campaign: signup-42');
    expect(raw).toMatch(/Content-Type: multipart\/mixed; boundary=/);
  });

  it('previews the stored image and PDF', async () => {
    const image = page.locator('img.preview-image');
    await expect
      .poll(() => image.evaluate((img) => (img as { naturalWidth: number }).naturalWidth))
      .toBeGreaterThan(0);
    expect(await image.getAttribute('alt')).toBe('Preview of photo.png');
    const pdf = page.locator('iframe.preview-pdf');
    const src = (await pdf.getAttribute('src')) ?? '';
    const served = await fetch(`${harness.httpUrl}${src}`);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('application/pdf');
    expect(served.headers.get('content-disposition')).toBe('inline');
    // Not a type the console previews: no inline copy of it.
    expect((await fetch(`${harness.httpUrl}/messages/${id}/attachments/99/preview`)).status).toBe(404);
    await page.screenshot({ path: join(shots, 'message-page.png'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: join(shots, 'message-page-dark.png'), fullPage: true });
    expect(remoteRequests).toEqual([]);
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('deletes the message from its button, behind the session CSRF token', async () => {
    const forged = await fetch(`${harness.httpUrl}/messages/${id}/delete`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'csrf=forged',
      redirect: 'manual',
    });
    expect(forged.status).toBe(403);
    await page.goto(`${harness.httpUrl}/messages/${id}`);
    await page.getByRole('button', { name: 'Delete this message' }).click();
    await page.getByRole('heading', { name: 'Messages' }).waitFor();
    expect((await fetch(`${harness.httpUrl}/v1/messages/${id}`)).status).toBe(404);
    expect(await page.locator(`tr[data-message="${id}"]`).count()).toBe(0);
  });
});
