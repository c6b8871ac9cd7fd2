// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the ${VAR} syntax is how a secret reaches the configuration.
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../src/config/load-config.ts';
import { redactConfig } from '../../../src/config/redact-config.ts';

const password = 'relay-pass-0123456789';
const API = 'api: {baseUrl: "https://api.example.com", apiKey: "key-0123"}\n';

function load(notices: string, notifySender = 'always') {
  return parseConfig({
    text: `${API}${notices}\nworkspaces:\n  - {identifier: ws-1, ingestEmail: in@ingest.example, notifySender: ${notifySender}}\n`,
    env: { RELAY_PASSWORD: password },
    source: 'inline',
  });
}

function problemOf(load: () => unknown): string {
  try {
    load();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return String((err as Error).message);
  }
  throw new Error('the configuration loaded');
}

const relay =
  'notices: {smtp: "smtps://intake:${RELAY_PASSWORD}@relay.example:465", from: "Document intake <no-reply@ingest.example>"}';

/** notices and workspaces[].notifySender (README, "Notices to senders"). */
describe('notice configuration', () => {
  it('takes the relay with its login, never prints the password, and defaults to the null envelope sender', () => {
    const config = load(relay);
    expect(config.notices.smtp).toBe(`smtps://intake:${password}@relay.example:465`);
    expect(config.notices.envelopeFrom).toBe('');
    expect(config.workspaces[0]?.notifySender).toBe('always');
    const printed = JSON.stringify(redactConfig(config));
    expect(printed).not.toContain(password);
    expect(printed).toContain('relay.example:465');
  });

  it('needs no relay while no workspace notifies (notifySender defaults to never)', () => {
    const config = parseConfig({
      text: `${API}workspaces:\n  - {identifier: ws-1, ingestEmail: in@ingest.example}\n`,
      env: {},
      source: 'inline',
    });
    expect(config.workspaces[0]?.notifySender).toBeUndefined();
    expect(config.notices.smtp).toBeUndefined();
  });

  it.each([
    ['a workspace that notifies without a relay', () => load('', 'onProblem'), 'workspaces[0].notifySender'],
    ['a relay without a From', () => load('notices: {smtp: "smtp://relay.example:25"}'), 'notices.from'],
    [
      'an http URL as the relay',
      () => load('notices: {smtp: "http://relay.example", from: "a@b.example"}'),
      'notices.smtp',
    ],
    [
      'a From that is no address',
      () => load('notices: {smtp: "smtp://relay.example", from: "Document intake"}'),
      'notices.from',
    ],
    ['an unknown notifySender', () => load(relay, 'sometimes'), 'workspaces[0].notifySender'],
    [
      'a relay URL with a bad port, the password left out of the problem',
      () => load('notices: {smtp: "smtp://u:${RELAY_PASSWORD}@relay.example:99999", from: "a@b.example"}'),
      'notices.smtp',
    ],
  ])('refuses %s', (_name, loading, path) => {
    const problem = problemOf(loading);
    expect(problem).toContain(path);
    expect(problem).not.toContain(password);
  });
});
