import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli-process.ts';

/**
 * The command line as a new user meets it, through the real binary: --help on every command,
 * --version, and usage errors (unknown options and commands, missing files, missing or bad
 * values) as one line, the usage, and exit 2, never a stack trace.
 */

/** A line of a Node stack trace: a usage error must never print one. */
const stackLine = /^\s+at .+:\d+:\d+\)?$/m;

describe('ingest-gateway --help', () => {
  it.each([
    { args: [], usage: 'ingest-gateway [options] [command]', mentions: ['start', 'send', 'workspace'] },
    {
      args: ['start'],
      usage: 'ingest-gateway start [--config FILE] [--role all|smtp|worker]',
      mentions: ['--role <ROLE>'],
    },
    {
      args: ['check-config'],
      usage: 'ingest-gateway check-config [--config FILE]',
      mentions: ['--config <FILE>'],
    },
    {
      args: ['mock-api'],
      usage: 'ingest-gateway mock-api [--host H] [--port N]',
      mentions: ['--processing-ms <N>', '--api-key <KEY>'],
    },
    {
      args: ['send'],
      usage: 'ingest-gateway send --server HOST:PORT --from ADDR --to ADDR',
      mentions: [
        '--cc <ADDR>',
        '--header <"NAME: VALUE">',
        '--html <HTML>',
        '--tls-insecure',
        '--wait [SECONDS]',
      ],
    },
    { args: ['failed'], usage: 'ingest-gateway failed list|retry', mentions: ['list', 'retry'] },
    {
      args: ['failed', 'list'],
      usage: 'ingest-gateway failed list [--json] [--config FILE]',
      mentions: ['--json'],
    },
    {
      args: ['failed', 'retry'],
      usage: 'ingest-gateway failed retry (JOB_ID... | --all)',
      mentions: ['--all'],
    },
    {
      args: ['held'],
      usage: 'ingest-gateway held list|release|discard',
      mentions: ['list', 'release', 'discard'],
    },
    {
      args: ['held', 'release'],
      usage: 'ingest-gateway held release ID [--allow-sender | --allow-domain]',
      mentions: ['--allow-sender', '--allow-domain', '--http <URL>'],
    },
    {
      args: ['workspace'],
      usage: 'ingest-gateway workspace get|update|sync',
      mentions: ['get', 'update', 'sync'],
    },
    {
      args: ['workspace', 'get'],
      usage: 'ingest-gateway workspace get ID [--config FILE]',
      mentions: ['--config <FILE>'],
    },
    {
      args: ['workspace', 'update'],
      usage: 'ingest-gateway workspace update ID',
      mentions: ['--whitelist <RULE,...>', '--reject-duplicates <BOOL>'],
    },
    {
      args: ['workspace', 'sync'],
      usage: 'ingest-gateway workspace sync [--config FILE] [--write]',
      mentions: ['--write'],
    },
  ])('$args --help prints the usage and exits 0', async ({ args, usage, mentions }) => {
    const run = await runCli([...args, '--help']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout.split('\n')[0]).toContain(`Usage: ${usage}`);
    for (const text of mentions) expect(run.stdout).toContain(text);
  });

  it('help COMMAND prints the same as COMMAND --help', async () => {
    const [viaCommand, viaOption] = await Promise.all([runCli(['help', 'send']), runCli(['send', '--help'])]);
    expect(viaCommand.code).toBe(0);
    expect(viaCommand.stdout).toBe(viaOption.stdout);
  });

  it('--version prints the version of package.json', async () => {
    const { version } = JSON.parse(await readFile('package.json', 'utf8')) as { version: string };
    const run = await runCli(['--version']);
    expect(run).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });
});

describe('ingest-gateway usage errors', () => {
  it.each([
    {
      args: ['start', '--confg', 'x.yaml'],
      error: "error: unknown option '--confg' (did you mean --config?)",
      usage: 'ingest-gateway start',
    },
    {
      args: ['send', '--too', 'a@b.example'],
      error: "error: unknown option '--too' (did you mean --to?)",
      usage: 'ingest-gateway send',
    },
    {
      args: ['failed', 'list', '--jsn'],
      error: "error: unknown option '--jsn' (did you mean --json?)",
      usage: 'ingest-gateway failed list',
    },
    {
      args: ['strat'],
      error: "error: unknown command 'strat' (did you mean start?)",
      usage: 'ingest-gateway [options] [command]',
    },
    {
      args: ['failed', 'lst'],
      error: "error: unknown command 'lst' (did you mean list?)",
      usage: 'ingest-gateway failed',
    },
    {
      args: ['workspace', 'sycn'],
      error: "error: unknown command 'sycn' (did you mean sync?)",
      usage: 'ingest-gateway workspace',
    },
    {
      args: ['check-config', '--config', 'no/such.yaml'],
      error:
        "error: option '-c, --config <FILE>' argument 'no/such.yaml' is invalid. no such file: no/such.yaml",
      usage: 'ingest-gateway check-config',
    },
    {
      args: [
        'send',
        '--server',
        '127.0.0.1:2525',
        '--from',
        'a@b.example',
        '--to',
        'c@d.example',
        '--attach',
        'no/such.pdf',
      ],
      error: "error: option '--attach <FILE>' argument 'no/such.pdf' is invalid. no such file: no/such.pdf",
      usage: 'ingest-gateway send',
    },
    {
      args: ['send', '--server', '127.0.0.1:2525', '--from', 'a@b.example'],
      error: "error: required option '--to <ADDR>' not specified",
      usage: 'ingest-gateway send',
    },
    {
      args: ['send', '--server', 'localhost', '--from', 'a@b.example', '--to', 'c@d.example'],
      error: 'must be HOST:PORT',
      usage: 'ingest-gateway send',
    },
    {
      args: [
        'send',
        '--server',
        '127.0.0.1:2525',
        '--from',
        'a@b.example',
        '--to',
        'c@d.example',
        '--header',
        'X-Bad',
      ],
      error: 'expected "Name: value"',
      usage: 'ingest-gateway send',
    },
    {
      args: [
        'send',
        '--server',
        '127.0.0.1:2525',
        '--from',
        'a@b.example',
        '--to',
        'c@d.example',
        '--wait',
        '0',
      ],
      error: 'must be a number of seconds above 0',
      usage: 'ingest-gateway send',
    },
    {
      args: ['start', '--role', 'boss'],
      error: 'Allowed choices are all, smtp, worker.',
      usage: 'ingest-gateway start',
    },
    {
      args: ['mock-api', '--port', '70000'],
      error: 'must be a port number',
      usage: 'ingest-gateway mock-api',
    },
    {
      args: ['failed', 'retry'],
      error: 'error: failed retry needs job ids or --all',
      usage: 'ingest-gateway failed retry',
    },
    {
      args: ['failed', 'retry', 'job-1', '--all'],
      error: 'error: give job ids or --all, not both',
      usage: 'ingest-gateway failed retry',
    },
    {
      args: ['held', 'release', 'm1', '--allow-sender', '--allow-domain'],
      error: 'error: give --allow-sender or --allow-domain, not both',
      usage: 'ingest-gateway held release',
    },
    {
      args: ['held', 'discard'],
      error: "error: missing required argument 'ID'",
      usage: 'ingest-gateway held discard',
    },
    {
      args: ['workspace', 'get'],
      error: "error: missing required argument 'ID'",
      usage: 'ingest-gateway workspace get',
    },
  ])('$args: "$error", the usage, exit 2', async ({ args, error, usage }) => {
    const run = await runCli(args, { env: { PARSER_API_KEY: '' } });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    const [first, ...rest] = run.stderr.split('\n');
    expect(first).toContain(error);
    expect(rest.join('\n')).toContain(`Usage: ${usage}`);
    expect(run.stderr).not.toMatch(stackLine);
  });

  it('no command at all prints the usage on stderr and exits 2', async () => {
    const run = await runCli([]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Usage: ingest-gateway [options] [command]');
  });

  it('mock-api without a key says how to give one, exit 2', async () => {
    const run = await runCli(['mock-api', '--port', '0'], { env: { PARSER_API_KEY: '' } });
    expect(run.code).toBe(2);
    expect(run.stderr.split('\n')[0]).toBe(
      'error: give the key clients must send: --api-key KEY or PARSER_API_KEY',
    );
  });
});
