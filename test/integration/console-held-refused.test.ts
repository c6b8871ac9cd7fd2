import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../harness/browser.ts';
import { type Harness, type HarnessOptions, startHarness } from '../../harness/gateway-harness.ts';
import { getJson, until } from '../../harness/http-state.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import type { MessageRecord } from '../../src/record/message-record.ts';
import type { RefusalEntry } from '../../src/record/refusal-log.ts';

const token = 'console-token-held-91c2';
const workspaces: HarnessOptions['workspaces'] = [
  {
    identifier: 'ws-hold',
    ingestEmail: 'hold@ingest.test',
    whitelistIngestAddresses: ['*@partner.example'],
    unlistedSenders: 'hold',
  },
  {
    identifier: 'ws-refuse',
    ingestEmail: 'refuse@ingest.test',
    whitelistIngestAddresses: ['*@partner.example'],
  },
];
/** Markup in a display name: the Refused page shows the header From, and must show it as text. */
const hostileFrom = '"<img src=x onerror=window.__xss=1>" <mallory@evil.example>';

/**
 * The console's Held and Refused pages in a real browser (Debian's chromium): held mail with
 * its three actions behind the session's CSRF token, the refusal log with its filters, the
 * replay hint on both, and the system's dark mode. Screenshots go to CONSOLE_SCREENSHOTS, else
 * a temporary folder.
 */
describe('web console: held and refused mail', () => {
  let harness: Harness;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let shots: string;
  const held: string[] = [];

  async function shoot(name: string): Promise<void> {
    await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  }

  async function hold(label: string): Promise<string> {
    const message = await composeMessage({
      from: `Nora <nora@newsupplier.example>`,
      to: 'hold@ingest.test',
      subject: label,
      text: 'Invoice attached.',
      attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label), contentType: 'application/pdf' }],
    });
    const { data } = await deliver(harness.smtpPort, {
      from: 'billing@newsupplier.example',
      to: ['hold@ingest.test'],
      message,
    });
    return queuedId(data);
  }

  const api = <T>(path: string) => getJson<T>(`${harness.httpUrl}${path}`, token);

  beforeAll(async () => {
    harness = await startHarness({
      workspaces,
      http: { token },
      mockWorkspaces: [{ identifier: 'ws-hold', whitelistIngestAddresses: ['*@partner.example'] }],
    });
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    shots = process.env.CONSOLE_SCREENSHOTS ?? (await mkdtemp(join(tmpdir(), 'ingest-gateway-held-')));
    await mkdir(shots, { recursive: true });
    held.push(await hold('March invoice'), await hold('April invoice'), await hold('May invoice'));
    // Refusals: an unknown recipient at RCPT, a sender the allow-list does not admit at DATA.
    await deliver(harness.smtpPort, {
      from: 'scanner@guess.example',
      to: ['admin@ingest.test'],
      message: 'x\r\n',
    });
    const refused = await composeMessage({
      from: hostileFrom,
      to: 'refuse@ingest.test',
      subject: 'Pay now',
      attachments: [{ filename: 'pay.pdf', content: uniquePdf('pay-now') }],
    });
    await deliver(harness.smtpPort, {
      from: 'bounce@evil.example',
      to: ['refuse@ingest.test'],
      message: refused,
    });
    await until(
      'both refusals in the log',
      async () => (await api<{ refusals: RefusalEntry[] }>('/v1/refusals')).body?.refusals.length,
      (count) => count === 2,
    );

    await page.goto(`${harness.httpUrl}/held`);
    await page.getByLabel('Access token (http.token)').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Held' }).waitFor();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await harness?.close();
  });

  it('lists held mail with why it is held, its documents and three actions', async () => {
    const rows = page.locator('tr[data-message]');
    expect(await rows.count()).toBe(3);
    // Newest first.
    expect(await rows.first().getAttribute('data-message')).toBe(held[2]);
    const row = page.locator(`tr[data-message="${held[0]}"]`);
    expect(await row.locator('[data-field="hold"]').textContent()).toMatch(
      /sender not on the allow-list\s*for\s+ws-hold/,
    );
    expect(await row.textContent()).toContain('March invoice.pdf');
    expect(await row.locator('.state-held').count()).toBe(1);
    const actions = await row
      .locator('button[data-action]')
      .evaluateAll((buttons) => buttons.map((button) => button.getAttribute('data-action')));
    expect(actions).toEqual(['release', 'release-allow', 'discard']);
    // "Release and allow sender" is the release with allowSender, behind the same CSRF token.
    const allowForm = row.locator('form', { has: page.locator('[data-action="release-allow"]') });
    expect(await allowForm.getAttribute('action')).toBe(`/messages/${held[0]}/release`);
    expect(await allowForm.locator('input[name="allowSender"]').inputValue()).toBe('address');
    expect(await allowForm.locator('input[name="csrf"]').inputValue()).toMatch(/.{16,}/);
    await shoot('held');
  });

  it('shows the replay command for the held message and a link to its raw file', async () => {
    const row = page.locator(`tr[data-message="${held[0]}"]`);
    await row.getByText('Run again under new rules').click();
    const command = await row.locator('.replay-hint pre').textContent();
    expect(command).toBe(
      `ingest-gateway replay ${held[0]}.eml --to hold@ingest.test --from billing@newsupplier.example --config config/gateway.yaml`,
    );
    const raw = row.locator(`.replay-hint a[href="/v1/messages/${held[0]}/raw"]`);
    expect(await raw.getAttribute('download')).toBe(`${held[0]}.eml`);
    await shoot('held-replay-hint');
  });

  it('releases one message and discards another from their buttons', async () => {
    await page.locator(`tr[data-message="${held[0]}"] button[data-action="release"]`).click();
    await page.getByRole('status').filter({ hasText: 'released' }).waitFor();
    expect(await page.locator(`tr[data-message="${held[0]}"]`).count()).toBe(0);
    expect((await api<MessageRecord>(`/v1/messages/${held[0]}`)).body?.state).toBe('released');
    await harness.settled(held[0] ?? '', 0);

    await page.locator(`tr[data-message="${held[1]}"] button[data-action="discard"]`).click();
    await page.getByRole('status').filter({ hasText: 'discarded' }).waitFor();
    expect((await api<MessageRecord>(`/v1/messages/${held[1]}`)).body?.state).toBe('discarded');
    expect(await page.locator('tr[data-message]').count()).toBe(1);
  });

  it('refuses a held-mail form without the session CSRF token', async () => {
    const [cookie] = await context.cookies();
    const response = await fetch(`${harness.httpUrl}/messages/${held[2]}/release`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: `ingest_console=${cookie?.value ?? ''}`,
      },
      body: 'csrf=forged',
      redirect: 'manual',
    });
    expect(response.status).toBe(403);
    expect((await api<MessageRecord>(`/v1/messages/${held[2]}`)).body?.state).toBe('held');
  });

  it('shows the held message page with its actions and replay hint', async () => {
    await page.goto(`${harness.httpUrl}/messages/${held[2]}`);
    expect(await page.locator('[data-field="hold"]').textContent()).toContain('held for ws-hold');
    expect(await page.locator('.held-actions button[data-action]').count()).toBe(3);
    expect(await page.locator('.replay-hint').count()).toBe(1);
    await shoot('held-message');
  });

  it('lists refusals with client, HELO, envelope, header From and reply, markup as text', async () => {
    await page.goto(`${harness.httpUrl}/refused`);
    const rows = page.locator('tr[data-refusal]');
    expect(await rows.count()).toBe(2);
    const data = rows.first();
    expect(await data.locator('td[data-label="Stage"]').textContent()).toContain('DATA');
    expect(await data.textContent()).toContain(hostileFrom);
    expect(await data.textContent()).toContain('bounce@evil.example');
    expect(await data.textContent()).toContain('client.test');
    expect(await data.locator('.reply').textContent()).toMatch(/^550 5\.7\.1 /);
    expect(await page.evaluate('"__xss" in window')).toBe(false);
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    const rcpt = rows.nth(1);
    expect(await rcpt.locator('.reply').textContent()).toBe(
      '550 5.1.1 <admin@ingest.test>: no such ingest address here',
    );
    await rcpt.getByText('Run again under new rules').click();
    expect(await rcpt.locator('.replay-hint pre').textContent()).toBe(
      'ingest-gateway replay message.eml --to admin@ingest.test --from scanner@guess.example --config config/gateway.yaml',
    );
    await shoot('refused');
    await page.setViewportSize({ width: 390, height: 844 });
    await shoot('refused-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('filters refusals by stage and sender like GET /v1/refusals', async () => {
    await page.goto(`${harness.httpUrl}/refused`);
    await page.getByLabel('Stage').selectOption('rcpt');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/stage=rcpt/);
    expect(await page.locator('tr[data-refusal]').count()).toBe(1);
    expect(await page.locator('tr[data-refusal] td[data-label="Recipients"]').textContent()).toBe(
      'admin@ingest.test',
    );
    await page.getByLabel('Stage').selectOption('');
    await page.getByLabel('Sender').fill('nobody-like-this');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/from=nobody-like-this/);
    expect(await page.locator('td.empty').textContent()).toBe('No refusals match.');
  });

  it('releases with "Release and allow sender": the allow-list on the service gains the sender, and the next message is admitted', async () => {
    await page.goto(`${harness.httpUrl}/held`);
    await page.locator(`tr[data-message="${held[2]}"] button[data-action="release-allow"]`).click();
    await page.getByRole('status').filter({ hasText: 'released' }).waitFor();
    expect((await api<MessageRecord>(`/v1/messages/${held[2]}`)).body?.state).toBe('released');
    expect(harness.mock.workspaces.get('ws-hold')?.whitelistIngestAddresses).toEqual([
      '*@partner.example',
      'nora@newsupplier.example',
    ]);
    await harness.settled(held[2] ?? '', 0);
    // Admitted now: a new message from the same sender is taken as usual, not held.
    const next = await hold('June invoice');
    expect(await harness.settled(next, 0)).toBe('completed');
    expect((await api<MessageRecord>(`/v1/messages/${next}`)).body?.state).not.toBe('held');
  });

  it('follows the system dark mode', async () => {
    const background = () => page.evaluate('getComputedStyle(document.documentElement).backgroundColor');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(`${harness.httpUrl}/refused`);
    expect(await background()).toBe('rgb(255, 255, 255)');
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await background()).toBe('rgb(13, 17, 23)');
    await shoot('refused-dark');
    await page.goto(`${harness.httpUrl}/held`);
    await shoot('held-dark');
    await page.goto(`${harness.httpUrl}/messages/${held[2]}`);
    await shoot('held-message-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });
});
