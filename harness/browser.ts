import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Where Debian's chromium package puts its binary. */
const chromiumPath = '/usr/bin/chromium';

/**
 * A headless Chromium for console tests: Debian's package, installed like redis-server and
 * postfix when the machine lacks it, driven by playwright-core (no browser download).
 * --no-sandbox: CI runs as root in a container, where Chromium's sandbox cannot start.
 * Site isolation off: a sandboxed frame (the message page's HTML body, its PDF preview) is
 * then painted in the page's own process, so screenshots show what a user sees in it instead
 * of a blank box; what the frame may do is set by its sandbox and CSP, not by the process.
 */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: 'ignore',
    });
  }
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-site-isolation-trials',
      '--disable-features=IsolateOrigins,site-per-process',
    ],
  });
}
