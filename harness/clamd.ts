import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pingClamd } from '../src/scan/clamd-instream.ts';
import { type RestartableScanner, startRestartableScanner } from './scanner-process.ts';

/**
 * The EICAR anti-virus test string. Debian's clamav-daemon ships no signatures (freshclam
 * downloads them), so the test database below carries its own signature for it.
 */
export const EICAR = 'X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*';

/** The name clamd reports for EICAR from the test database (clamd marks non-official signatures). */
export const EICAR_SIGNATURE = 'Gateway-Test.EICAR.UNOFFICIAL';

export interface ClamdOptions {
  /** clamd's StreamMaxLength (e.g. `1M`); default 25M as Debian's clamd.conf. */
  streamMaxLength?: string;
  /** Whole files clamd must report by their MD5 (an .hdb database), under `name`. */
  files?: { name: string; content: Buffer }[];
}

/** A private clamd for one test file: its own Unix socket and signature database in a temp dir. */
export interface TestClamd extends RestartableScanner {
  readonly socket: string;
}

export async function startClamd(options: ClamdOptions = {}): Promise<TestClamd> {
  const dir = await mkdtemp(join(tmpdir(), 'ingest-clamd-'));
  const database = join(dir, 'db');
  await mkdir(database);
  // A body signature (.ndb: name, any file type, any offset, hex) for EICAR, wherever it stands.
  await writeFile(
    join(database, 'gateway-test.ndb'),
    `Gateway-Test.EICAR:0:*:${Buffer.from(EICAR, 'latin1').toString('hex')}\n`,
  );
  // Hash signatures (.hdb: MD5, size, name) for the test's own samples.
  const hashes = (options.files ?? []).map(
    ({ name, content }) => `${createHash('md5').update(content).digest('hex')}:${content.length}:${name}`,
  );
  if (hashes.length > 0) await writeFile(join(database, 'gateway-test.hdb'), `${hashes.join('\n')}\n`);
  const socket = join(dir, 'clamd.sock');
  const config = join(dir, 'clamd.conf');
  await writeFile(
    config,
    [
      'Foreground yes',
      `LocalSocket ${socket}`,
      `DatabaseDirectory ${database}`,
      `TemporaryDirectory ${dir}`,
      `PidFile ${join(dir, 'clamd.pid')}`,
      `LogFile ${join(dir, 'clamd.log')}`,
      `StreamMaxLength ${options.streamMaxLength ?? '25M'}`,
      // Only the signatures above: no bytecode or PUA databases are expected.
      'Bytecode no',
      '',
    ].join('\n'),
  );
  const scanner = await startRestartableScanner(
    'clamd',
    [`--config-file=${config}`],
    async () => (await pingClamd({ socket, timeout: 1000 }, 1000)) === null,
    dir,
  );
  return { socket, ...scanner };
}
