import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { Redis } from 'ioredis';
import { SMTPServer } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { startRedis } from '../../harness/redis-server.ts';
import { dataPayload, SmtpSession } from '../../harness/smtp-session.ts';
import { CHUNK_SETTINGS } from '../../scripts/build.ts';
import { fileRoutes } from '../../src/config/schema.ts';
import { createRouteTable } from '../../src/intake/route-table.ts';
import { inspectType } from '../../src/mail/detect/detect-type.ts';
import { BENCH_RECIPIENT, benchConfigFile, numberedRecipient } from '../bench-config.ts';
import { pdfMessage, randomPdf, writeMessageFile } from '../load/pdf-message.ts';
import { runLoad, runOwnClient, smtpSourceArgs } from '../load/smtp-load.ts';
import {
  type CpuProfile,
  fileOf,
  originalFrames,
  ownerOf,
  sourceMapsOnDisk,
  tallyProfile,
} from '../measure/cpu-profile.ts';
import { totals } from '../measure/measure-run.ts';
import { median, type ProcessCounters, processCounters } from '../measure/process-stats.ts';
import { createDrainServer } from '../peers/drain-server.ts';
import { counterValue, emptyBenchRedis, startBenchRedis } from '../peers/gateway-process.ts';
import { uploadRate } from '../peers/slow-mock-api.ts';

/** The benchmark's own pieces (bench/): they must measure what they say. No timing is asserted. */

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-test-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('the drain server (the Node floor)', () => {
  it('counts exactly the messages it answered 250', async () => {
    const drain = createDrainServer();
    const port = await drain.listen(0);
    cleanups.push(() => drain.close());
    const session = new SmtpSession(port);
    expect((await session.reply()).code).toBe(220);
    expect((await session.command('EHLO client.test')).code).toBe(250);
    const codes: number[] = [];
    for (let i = 0; i < 3; i++) {
      await session.command('MAIL FROM:<a@acme.example>');
      await session.command(`RCPT TO:<${numberedRecipient(i + 1)}>`);
      await session.command('DATA');
      codes.push((await session.sendPayload(dataPayload(Buffer.from(`Subject: ${i}\r\n\r\nbody\r\n`)))).code);
    }
    // A transaction abandoned before DATA is not counted.
    await session.command('MAIL FROM:<a@acme.example>');
    await session.command('RSET');
    await session.close();
    expect(codes).toEqual([250, 250, 250]);
    expect(drain.accepted()).toBe(3);
  });
});

describe('the drain server storing once (the floor of store-once)', () => {
  it('answers 250 only once every byte of the message is in Redis', async () => {
    const redis = await startRedis();
    cleanups.push(() => redis.close());
    const client = new Redis(redis.url);
    cleanups.push(async () => {
      client.disconnect();
    });
    const drain = createDrainServer(new Redis(redis.url));
    const port = await drain.listen(0);
    cleanups.push(() => drain.close());
    const session = new SmtpSession(port);
    expect((await session.reply()).code).toBe(220);
    await session.command('EHLO client.test');
    const bodies = [randomPdf(200 * 1024).toString('base64'), 'short body'];
    for (const body of bodies) {
      await session.command('MAIL FROM:<a@acme.example>');
      await session.command(`RCPT TO:<${numberedRecipient(1)}>`);
      await session.command('DATA');
      const reply = await session.sendPayload(dataPayload(Buffer.from(`Subject: s\r\n\r\n${body}\r\n`)));
      expect(reply.code).toBe(250);
    }
    await session.close();
    expect(drain.accepted()).toBe(2);
    const stored = await Promise.all(
      [1, 2].map(async (n) => {
        const fields = await client.hgetallBuffer(`drain:{${n}}:raw`);
        return Buffer.concat(
          Object.keys(fields)
            .sort((a, b) => Number(a) - Number(b))
            .map((key) => fields[key] ?? Buffer.alloc(0)),
        ).toString();
      }),
    );
    expect(stored).toEqual(bodies.map((body) => `Subject: s\r\n\r\n${body}\r\n`));
  });
});

describe("a bench redis-server's reset before each run", () => {
  it('empties it and rewrites its AOF small, so a run stores into what a deployment keeps', async () => {
    const server = await startBenchRedis();
    const client = new Redis(server.url, { maxRetriesPerRequest: 1 });
    cleanups.push(async () => {
      client.disconnect();
      await server.close();
    });
    const persistence = async (field: string) =>
      Number(new RegExp(`${field}:(\\d+)`).exec(await client.info('persistence'))?.[1] ?? Number.NaN);
    const chunk = Buffer.alloc(1024 * 1024, 7);
    for (let i = 0; i < 8; i++) await client.hset('message', String(i), chunk);
    // With fsync every second Redis may hold its AOF buffer back while a background fsync is
    // still running (up to 2 s, on a busy disk): the file reaches its size soon, not at once.
    const written = Date.now();
    while ((await persistence('aof_current_size')) <= 8 * 1024 * 1024 && Date.now() - written < 20_000)
      await new Promise((wake) => setTimeout(wake, 50));
    expect(await persistence('aof_current_size')).toBeGreaterThan(8 * 1024 * 1024);
    const rewritesBefore = await persistence('aof_rewrites');

    await emptyBenchRedis(client);

    expect(await client.dbsize()).toBe(0);
    expect(await persistence('aof_rewrites')).toBe(rewritesBefore + 1);
    expect(await persistence('aof_rewrite_in_progress')).toBe(0);
    expect(await persistence('aof_current_size')).toBeLessThan(64 * 1024);
    // Still the durable server the runs need: AOF on, fsync every second.
    expect(await client.config('GET', 'appendfsync')).toEqual(['appendfsync', 'everysec']);
    expect(await persistence('aof_enabled')).toBe(1);
  });
});

describe('the load', () => {
  it('writes the nth message to the numbered recipient the bench configuration routes', async () => {
    const recipients: string[] = [];
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['AUTH', 'STARTTLS'],
      logger: false,
      onRcptTo(address, _session, callback) {
        recipients.push(address.address);
        callback();
      },
      onData(stream, _session, callback) {
        stream.on('end', () => callback(null));
        stream.resume();
      },
    });
    const port = await new Promise<number>((resolve) =>
      server.listen(0, '127.0.0.1', () => {
        const address = server.server.address();
        resolve(typeof address === 'object' && address ? address.port : 0);
      }),
    );
    cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
    const dir = await tempDir();
    const file = await writeMessageFile(dir, 2048, 'load-test');
    await runLoad({ port, file: file.path, messages: 4, sessions: 2, reuse: true });
    expect(recipients.sort()).toEqual([1, 2, 3, 4].map(numberedRecipient).sort());
    // The client used where smtp-source is not installed writes to the same recipients.
    recipients.length = 0;
    await runOwnClient({ port, file: file.path, messages: 4, sessions: 2, reuse: false });

    expect(recipients.sort()).toEqual([1, 2, 3, 4].map(numberedRecipient).sort());
    const { config } = benchConfigFile({ redisUrl: 'redis://127.0.0.1:1', recipients: 4 });
    const routes = createRouteTable(fileRoutes(config), config.auth.senderAuthentication);
    expect(recipients.map((recipient) => routes.route(recipient)?.config.identifier).sort()).toEqual([
      'ws-1',
      'ws-2',
      'ws-3',
      'ws-4',
    ]);
  });

  it('asks smtp-source for numbered recipients, and reuses connections only when told', () => {
    const options = { port: 2525, file: '/tmp/m.eml', messages: 10, sessions: 20 };
    const reused = smtpSourceArgs({ ...options, reuse: true });
    const single = smtpSourceArgs({ ...options, reuse: false });
    expect(reused).toContain('-N');
    expect(reused).toContain('-d');
    expect(single).not.toContain('-d');
    expect(reused.slice(-3)).toEqual(['-t', BENCH_RECIPIENT, '127.0.0.1:2525']);
  });
});

describe('the bench configuration', () => {
  it('validates, with one workspace per numbered recipient and the rates off', () => {
    const { config } = benchConfigFile({ redisUrl: 'redis://127.0.0.1:1', recipients: 50 });
    expect(config.workspaces).toHaveLength(51);
    expect(config.workspaces.at(-1)).toMatchObject({
      identifier: 'ws-50',
      ingestEmail: '50documents@ingest.test',
    });
    expect(config.smtp.rateLimit).toMatchObject({
      connectionsPerIp: 0,
      messagesPerIp: 0,
      messagesPerSender: 0,
    });
  });

  it('with scanners, asks both and tags spam in every workspace, so no message of a run is refused', () => {
    const { config } = benchConfigFile({
      redisUrl: 'redis://127.0.0.1:1',
      recipients: 3,
      scan: { clamav: { socket: '/tmp/clamd.sock' }, rspamd: { url: 'http://127.0.0.1:11333' } },
    });
    expect(config.scan.clamav?.socket).toBe('/tmp/clamd.sock');
    expect(config.scan.rspamd?.url).toBe('http://127.0.0.1:11333');
    expect(config.workspaces.map((workspace) => workspace.spam)).toEqual(['tag', 'tag', 'tag', 'tag']);
  });
});

describe('the benchmark messages', () => {
  it('carry a PDF the gateway takes for one, of random bytes, different every time', async () => {
    const pdf = randomPdf(100 * 1024);
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pdf.subarray(-6).toString('latin1')).toBe('%%EOF\n');
    expect(Math.abs(pdf.length - 100 * 1024)).toBeLessThan(512);
    // The xref table points at each object.
    const text = pdf.toString('latin1');
    const xref = Number(/startxref\n(\d+)/.exec(text)?.[1]);
    expect(text.slice(xref, xref + 4)).toBe('xref');
    const offsets = [...text.slice(xref).matchAll(/^(\d{10}) 00000 n $/gm)].map((match) => Number(match[1]));
    expect(offsets.map((offset) => text.slice(offset, offset + 7))).toEqual(
      offsets.map((_, index) => `${index + 1} 0 obj`),
    );
    expect((await inspectType({ head: pdf, declaredType: 'application/pdf', fileName: 'a.pdf' })).type).toBe(
      'pdf',
    );
    // Random bytes: no long run of one byte, unlike a padded filler.
    expect(/(.)\1{63}/s.test(text)).toBe(false);
    expect(randomPdf(4096).equals(randomPdf(4096))).toBe(false);
  });

  it('are LF-ended files whose base64 decodes to the PDF; the wire size counts CRLF', () => {
    const message = pdfMessage(10_000, 'sample');
    const text = message.file.toString('latin1');
    expect(text.includes('\r')).toBe(false);
    const body = text.split('Content-Transfer-Encoding: base64\n\n')[1]?.split('\n--')[0] ?? '';
    expect(body.split('\n').every((line) => line.length <= 76)).toBe(true);
    const decoded = Buffer.from(body.replace(/\n/g, ''), 'base64');
    expect(decoded.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(message.wireBytes).toBe(message.file.length + (text.match(/\n/g)?.length ?? 0));
  });
});

describe('the figures', () => {
  it('median takes the middle run, or the mean of the two middle ones', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('counts the accepted messages of the gateway metrics over every reply code', () => {
    const text = [
      '# TYPE ingest_gateway_smtp_messages_total counter',
      'ingest_gateway_smtp_messages_total{outcome="accepted",code="250"} 40',
      'ingest_gateway_smtp_messages_total{outcome="refused",code="550"} 3',
      'ingest_gateway_smtp_messages_total{outcome="accepted",code="251"} 2',
    ].join('\n');
    expect(counterValue(text, 'ingest_gateway_smtp_messages_total', 'accepted')).toBe(42);
    expect(counterValue(text, 'ingest_gateway_smtp_messages_total', 'failed')).toBe(0);
  });

  it("reads a process's user and kernel time and its page faults, and adds them up over processes", async () => {
    // A child that spends its time in the kernel (reading /dev/zero zero-fills the buffer
    // there) and touches 64 MiB of new memory, and one that does neither; both then stopped.
    const busy =
      "const fs=require('fs');const b=Buffer.alloc(1<<20);const fd=fs.openSync('/dev/zero','r');" +
      'for(let i=0;i<3000;i++)fs.readSync(fd,b);Buffer.allocUnsafeSlow(64<<20).fill(1);' +
      "console.log('done');setInterval(()=>{},1000);";
    const idle = "console.log('done');setInterval(()=>{},1000);";
    const children = [busy, idle].map((script) =>
      spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] }),
    );
    try {
      await Promise.all(
        children.map((child) => new Promise<void>((resolve) => child.stdout?.once('data', () => resolve()))),
      );
      // Stopped, neither child's counters move between the reads compared below.
      for (const child of children) child.kill('SIGSTOP');
      const [busyPid, idlePid] = children.map((child) => child.pid ?? 0);
      const state = async (pid: number) => (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.[0];
      for (const pid of [busyPid ?? 0, idlePid ?? 0])
        while ((await state(pid)) !== 'T') await new Promise((wake) => setTimeout(wake, 10));
      const sumOf = (a: ProcessCounters, b: ProcessCounters) => ({
        userMs: a.userMs + b.userMs,
        systemMs: a.systemMs + b.systemMs,
        minorFaults: a.minorFaults + b.minorFaults,
      });
      const read = async () => {
        const busyCounters = await processCounters(busyPid ?? 0);
        const idleCounters = await processCounters(idlePid ?? 0);
        return { busyCounters, idleCounters, sum: sumOf(busyCounters, idleCounters) };
      };
      const before = await read();
      expect(before.busyCounters.systemMs).toBeGreaterThan(0);
      // 64 MiB is 16,384 pages of 4 KiB, each faulted in when first written.
      expect(before.busyCounters.minorFaults).toBeGreaterThan(16_384);
      expect(before.idleCounters.minorFaults).toBeLessThan(before.busyCounters.minorFaults - 16_384);
      // A stopped process's helper threads may still be settling, and the kernel splits its
      // run time into user and kernel parts afresh at each read: the counters only ever
      // grow, so the total read between two readings of its parts lies between their sums.
      const sum = await totals([busyPid ?? 0, idlePid ?? 0]);
      const after = await read();
      for (const field of ['userMs', 'systemMs', 'minorFaults'] as const) {
        expect(sum[field]).toBeGreaterThanOrEqual(before.sum[field]);
        expect(sum[field]).toBeLessThanOrEqual(after.sum[field]);
      }
      // Both processes are in the total, not one: the busy one's faults alone exceed the idle one's.
      expect(sum.minorFaults).toBeGreaterThan(before.busyCounters.minorFaults);
      expect(sum.minorFaults - before.busyCounters.minorFaults).toBeGreaterThanOrEqual(
        before.idleCounters.minorFaults,
      );
      expect(await totals([])).toEqual({ userMs: 0, systemMs: 0, minorFaults: 0 });
    } finally {
      for (const child of children) child.kill('SIGKILL');
    }
  });

  it('rates uploads from a given arrival to the last', () => {
    expect(uploadRate([0, 100, 200, 300, 400], 1)).toBe(10);
    expect(uploadRate([5], 0)).toBeNaN();
  });
});

describe('the CPU profile tally', () => {
  const root = '/repo/';
  const profile: CpuProfile = {
    startTime: 1_000,
    nodes: [
      { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 }, children: [2, 5, 6] },
      {
        id: 2,
        callFrame: {
          functionName: 'sendCommand',
          url: 'file:///repo/node_modules/ioredis/built/Redis.js',
          lineNumber: 9,
        },
        children: [3],
      },
      { id: 3, callFrame: { functionName: 'write', url: 'node:net', lineNumber: 1 }, children: [4] },
      { id: 4, callFrame: { functionName: 'writeBuffer', url: '', lineNumber: -1 } },
      { id: 5, callFrame: { functionName: '(garbage collector)', url: '', lineNumber: -1 } },
      { id: 6, callFrame: { functionName: '(idle)', url: '', lineNumber: -1 } },
    ],
    // at 1000+: 2000 (4), 3000 (4), 4000 (2), 5000 (5), 6000 (6), 7000 (4)
    samples: [4, 4, 2, 5, 6, 4],
    timeDeltas: [1000, 1000, 1000, 1000, 1000, 1000],
  };

  it('names owners: packages, gateway files, node, GC', () => {
    expect(ownerOf('file:///repo/node_modules/@zone-eu/mailsplit/lib/x.js', 'f', root)).toBe(
      '@zone-eu/mailsplit',
    );
    expect(ownerOf('file:///repo/src/intake/store-and-walk.ts', 'f', root)).toBe(
      'gateway src/intake/store-and-walk.ts',
    );
    expect(ownerOf('node:internal/buffer', 'concat', root)).toBe('node (built-in modules)');
    expect(ownerOf('', '(garbage collector)', root)).toBe('GC');
    expect(ownerOf('', 'writeBuffer', root)).toBe('native');
    expect(fileOf('file:///repo/node_modules/@zone-eu/mailsplit/lib/x.js', root)).toBe('lib/x.js');
    expect(fileOf('file:///repo/node_modules/ioredis/built/Redis.js', root)).toBe('built/Redis.js');
    expect(fileOf('file:///repo/src/intake/store-and-walk.ts', root)).toBe('src/intake/store-and-walk.ts');
    expect(fileOf('node:net', root)).toBe('node:net');
  });

  it('leaves native code, node built-ins and scripts without a map as they are', () => {
    expect(originalFrames(profile, () => undefined)).toEqual(profile);
    expect(tallyProfile(profile, root).functions.map((entry) => entry.name)).toContain(
      'sendCommand (built/Redis.js:10)',
    );
  });

  it('counts native code and node built-ins to their caller, idle apart, within the window', () => {
    const whole = tallyProfile(profile, root);
    expect(whole.idleMs).toBe(1);
    expect(whole.busyMs).toBe(5);
    expect(whole.owners).toEqual([
      { owner: 'ioredis', ms: 4 },
      { owner: 'GC', ms: 1 },
    ]);
    expect(whole.functions[0]).toEqual({
      name: 'writeBuffer',
      owner: 'native',
      onBehalfOf: 'ioredis',
      ms: 3,
    });

    const window = tallyProfile(profile, root, { fromUs: 3_500, toUs: 5_500 });
    expect(window.busyMs).toBe(2);
    expect(window.owners).toEqual([
      { owner: 'ioredis', ms: 1 },
      { owner: 'GC', ms: 1 },
    ]);
  });

  it('attributes the frames of a bundle chunk to the package or source they were built from', async () => {
    // A bundle built as scripts/build.ts builds dist/ (chunks, whitespace removed, linked maps
    // without the sources), run under --cpu-prof: a package's function, native code it calls,
    // and a source file's function, all in one chunk loaded by import().
    const dir = await realpath(await tempDir());
    await mkdir(join(dir, 'node_modules/hotpkg'), { recursive: true });
    await mkdir(join(dir, 'src'));
    await writeFile(join(dir, 'node_modules/hotpkg/package.json'), '{"name":"hotpkg","main":"index.js"}');
    await writeFile(
      join(dir, 'node_modules/hotpkg/index.js'),
      [
        "'use strict';",
        'exports.spin = function spin(ms) {',
        '  const end = Date.now() + ms;',
        '  let x = 0;',
        '  while (Date.now() < end) for (let i = 0; i < 1e5; i++) x = (x * 31 + i) % 1000003;',
        '  return x;',
        '};',
        'exports.digest = function digest(ms) {',
        "  const { createHash } = process.getBuiltinModule('node:crypto');",
        '  const data = Buffer.alloc(1 << 20, 7);',
        '  const end = Date.now() + ms;',
        '  let n = 0;',
        "  while (Date.now() < end) n += createHash('sha256').update(data).digest()[0];",
        '  return n;',
        '};',
        '',
      ].join('\n'),
    );
    await writeFile(
      join(dir, 'src/own-loop.ts'),
      [
        "import { digest, spin } from 'hotpkg';",
        '',
        'export function ownLoop(ms: number): number {',
        '  const end = Date.now() + ms;',
        '  let z = 0;',
        '  while (Date.now() < end) for (let i = 0; i < 1e5; i++) z = (z ^ (i * 13)) % 65521;',
        '  return z;',
        '}',
        '',
        'export function all(ms: number): number {',
        '  return spin(ms) + digest(ms) + ownLoop(ms);',
        '}',
        '',
      ].join('\n'),
    );
    await writeFile(
      join(dir, 'src/main.ts'),
      "const { all } = await import('./own-loop.ts');\nconsole.log(all(250));\n",
    );
    await build({
      absWorkingDir: dir,
      entryPoints: { main: 'src/main.ts' },
      outdir: join(dir, 'dist'),
      ...CHUNK_SETTINGS,
      logLevel: 'silent',
    });
    const chunks = (await readdir(join(dir, 'dist'))).filter((name) => name.startsWith('own-loop-'));
    expect(chunks).toHaveLength(2); // the chunk and its map
    await promisify(execFile)(process.execPath, [
      '--cpu-prof',
      `--cpu-prof-dir=${join(dir, 'profile')}`,
      join(dir, 'dist/main.js'),
    ]);
    const [name = ''] = await readdir(join(dir, 'profile'));
    const profile = JSON.parse(await readFile(join(dir, 'profile', name), 'utf8')) as CpuProfile;
    const root = `${dir}/`;

    // As the chunk: all of it the bundle's.
    const bundled = tallyProfile(profile, root);
    const chunkOwner = `gateway dist/${chunks.find((chunk) => chunk.endsWith('.js'))}`;
    expect(bundled.owners[0]?.owner).toBe(chunkOwner);
    expect(bundled.owners.map((entry) => entry.owner)).not.toContain('hotpkg');

    // Through the chunk's source map: the package and the source file.
    const tally = tallyProfile(originalFrames(profile, sourceMapsOnDisk()), root);
    const owners = new Map(tally.owners.map((entry) => [entry.owner, entry.ms]));
    expect(owners.get('hotpkg')).toBeGreaterThan(200);
    expect(owners.get('gateway src/own-loop.ts')).toBeGreaterThan(100);
    // Every function of the chunk is read through the map; what may stay with the chunk is what
    // no source wrote: its module body, which has no name, and esbuild's runtime helpers
    // (`__toESM`, `__commonJS`, …), which have no mapping (a sample or two of evaluating the
    // imports when the machine is busy).
    const unmapped = tally.functions.filter((entry) => entry.owner === chunkOwner);
    const unmappedNames = unmapped.map((entry) => entry.name.split(' ')[0] ?? '');
    expect(unmappedNames.filter((name) => name !== '(anonymous)' && !/^__[a-zA-Z]+$/.test(name))).toEqual([]);
    expect(owners.get(chunkOwner) ?? 0).toBeLessThan(20);
    const functions = tally.functions.map(({ name, owner }) => `${owner}: ${name}`);
    // esbuild names the package's `spin` spin2 in the chunk, to keep the bundle's names apart.
    expect(functions).toContain('hotpkg: spin (index.js:2)');
    expect(functions).toContain('gateway src/own-loop.ts: ownLoop (src/own-loop.ts:3)');
    // The hashing is native code and node's modules, counted to the package that called it.
    const hashing = tally.functions.filter(
      (entry) => entry.owner === 'native' || entry.owner === 'node (built-in modules)',
    );
    expect(hashing.filter((entry) => entry.onBehalfOf === 'hotpkg').length).toBeGreaterThan(0);
  });
});
