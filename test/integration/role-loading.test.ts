import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type BuiltGateway, buildGatewayCopy } from '../../harness/built-gateway.ts';
import { type DaemonProcess, startDaemon, writeDaemonConfig } from '../../harness/daemon-process.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { deliver } from '../../harness/smtp-session.ts';
import { zipArchive } from '../../harness/zip-archive.ts';

const recorder = fileURLToPath(new URL('../../harness/record-loaded-modules.ts', import.meta.url));

/**
 * An idle daemon's memory is mostly the modules it has loaded: each role loads only its own
 * (an SMTP-only daemon neither the uploader nor the parsing API's HTTP client, a worker not
 * smtp-server), the MIME walk loads at start (not with the first message: libmime builds its
 * GBK tables as it loads, tens of ms that would stall the first sessions), and Bull Board, which few
 * operators open, on its first request. The daemon runs as the image runs it, bundled
 * (scripts/build.ts), with a hook that lists every file it loads; each of the bundle's files
 * stands for the sources bundled into it.
 */
describe('which modules each role loads', () => {
  let redis: TestRedis;
  let dir: string;
  let built: BuiltGateway;
  let daemon: DaemonProcess | undefined;

  beforeAll(async () => {
    redis = await startRedis();
    dir = await mkdtemp(join(tmpdir(), 'role-loading-'));
    built = await buildGatewayCopy();
  }, 60_000);
  afterEach(async () => {
    daemon?.signal('SIGKILL');
    await daemon?.exited;
    daemon = undefined;
  });
  afterAll(async () => {
    await redis?.close();
    await built?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Starts the daemon in `role`; `loaded()` lists the modules it has loaded so far. */
  async function start(role: 'smtp' | 'worker') {
    const configPath = join(dir, `${role}.yaml`);
    const listPath = join(dir, `${role}.modules`);
    await writeDaemonConfig(configPath, {
      redis: { url: redis.url },
      // The parsing service, not the mock (which would load an HTTP client of its own); this
      // test never uploads, so nothing needs to answer there.
      api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'role-loading-key' },
      // Notices on, so the test shows where their mail client loads; nothing is sent.
      notices: { smtp: 'smtp://127.0.0.1:9', from: 'Intake <no-reply@ingest.test>' },
      // With discovery, an SMTP daemon follows the route table in Redis, and only a process
      // that uploads reads the service.
      discovery: { organization: 'role-loading-org', every: 60_000 },
      workspaces: [
        {
          identifier: 'ws',
          ingestEmail: 'documents@ingest.test',
          archives: 'unpack',
          notifySender: 'always',
        },
      ],
    });
    daemon = await startDaemon(
      configPath,
      role,
      'info',
      { NODE_OPTIONS: `--import ${recorder}`, LOADED_MODULES_FILE: listPath },
      built.cli,
    );
    const loaded = async () =>
      (await readFile(listPath, 'utf8')).split('\n').filter(Boolean).flatMap(built.sourcesOf);
    return { daemon, loaded };
  }

  const from = (urls: string[], ...parts: string[]) =>
    urls.filter((url) => parts.some((part) => url.includes(part)));
  const uploader = [
    '/src/uploader/upload-worker.ts',
    '/src/parsing-api/api-transport.ts',
    '/src/parsing-api/organization-catalogue.ts',
    '/src/intake/discovery-refresher.ts',
    '/node_modules/undici/',
  ];
  const board = ['/node_modules/@bull-board/', '/node_modules/hono/', '/node_modules/@hono/'];
  // The notices' sender: the SMTP role queues notices, the worker sends them through nodemailer.
  // (smtp-server itself loads nodemailer's shared helpers, not its transport.)
  const noticeSender = [
    '/src/notices/notice-worker.ts',
    '/node_modules/nodemailer/dist/esm/smtp-transport/',
    '/node_modules/nodemailer/dist/esm/mail-composer/',
  ];
  const walk = ['/src/mail/walk-message.ts', '/node_modules/@zone-eu/mailsplit/', '/node_modules/libmime/'];
  // PKI.js opens S/MIME: loaded with the first S/MIME entity, never by mail without one.
  const smime = ['/src/mail/containers/open-smime.ts', '/node_modules/pkijs/', '/node_modules/asn1js/'];

  it('an SMTP daemon loads the MIME walk at start, Bull Board when asked, never the uploader or the notices’ mail client', async () => {
    const { daemon, loaded } = await start('smtp');
    const idle = await loaded();
    // The hook saw the daemon's dependencies: the list is not empty for another reason.
    expect(from(idle, '/node_modules/smtp-server/')).not.toEqual([]);
    expect(from(idle, ...uploader)).toEqual([]);
    expect(from(idle, ...board)).toEqual([]);
    expect(from(idle, ...noticeSender)).toEqual([]);
    expect(from(idle, ...smime)).toEqual([]);
    // zod's English messages only: no other language's (the mock API's classic zod included).
    expect(from(idle, '/node_modules/zod/v4/locales/').filter((url) => !url.endsWith('/en.js'))).toEqual([]);
    for (const part of walk) expect(from(idle, part)).not.toEqual([]);
    // Its schemas are zod/mini: zod's classic API (a method table per schema kind) stays unloaded.
    expect(from(idle, '/node_modules/zod/v4/classic/')).toEqual([]);

    // A message's ZIP archive is opened in the container worker.
    const message = await composeMessage({
      to: 'documents@ingest.test',
      attachments: [
        {
          filename: 'invoices.zip',
          content: zipArchive([['invoice.pdf', uniquePdf('role-loading')]]),
          contentType: 'application/zip',
        },
      ],
    });
    const { data } = await deliver(daemon.smtpPort, { to: ['documents@ingest.test'], message });
    expect(data).toMatchObject({ code: 250 });
    const afterMessage = await loaded();
    expect(from(afterMessage, '/src/mail/containers/read-zip.ts')).not.toEqual([]);
    expect(from(afterMessage, ...uploader)).toEqual([]);
    expect(from(afterMessage, ...noticeSender)).toEqual([]);
    expect(from(afterMessage, ...smime)).toEqual([]);

    // Bull Board serves its UI from its own package, the console its style from dist/assets.
    const page = await fetch(new URL('/admin/queues', daemon.httpUrl));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('ingest-gateway');
    const style = await fetch(new URL('/console/assets/console.css', daemon.httpUrl));
    expect(style.status).toBe(200);
    expect(style.headers.get('content-type')).toContain('text/css');
    expect(from(await loaded(), '/node_modules/@bull-board/api/')).not.toEqual([]);
    expect(from(await loaded(), ...uploader)).toEqual([]);
  }, 30_000);

  it('a worker loads the uploader and the notices’ mail client, not smtp-server', async () => {
    const { loaded } = await start('worker');
    const idle = await loaded();
    expect(from(idle, '/src/uploader/upload-worker.ts')).not.toEqual([]);
    for (const part of noticeSender) expect(from(idle, part), part).not.toEqual([]);
    expect(from(idle, '/node_modules/smtp-server/', '/src/smtp/create-smtp-server.ts')).toEqual([]);
    expect(from(idle, '/node_modules/zod/v4/classic/')).toEqual([]);
  }, 30_000);
});
