import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freeLoopbackPort } from '../src/redis/local-redis-server.ts';
import { type TestMta, waitForExit, waitForGreeting, waitForLogLine, waitForQueue } from './mta-process.ts';

const run = promisify(execFile);

/**
 * A private Postfix instance, as an MX deployment puts one in front of the gateway: its own
 * configuration directory, queue and log under a temporary folder, an SMTP listener on a free
 * loopback port, and a transport map that relays each test domain to a loopback port. Runs
 * beside any system Postfix without touching it. Needs root (Postfix's master drops to the
 * `postfix` user) and Debian's `postfix` package, which it installs when missing.
 */
export type TestPostfix = TestMta<QueuedMessage>;

export interface QueuedMessage {
  queue_name: string;
  recipients: Array<{ address: string }>;
}

export interface PostfixOptions {
  /** Domain → loopback port that mail for it is relayed to. */
  relay: Record<string, number>;

  /** main.cf lines that override the defaults below. */
  settings?: Record<string, string>;
}

/** The services a relay needs, none chrooted (the queue folder holds no copy of /etc). */
const masterCf = (port: number) =>
  [
    `127.0.0.1:${port} inet n - n - - smtpd`,
    'pickup unix n - n 60 1 pickup',
    'cleanup unix n - n - 0 cleanup',
    'qmgr unix n - n 300 1 qmgr',
    'rewrite unix - - n - - trivial-rewrite',
    'bounce unix - - n - 0 bounce',
    'defer unix - - n - 0 bounce',
    'trace unix - - n - 0 bounce',
    'verify unix - - n - 1 verify',
    'flush unix n - n 1000? 0 flush',
    'proxymap unix - - n - - proxymap',
    'smtp unix - - n - - smtp',
    'relay unix - - n - - smtp',
    'showq unix n - n - - showq',
    'error unix - - n - - error',
    'retry unix - - n - - error',
    'discard unix - - n - - discard',
    'anvil unix - - n - 1 anvil',
    'scache unix - - n - 1 scache',
    'postlog unix-dgram n - n - 1 postlogd',
    '',
  ].join('\n');

export async function startPostfix(options: PostfixOptions): Promise<TestPostfix> {
  await ensurePostfixInstalled();
  const dir = await mkdtemp(join(tmpdir(), 'postfix-'));
  const port = await freeLoopbackPort();
  const transport = Object.entries(options.relay)
    .map(([domain, target]) => `${domain}=smtp:[127.0.0.1]:${target}`)
    .join(' ');
  const settings: Record<string, string> = {
    compatibility_level: '3.6',
    queue_directory: join(dir, 'queue'),
    data_directory: join(dir, 'data'),
    maillog_file: join(dir, 'maillog'),
    maillog_file_prefixes: dir,
    meta_directory: '/etc/postfix',
    mail_owner: 'postfix',
    setgid_group: 'postdrop',
    myhostname: 'mta.test',
    mydomain: 'mta.test',
    myorigin: 'mta.test',
    mydestination: '',
    inet_interfaces: '127.0.0.1',
    inet_protocols: 'ipv4',
    mynetworks: '127.0.0.0/8',
    relay_domains: Object.keys(options.relay).join(' '),
    transport_maps: `inline:{ ${transport} }`,
    smtpd_relay_restrictions: 'permit_mynetworks, reject_unauth_destination',
    smtp_dns_support_level: 'disabled',
    smtp_host_lookup: 'native',
    smtp_tls_security_level: 'none',
    smtputf8_enable: 'no',
    alias_maps: '',
    alias_database: '',
    local_recipient_maps: '',
    biff: 'no',
    ...options.settings,
  };
  const mainCf = Object.entries(settings)
    .map(([key, value]) => `${key} = ${value}`)
    .join('\n');
  await mkdir(join(dir, 'queue'), { recursive: true });
  await mkdir(join(dir, 'data'), { recursive: true });
  await writeFile(join(dir, 'main.cf'), `${mainCf}\n`);
  await writeFile(join(dir, 'master.cf'), masterCf(port));
  // The daemons run as the postfix user: they must reach the folder and own their data.
  await chmod(dir, 0o755);
  await run('chown', ['postfix', join(dir, 'data')]);
  const log = () => readFile(join(dir, 'maillog'), 'utf8').catch(() => '');
  // Postfix reports a bad setting in its log, not on stderr: show the log with the failure.
  const postfixCommand = (command: string) =>
    run('postfix', ['-c', dir, command]).catch(async (err: unknown) => {
      throw new Error(`postfix ${command} failed: ${String(err)}\n${await log()}`);
    });
  await postfixCommand('check');
  await postfixCommand('start');

  const postfix: TestPostfix = {
    port,
    dir,
    async flush() {
      await run('postqueue', ['-c', dir, '-f']);
    },
    async queue() {
      const { stdout } = await run('postqueue', ['-c', dir, '-j']);
      return stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line));
    },
    waitForDeferred(recipients, timeoutMs = 30_000) {
      const queued = async () =>
        (await postfix.queue()).map((message) => [
          message.queue_name,
          message.recipients.map((recipient) => recipient.address),
        ]);
      return waitForQueue(queued, [['deferred', recipients]], timeoutMs);
    },
    log,
    waitForLog: (pattern, timeoutMs) => waitForLogLine(log, pattern, timeoutMs),
    async stop() {
      // abort, not stop: the delivery agents end at once, with the connections they cache.
      const master = await readFile(join(dir, 'data', 'master.lock'), 'utf8').catch(() => '');
      await run('postfix', ['-c', dir, 'abort']).catch(() => undefined);
      await waitForExit(Number.parseInt(master.trim(), 10));
      await rm(dir, { recursive: true, force: true });
    },
  };
  await waitForGreeting(port, 'postfix');
  return postfix;
}

async function ensurePostfixInstalled(): Promise<void> {
  if (existsSync('/usr/sbin/postfix')) return;
  // Like redis-server for the other suites: a fresh machine gets Debian's package.
  execFileSync('apt-get', ['install', '-y', '-qq', 'postfix'], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    stdio: 'ignore',
  });
}
