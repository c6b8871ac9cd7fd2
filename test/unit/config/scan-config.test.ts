import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../src/config/load-config.ts';
import { redactConfig } from '../../../src/config/redact-config.ts';
import type { GatewayConfig } from '../../../src/config/schema.ts';

const workspace = (extra = '') => `workspaces:
  - identifier: ws-1
    ingestEmail: in@ingest.example
${extra}`;

function parse(text: string): GatewayConfig {
  return parseConfig({ text: `api:\n  mock: true\n${text}`, env: {}, source: 'inline' });
}

function problemsOf(text: string): readonly string[] {
  try {
    parse(text);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe('the scan section', () => {
  it('scans nothing, and tempfails an unanswered scan, when the file says nothing', () => {
    expect(parse(workspace()).scan).toEqual({ unavailable: 'tempfail' });
  });

  it('takes clamd on a socket or on host and port, each with a 30 s default timeout', () => {
    expect(parse(`scan:\n  clamav:\n    socket: /run/clamav/clamd.ctl\n${workspace()}`).scan.clamav).toEqual({
      socket: '/run/clamav/clamd.ctl',
      timeout: 30_000,
    });
    expect(
      parse(`scan:\n  clamav:\n    host: 127.0.0.1\n    port: 3310\n    timeout: 5000\n${workspace()}`).scan
        .clamav,
    ).toEqual({ host: '127.0.0.1', port: 3310, timeout: 5000 });
  });

  it('refuses clamd named both ways, or by half an address', () => {
    expect(
      problemsOf(`scan:\n  clamav:\n    socket: /s\n    host: h\n    port: 1\n${workspace()}`).join('\n'),
    ).toMatch(/scan\.clamav\.socket.*either socket or host and port/);
    expect(problemsOf(`scan:\n  clamav:\n    host: h\n${workspace()}`).join('\n')).toMatch(
      /scan\.clamav\.port.*socket, or by host and port/,
    );
  });

  it('takes rspamd by URL with an optional password, and never prints the password', () => {
    const config = parse(
      `scan:\n  rspamd:\n    url: http://127.0.0.1:11333/\n    password: s3cret\n${workspace()}`,
    );
    expect(config.scan.rspamd).toEqual({
      url: 'http://127.0.0.1:11333',
      password: 's3cret',
      timeout: 30_000,
    });
    expect(JSON.stringify(redactConfig(config))).not.toContain('s3cret');
    expect(redactConfig(config).scan.rspamd?.url).toBe('http://127.0.0.1:11333');
  });

  it('refuses an unknown unavailable policy', () => {
    expect(problemsOf(`scan:\n  unavailable: maybe\n${workspace()}`).join('\n')).toMatch(
      /scan\.unavailable.*tempfail, accept/,
    );
  });

  it('takes workspace policies for the scanners that are configured', () => {
    const config = parse(
      `scan:\n  clamav:\n    socket: /s\n  rspamd:\n    url: http://127.0.0.1:11333\n${workspace('    malware: refuse\n    spam: tag\n')}`,
    );
    expect(config.workspaces[0]).toMatchObject({ malware: 'refuse', spam: 'tag' });
  });

  it('refuses a workspace policy for a scanner that is not configured', () => {
    const problems = problemsOf(workspace('    malware: refuse\n    spam: off\n')).join('\n');
    expect(problems).toMatch(/workspaces\[0\]\.malware.*needs scan\.clamav/);
    expect(problems).toMatch(/workspaces\[0\]\.spam.*needs scan\.rspamd/);
  });

  it('takes hold for both', () => {
    const config = parse(
      `scan:\n  clamav:\n    socket: /s\n  rspamd:\n    url: http://127.0.0.1:11333\n${workspace('    malware: hold\n    spam: hold\n')}`,
    );
    expect(config.workspaces[0]).toMatchObject({ malware: 'hold', spam: 'hold' });
  });
});
