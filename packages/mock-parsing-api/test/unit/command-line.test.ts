import { describe, expect, it } from 'vitest';
import { HELP, readCommandLine } from '../../src/command-line.ts';

const KEY = { PARSER_API_KEY: 'env-key' };

describe('readCommandLine', () => {
  it('runs on loopback port 8026 with the key from PARSER_API_KEY by default', () => {
    expect(readCommandLine([], KEY)).toEqual({
      kind: 'run',
      settings: {
        host: '127.0.0.1',
        port: 8026,
        workspacesFile: undefined,
        logLevel: 'info',
        mock: {
          apiKey: 'env-key',
          retainFileBytes: false,
          processingMs: 0,
          documentList: { items: 'document', pageSize: null },
        },
      },
    });
  });

  it('takes every option, the flag over the environment', () => {
    const args = [
      ['--host', '0.0.0.0'],
      ['--port', '0'],
      ['--api-key', 'flag-key'],
      ['--workspaces', 'ws.yaml'],
      ['--organization', 'acme'],
      ['--resthook-signature-key', 'flag-signing'],
      ['--processing-ms', '250'],
      ['--list-items', 'meta'],
      ['--list-page-size', '2'],
    ].flat();
    const env = { ...KEY, MOCK_RESTHOOK_SIGNATURE_KEY: 'env-signing', LOG_LEVEL: 'debug' };
    expect(readCommandLine(args, env)).toEqual({
      kind: 'run',
      settings: {
        host: '0.0.0.0',
        port: 0,
        workspacesFile: 'ws.yaml',
        logLevel: 'debug',
        mock: {
          apiKey: 'flag-key',
          retainFileBytes: false,
          processingMs: 250,
          documentList: { items: 'meta', pageSize: 2 },
          resthookSignatureKey: 'flag-signing',
          organization: { identifier: 'acme', name: 'acme' },
        },
      },
    });
  });

  it('takes the signing key from MOCK_RESTHOOK_SIGNATURE_KEY', () => {
    const command = readCommandLine([], { ...KEY, MOCK_RESTHOOK_SIGNATURE_KEY: 'env-signing' });
    expect(command.kind === 'run' && command.settings.mock.resthookSignatureKey).toBe('env-signing');
  });

  it.each([['--help'], ['-h'], ['--port', '70000', '--help']])('answers %s with the help', (...args) => {
    expect(readCommandLine(args, {})).toEqual({ kind: 'help', text: HELP });
  });

  it.each([
    { args: [], env: {}, problem: /--api-key KEY or PARSER_API_KEY/ },
    { args: ['--port', '70000'], env: KEY, problem: /--port must be a whole number from 0 to 65535/ },
    { args: ['--port', '80a'], env: KEY, problem: /--port .* not "80a"/ },
    { args: ['--processing-ms', '60001'], env: KEY, problem: /--processing-ms .* 0 to 60000/ },
    { args: ['--list-page-size', '0'], env: KEY, problem: /--list-page-size .* 1 to 1000/ },
    { args: ['--list-items', 'rows'], env: KEY, problem: /--list-items must be document or meta/ },
    { args: ['--colour'], env: KEY, problem: /--colour/ },
    { args: ['extra'], env: KEY, problem: /extra/ },
  ])('refuses $args: $problem', ({ args, env, problem }) => {
    const command = readCommandLine(args, env);
    expect(command.kind).toBe('usage-error');
    expect(command.kind === 'usage-error' && command.problems.join('\n')).toMatch(problem);
  });

  it('lists every problem at once', () => {
    const command = readCommandLine(['--port', 'x', '--list-items', 'rows'], {});
    expect(command.kind === 'usage-error' && command.problems).toHaveLength(3);
  });
});
