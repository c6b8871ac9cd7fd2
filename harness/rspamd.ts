import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from '../src/redis/local-redis-server.ts';
import { pingRspamd } from '../src/scan/rspamd-check.ts';
import { type RestartableScanner, startRestartableScanner } from './scanner-process.ts';

/** rspamd's spam test string (GTUBE): the message gets the action reject. */
export const GTUBE = 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';

/** A private rspamd for one test file: its normal worker on a free loopback port, its config and data in a temp dir. */
export interface TestRspamd extends RestartableScanner {
  /** The normal worker's URL, as scan.rspamd.url takes it. */
  readonly url: string;
}

export async function startRspamd(): Promise<TestRspamd> {
  const dir = await mkdtemp(join(tmpdir(), 'ingest-rspamd-'));
  const port = await freeLoopbackPort();
  const url = `http://127.0.0.1:${port}`;
  // Its own small configuration, none of the system's /etc/rspamd: no Redis, no DNS lists
  // (nothing outside this machine answers), and a short public-suffix list, as compiling the
  // whole one takes most of a minute on a busy machine. local_addrs is empty because rspamd
  // skips checks (GTUBE among them, in some versions) for mail from its local networks, and
  // the tests' SMTP client connects from 127.0.0.1.
  await writeFile(join(dir, 'tld.dat'), 'com\norg\nnet\nexample\n');
  const config = join(dir, 'rspamd.conf');
  await writeFile(
    config,
    `options {
  pidfile = "${join(dir, 'rspamd.pid')}";
  tempdir = "${dir}";
  local_addrs = [];
  url_tld = "${join(dir, 'tld.dat')}";
  dns { nameserver = ["127.0.0.1:9"]; timeout = 0.1s; retransmits = 1; }
}
actions { reject = 15; add_header = 6; greylist = 4; }
logging { type = "file"; filename = "${join(dir, 'rspamd.log')}"; level = "notice"; }
worker "normal" { bind_socket = "127.0.0.1:${port}"; count = 1; }
`,
  );
  const args = [
    '-f',
    '-i',
    '-c',
    config,
    '--var',
    `DBDIR=${dir}`,
    '--var',
    `RUNDIR=${dir}`,
    '--var',
    `LOGDIR=${dir}`,
  ];
  const scanner = await startRestartableScanner(
    'rspamd',
    args,
    async () => (await pingRspamd({ url, timeout: 1000 }, 1000)) === null,
    dir,
  );
  return { url, ...scanner };
}
