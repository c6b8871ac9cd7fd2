import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../harness/browser.ts';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import type { MessageRecord } from '../../src/record/message-record.ts';

const token = 'console-token-7d1e4a9b';
/** Markup in a subject and a file name: mail is hostile input, and the console must show it as text. */
const hostileSubject = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script> Invoice';
const hostileFileName = '"><svg onload="window.__xss=3">.pdf';

/**
 * The web console in a real browser (Debian's chromium, driven by playwright-core): sign-in,
 * the live message list, the message page, retry of a failed upload, the queue overview and
 * Bull Board. A screenshot of each page is written under the test's temporary folder.
 */
describe('web console', () => {
  let harness: Harness;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let shots: string;

  async function send(subject: string, fileName: string): Promise<string> {
    const message = await composeMessage({
      from: 'Ann <ann@acme.example>',
      to: 'documents@ingest.test',
      subject,
      attachments: [{ filename: fileName, content: uniquePdf(`${subject}-${Math.random()}`) }],
    });
    const reply = await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message });
    return queuedId(reply.data);
  }

  async function shoot(name: string): Promise<void> {
    await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  }

  beforeAll(async () => {
    harness = await startHarness({ upload: { attempts: 1 }, http: { token } });
    browser = await launchBrowser();
    context = await browser.newContext();
    page = await context.newPage();
    shots = await mkdtemp(join(tmpdir(), 'ingest-gateway-console-'));
  });

  afterAll(async () => {
    await browser?.close();
    await harness?.close();
  });

  it('asks for http.token once, and keeps the session in an HttpOnly, SameSite=Strict cookie', async () => {
    await page.goto(`${harness.httpUrl}/failed`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await shoot('login');

    await page.getByLabel('Access token (http.token)').fill('not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('not the token');

    await page.getByLabel('Access token (http.token)').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Failed uploads' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/failed');

    const cookies = await context.cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ name: 'ingest_console', httpOnly: true, sameSite: 'Strict' });
    expect(cookies[0]?.value).not.toContain(token);
    expect(await page.evaluate('document.cookie')).toBe('');
  });

  it('shows a mail sent over SMTP in the open list without a reload, its markup as text', async () => {
    await page.goto(`${harness.httpUrl}/`);
    await page.getByRole('heading', { name: 'Messages' }).waitFor();
    // Survives only if the page is not reloaded.
    await page.evaluate('window.__sameDocument = true');

    const id = await send(hostileSubject, hostileFileName);
    const row = page.locator(`tr[data-message="${id}"]`);
    await row.waitFor();
    expect(await page.evaluate('"__sameDocument" in window')).toBe(true);
    expect(await row.locator('.queue-id').textContent()).toBe(id);
    expect(await row.locator('td.subject').textContent()).toBe(hostileSubject);
    expect(await row.textContent()).toContain('ann@acme.example');
    expect(await row.textContent()).toContain('documents@ingest.test');
    expect(await row.locator('.file-name').textContent()).toBe(hostileFileName);
    await harness.settled(id, 0);
    await row.locator('.state-uploaded').waitFor();
    expect(await page.evaluate('"__xss" in window')).toBe(false);
    expect(await page.locator('img[src="x"], svg, script:not([src])').count()).toBe(0);
    await shoot('messages');
    await page.setViewportSize({ width: 390, height: 844 });
    await shoot('messages-phone');
    await page.setViewportSize({ width: 1280, height: 720 });
  });

  it('searches by sender, subject and state with the filters of GET /v1/messages', async () => {
    const id = await send('Quarterly figures', 'figures.pdf');
    await harness.settled(id, 0);
    await page.goto(`${harness.httpUrl}/`);
    await page.getByLabel('Subject or file name').fill('quarterly');
    await page.getByLabel('Attachment state').selectOption('uploaded');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/q=quarterly/);
    const rows = page.locator('tr[data-message]');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().getAttribute('data-message')).toBe(id);

    await page.getByLabel('Attachment state').selectOption('failed');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/state=failed/);
    expect(await page.locator('tr[data-message]').count()).toBe(0);
  });

  it('shows the message page: envelope, workspace decision, the attachment uploaded', async () => {
    const id = await send(hostileSubject, hostileFileName);
    await harness.settled(id, 0);
    await page.goto(`${harness.httpUrl}/messages/${id}`);
    const entry = page.locator('[data-entry="0"]');
    expect(await entry.locator('[data-field="state"]').textContent()).toBe('uploaded');
    expect(await entry.textContent()).toContain('application/pdf');
    expect(await entry.textContent()).toContain('No longer stored');
    expect(await page.locator('.subject').first().textContent()).toBe(hostileSubject);
    expect(await page.getByRole('row', { name: /ws-open/ }).textContent()).toContain('admitted');
    expect(await page.evaluate('"__xss" in window')).toBe(false);
    expect(await page.locator('img[src="x"], svg').count()).toBe(0);
    await shoot('message');
  });

  it('retries a failed upload from its button, and the attachment becomes uploaded', async () => {
    harness.mock.enqueueFault({
      status: 400,
      body: { type: 'validation_error', errors: [{ attr: 'file', code: 'invalid', detail: 'refused once' }] },
    });
    const id = await send('Refused once', 'refused.pdf');
    expect(await harness.settled(id, 0)).toBe('failed');

    // A failed upload keeps its bytes: they download, as a file, under a header-safe name.
    const download = await fetch(`${harness.httpUrl}/v1/messages/${id}/attachments/0`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/pdf');
    expect(download.headers.get('content-disposition')).toMatch(/^attachment; filename="refused\.pdf"/);
    expect((await download.arrayBuffer()).byteLength).toBeGreaterThan(0);

    await page.goto(`${harness.httpUrl}/failed`);
    const row = page.locator('tr', { has: page.getByRole('rowheader', { name: 'refused.pdf' }) });
    expect(await row.textContent()).toContain('refused once');
    await shoot('failed-uploads');
    await row.getByRole('button', { name: 'Retry the upload of refused.pdf' }).click();
    await page.getByRole('status').filter({ hasText: '1 upload(s) back in the queue' }).waitFor();

    await page.goto(`${harness.httpUrl}/messages/${id}`);
    await page.locator('[data-entry="0"] [data-field="state"]', { hasText: 'uploaded' }).waitFor();
    const record = await fetch(`${harness.httpUrl}/v1/messages/${id}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(((await record.json()) as MessageRecord).attachments[0]?.state).toBe('uploaded');
  });

  it('shows each queue with its counts, and mounts Bull Board', async () => {
    await page.goto(`${harness.httpUrl}/queues`);
    const uploads = page.locator('tr[data-queue="uploads"]');
    expect(await uploads.locator('td[data-label="Completed"]').textContent()).toMatch(/^[1-9]\d*$/);
    expect(await uploads.locator('td[data-label="Waiting"]').textContent()).toBe('0');
    await shoot('queues');

    await page.goto(`${harness.httpUrl}/admin/queues/`);
    await page.getByText('uploads').first().waitFor();
    await shoot('bull-board');
  });

  it('refuses state changes without the session CSRF token or from another origin', async () => {
    const [cookie] = await context.cookies();
    const session = `ingest_console=${cookie?.value ?? ''}`;
    const form = { 'content-type': 'application/x-www-form-urlencoded', cookie: session };
    const post = (path: string, headers: Record<string, string>, body = 'all=1') =>
      fetch(`${harness.httpUrl}${path}`, { method: 'POST', headers, body, redirect: 'manual' });

    expect((await post('/failed/retry', form, 'all=1&csrf=forged')).status).toBe(403);
    expect((await post('/failed/retry', { ...form, origin: 'https://evil.example' })).status).toBe(403);
    expect((await post('/v1/uploads/retry', { cookie: session })).status).toBe(403);
    expect((await post('/logout', form, 'csrf=forged')).status).toBe(403);
    expect((await post('/v1/uploads/retry', { authorization: `Bearer ${token}` })).status).toBe(200);

    // The page's own forms carry the token: signing out works, and the console asks again.
    await page.goto(`${harness.httpUrl}/`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await context.cookies()).toHaveLength(0);
  });
});

describe('web console without http.token', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness();
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('opens without signing in, and still refuses state changes from another site', async () => {
    const page = await fetch(`${harness.httpUrl}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('set-cookie')).toMatch(
      /^ingest_console=[^;]+; Path=\/; HttpOnly; SameSite=Strict/,
    );
    expect(await page.text()).not.toContain('Sign out');

    const post = (path: string, headers: Record<string, string>) =>
      fetch(`${harness.httpUrl}${path}`, { method: 'POST', headers, redirect: 'manual' });
    expect((await post('/v1/uploads/retry', { origin: 'https://evil.example' })).status).toBe(403);
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    // A form without the session's token: a page of another site could send just this.
    expect((await post('/failed/retry', form)).status).toBe(403);
    // Programs keep using the API as before.
    expect((await post('/v1/uploads/retry', {})).status).toBe(200);
  });
});
