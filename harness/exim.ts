import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { freeLoopbackPort } from '../src/redis/local-redis-server.ts';
import { type TestMta, waitForExit, waitForGreeting, waitForLogLine, waitForQueue } from './mta-process.ts';

const run = promisify(execFile);

/**
 * Where `.ci/install-exim` unpacks Debian's `exim4-daemon-light`. Debian's Exim and Postfix
 * packages conflict (each is the machine's MTA), so the test's Exim is the package's binary
 * unpacked beside the installed Postfix, not installed over it.
 */
const unpackedExim = '/opt/exim4-test/usr/sbin/exim4';
const installScript = resolve(import.meta.dirname, '../.ci/install-exim');

/**
 * A private Exim instance in front of the gateway, as an MX deployment runs one: its own
 * configuration file (`-C`), spool, logs and pid file under a temporary folder, a listener on
 * a free loopback port, and a `manualroute` router that sends each test domain to a loopback
 * port. No queue runner: a deferred recipient waits until the test asks for a queue run
 * (`exim -qff`), as it would wait for Exim's retry time. Needs root (Exim drops to `nobody` to deliver); runs beside any system MTA.
 */
export type TestExim = TestMta<EximQueuedMessage>;

export interface EximQueuedMessage {
  id: string;
  /** Recipients not yet delivered (`exim -bp` leaves out those marked `D`). */
  recipients: string[];
}

export interface EximOptions {
  /** Domain → loopback port that mail for it is relayed to. */
  relay: Record<string, number>;
}

/** The private configuration: an open relay for loopback clients to the test domains only. */
function eximConfig(dir: string, exim: string, port: number, relay: Record<string, number>): string {
  const routeList = Object.entries(relay)
    .map(([domain, target]) => `${domain} 127.0.0.1::${target}`)
    .join(' ; ');
  return `${[
    `exim_path = ${exim}`,
    `spool_directory = ${join(dir, 'spool')}`,
    `log_file_path = ${join(dir, 'log')}/%slog`,
    `pid_file_path = ${join(dir, 'exim.pid')}`,
    // Exim keeps root for its own processes: one started as another user with -C drops its
    // privilege and logs to stderr, not the log file. Its SMTP transport runs as nobody.
    'exim_user = root',
    'exim_group = root',
    'primary_hostname = mta.test',
    'qualify_domain = mta.test',
    `daemon_smtp_ports = ${port}`,
    'local_interfaces = 127.0.0.1',
    'disable_ipv6 = true',
    `domainlist relay_to_domains = ${Object.keys(relay).join(' : ')}`,
    'hostlist relay_from_hosts = 127.0.0.1',
    'acl_smtp_rcpt = acl_check_rcpt',
    'host_lookup =',
    'rfc1413_hosts =',
    'tls_advertise_hosts =',
    'keep_environment =',
    // No "message delayed" warnings: a deferred test message gets a bounce or a delivery only.
    'delay_warning = 0s',
    'log_selector = +all -arguments',
    '',
    'begin acl',
    'acl_check_rcpt:',
    '  accept hosts = +relay_from_hosts',
    '         domains = +relay_to_domains',
    '  deny message = relay not permitted',
    '',
    'begin routers',
    'relay_to_test_port:',
    '  driver = manualroute',
    '  domains = +relay_to_domains',
    `  route_list = ${routeList}`,
    '  transport = relay_smtp',
    '  self = send',
    '  no_more',
    '',
    'begin transports',
    'relay_smtp:',
    '  driver = smtp',
    '  allow_localhost',
    // Exim never delivers as root. The transport cannot update the hints files the root
    // delivery process owns and logs so at each delivery; a test instance needs no cache.
    '  user = nobody',
    '  group = nogroup',
    '  hosts_avoid_tls = *',
    '  helo_data = mta.test',
    '',
    'begin retry',
    // A long retry window: a deferred recipient stays queued until the test runs the queue.
    '* * F,2d,1m',
    '',
  ].join('\n')}\n`;
}

export async function startExim(options: EximOptions): Promise<TestExim> {
  const exim = await eximBinary();
  const dir = await mkdtemp(join(tmpdir(), 'exim-'));
  const port = await freeLoopbackPort();
  const configFile = join(dir, 'exim.conf');
  await mkdir(join(dir, 'spool'), { recursive: true });
  await mkdir(join(dir, 'log'), { recursive: true });
  await writeFile(configFile, eximConfig(dir, exim, port, options.relay), { mode: 0o644 });
  // The SMTP transport runs as nobody and records its connections in the spool's hints.
  await chmod(dir, 0o755);
  await run('chown', ['-R', 'nobody:nogroup', join(dir, 'spool')]);
  const log = () => readFile(join(dir, 'log', 'mainlog'), 'utf8').catch(() => '');
  const eximCommand = async (args: string[]) =>
    run(exim, ['-C', configFile, ...args]).catch(async (err: unknown) => {
      const panic = await readFile(join(dir, 'log', 'paniclog'), 'utf8').catch(() => '');
      throw new Error(`exim ${args.join(' ')} failed: ${String(err)}\n${await log()}\n${panic}`);
    });
  await eximCommand(['-bV']);
  // -bd forks the daemon and returns; its pid lands in pid_file_path.
  await eximCommand(['-bd']);

  const instance: TestExim = {
    port,
    dir,
    async flush() {
      await eximCommand(['-qff']);
    },
    async queue() {
      const { stdout } = await eximCommand(['-bp']);
      return parseQueueListing(stdout);
    },
    waitForDeferred(recipients, timeoutMs = 30_000) {
      const recipientsQueued = async () => (await instance.queue()).map((message) => message.recipients);
      return waitForQueue(recipientsQueued, [recipients], timeoutMs);
    },
    log,
    waitForLog: (pattern, timeoutMs) => waitForLogLine(log, pattern, timeoutMs),
    async stop() {
      const pid = Number.parseInt((await readFile(join(dir, 'exim.pid'), 'utf8').catch(() => '')).trim(), 10);
      if (Number.isInteger(pid)) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // already gone
        }
        await waitForExit(pid);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
  await waitForGreeting(port, 'exim');
  return instance;
}

/**
 * `exim -bp` lists each message as a header line (age, size, id, sender) followed by one
 * indented line per recipient; a delivered recipient is marked `D` and left out here.
 */
export function parseQueueListing(listing: string): EximQueuedMessage[] {
  const messages: EximQueuedMessage[] = [];
  for (const line of listing.split('\n')) {
    const header = /^\s*\S+\s+\S+\s+([0-9A-Za-z]{6}-[0-9A-Za-z]{6,11}-[0-9A-Za-z]{2,4})\s/.exec(line);
    if (header?.[1]) {
      messages.push({ id: header[1], recipients: [] });
      continue;
    }
    const recipient = /^\s+(D\s+)?(\S+@\S+)\s*$/.exec(line);
    const current = messages.at(-1);
    if (recipient?.[2] && current && !recipient[1]) current.recipients.push(recipient[2]);
  }
  return messages;
}

/** Debian's Exim binary: the system's when installed, else the unpacked package. */
async function eximBinary(): Promise<string> {
  if (existsSync('/usr/sbin/exim4')) return '/usr/sbin/exim4';
  if (!existsSync(unpackedExim)) await run(installScript);
  return unpackedExim;
}
