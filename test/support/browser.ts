import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Where Debian's chromium package puts its binary. */
const chromiumPath = '/usr/bin/chromium';

/**
 * A headless Chromium for console tests: Debian's package, installed like redis-server and
 * postfix when the machine lacks it, driven by playwright-core (no browser download).
 * --no-sandbox: CI runs as root in a container, where Chromium's sandbox cannot start.
 */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: 'ignore',
    });
  }
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox'] });
}
