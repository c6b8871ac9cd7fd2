import { describe, expect, it } from 'vitest';
import { RefusalError } from '../../../src/errors.ts';
import { textOfHtml } from '../../../src/intake/body-text.ts';
import { type DecideInput, decide } from '../../../src/intake/decide.ts';
import {
  FORWARDING_PROVIDERS,
  forwardingProviderOf,
  readConfirmation,
} from '../../../src/intake/forwarding-confirmation.ts';
import type { IntakeWorkspace } from '../../../src/intake/intake-settings-schema.ts';
import type { LeafPart } from '../../../src/mail/leaf-part.ts';
import type { AdmittingWorkspace } from '../../../src/sender/admit-sender.ts';
import type { AuthenticationResults } from '../../../src/sender/authentication-results.ts';
import { compileAllowList } from '../../../src/sender/compile-allow-list.ts';
import { loadMailauth } from '../../../src/sender/load-mailauth.ts';
import { parseFromHeader } from '../../../src/sender/parse-from-header.ts';

const { alignsRelaxed } = await loadMailauth();

const gmail = FORWARDING_PROVIDERS.find((provider) => provider.name === 'Gmail');
if (!gmail) throw new Error('no Gmail provider');

const GMAIL_TEXT = [
  'ann@gmail.com has requested to automatically forward mail to your email',
  'address invoices@ingest.example.',
  'Confirmation code: 891234567',
  '',
  'To allow ann@gmail.com to automatically forward mail to your address,',
  'please click the link below to confirm the request:',
  '',
  'https://mail-settings.google.com/mail/vf-%5BANGjdJ8abc%5D-aW52b2ljZXM',
  '',
  'If you click the link and it appears to be broken, please copy and paste it',
  'into a new browser window.',
].join('\n');

describe('forwardingProviderOf', () => {
  it.each([
    ['Gmail Team <forwarding-noreply@google.com>', 'Gmail'],
    ['FORWARDING-NOREPLY@Google.COM', 'Gmail'],
    ['forwarding-noreply@google.com.evil.example', null],
    ['noreply@google.com', null],
    ['Ann <ann@acme.example>', null],
    ['', null],
  ])('%s: %s', (from, provider) => {
    expect(forwardingProviderOf(parseFromHeader(from === '' ? [] : [from]))?.name ?? null).toBe(provider);
  });
});

describe('readConfirmation', () => {
  it.each([
    {
      name: 'code from the subject, link from the text',
      subject: '(#891234567) Gmail Forwarding Confirmation - Receive Mail from ann@gmail.com',
      text: GMAIL_TEXT,
      code: '891234567',
      link: 'https://mail-settings.google.com/mail/vf-%5BANGjdJ8abc%5D-aW52b2ljZXM',
    },
    {
      name: 'code from the text when the subject has none (another language)',
      subject: 'Bestätigung der Gmail-Weiterleitung',
      text: GMAIL_TEXT,
      code: '891234567',
      link: 'https://mail-settings.google.com/mail/vf-%5BANGjdJ8abc%5D-aW52b2ljZXM',
    },
    {
      name: 'no text read: the subject still gives the code',
      subject: '(#123456) Gmail',
      text: null,
      code: '123456',
      link: null,
    },
    {
      name: 'a link to another host is not taken',
      subject: null,
      text: 'Code: 9999999 https://evil.example/mail/vf-x',
      code: '9999999',
      link: null,
    },
  ])('$name', ({ subject, text, code, link }) => {
    expect(readConfirmation(gmail, subject, text)).toEqual({ provider: 'Gmail', code, link, text });
  });

  it('keeps at most 8000 characters of the text', () => {
    expect(readConfirmation(gmail, null, 'x'.repeat(9000)).text).toHaveLength(8000);
  });
});

describe('textOfHtml', () => {
  it.each([
    ['<p>Code: <b>123</b></p><p>next</p>', 'Code: 123\nnext'],
    [
      '<a href="https://mail-settings.google.com/mail/vf-1">confirm</a>',
      'confirm https://mail-settings.google.com/mail/vf-1',
    ],
    ['<a href="https://x.example/a">https://x.example/a</a>', 'https://x.example/a'],
    [
      '<style>p{}</style><script>alert(1)</script>A &amp; B &#65;&#x42; &bogus; &#99999999;',
      'A & B AB &bogus; &#99999999;',
    ],
  ])('%s', (html, text) => {
    expect(textOfHtml(html)).toBe(text);
  });
});

const body: LeafPart = {
  index: 0,
  partNumber: '1',
  declaredType: 'text/plain',
  disposition: null,
  fileName: null,
  contentId: null,
  depth: 0,
  role: 'body',
  size: 400,
  sha256: '',
  detectedType: null,
  bytesType: null,
  stored: true,
  exclusion: null,
  textContent: false,
  path: 'part 1',
  container: null,
  inArchive: false,
};
const pdf: LeafPart = {
  ...body,
  index: 1,
  partNumber: '2',
  declaredType: 'application/pdf',
  disposition: 'attachment',
  fileName: 'x.pdf',
  role: 'candidate',
  sha256: 'a'.repeat(64),
  detectedType: 'pdf',
  bytesType: 'application/pdf',
  path: 'part 2',
};

function workspace(
  identifier: string,
  rules: string[] | null,
  unlistedSenders: 'refuse' | 'hold' = 'refuse',
  bodyAsDocument: IntakeWorkspace['bodyAsDocument'] = 'never',
): AdmittingWorkspace<IntakeWorkspace> {
  return {
    config: {
      identifier,
      whitelistIngestAddresses: rules,
      unlistedSenders,
      archives: 'skip',
      bodyAsDocument,
      encryptedPdf: 'skip',
    },
    admits: compileAllowList(rules),
    policy: 'unused by decide',
  };
}

function input(
  workspaces: AdmittingWorkspace<IntakeWorkspace>[],
  parts: LeafPart[],
  from: string,
): DecideInput {
  return {
    queueId: 'q1',
    walk: {
      messageId: 'm1@google.com',
      subject: '(#891234567) Gmail Forwarding Confirmation - Receive Mail from ann@gmail.com',
      fromHeaders: [from],
      parts,
      htmlCids: new Set(),
    },
    transaction: {
      remoteAddress: '192.0.2.7',
      helo: 'mail-sor-f69.google.com',
      mailFrom: 'ann+caf_=invoices=ingest.example@gmail.com',
      workspaces,
      rcptTo: ['invoices@ingest.example'],
    },
    authentication: null,
    size: 4000,
    rawSha256: 'b'.repeat(64),
    now: '2026-11-28T00:00:00.000Z',
    publicUrl: 'http://gw.example:8025',
    policy: { maxAttachments: 10, defaultMode: 'off', trustedArcSealers: new Set() },
    scan: null,
    bodyText: GMAIL_TEXT,
  };
}

const GOOGLE = 'Gmail Team <forwarding-noreply@google.com>';

describe('decide: forwarding confirmations', () => {
  it.each([
    {
      name: 'an allow-list that refuses unlisted senders',
      workspaces: [workspace('ws-a', ['*@acme.example'])],
      parts: [body],
    },
    {
      name: 'an allow-list that holds unlisted senders',
      workspaces: [workspace('ws-a', ['*@acme.example'], 'hold')],
      parts: [body],
    },
    {
      name: 'an open workspace, which admits the sender',
      workspaces: [workspace('ws-a', null)],
      parts: [body],
    },
    {
      name: 'a workspace taking the body as a document',
      workspaces: [workspace('ws-a', null, 'refuse', 'always')],
      parts: [body],
    },
    { name: 'a confirmation that carries a PDF', workspaces: [workspace('ws-a', null)], parts: [body, pdf] },
  ])('held, nothing queued or held for upload, with the code and link: $name', ({ workspaces, parts }) => {
    const decision = decide(input(workspaces, parts, GOOGLE));
    expect(decision.summary.state).toBe('held');
    expect(decision.summary.hold).toEqual({
      reason: 'forwarding_confirmation',
      workspace: 'ws-a',
      confirmation: {
        provider: 'Gmail',
        code: '891234567',
        link: 'https://mail-settings.google.com/mail/vf-%5BANGjdJ8abc%5D-aW52b2ljZXM',
        text: GMAIL_TEXT,
      },
    });
    expect(decision.entries.filter((entry) => entry.state !== 'skipped')).toEqual([]);
  });

  it('is held for the first workspace that would take it of several', () => {
    const decision = decide(
      input([workspace('ws-a', ['*@acme.example']), workspace('ws-b', null)], [body], GOOGLE),
    );
    expect(decision.summary.hold?.workspace).toBe('ws-b');
  });

  it.each([
    { name: 'signed by google.com: held', dkimDomain: 'google.com', outcome: 'held' },
    {
      name: 'signed by another domain (forged): refused',
      dkimDomain: 'forger.example',
      outcome: 'SENDER_NOT_AUTHENTICATED',
    },
  ])('under senderAuthentication: aligned, a confirmation $name', ({ dkimDomain, outcome }) => {
    const authenticated: AdmittingWorkspace<IntakeWorkspace> = {
      ...workspace('ws-a', ['*@acme.example']),
      config: { ...workspace('ws-a', ['*@acme.example']).config, senderAuthentication: 'aligned' },
    };
    const results: AuthenticationResults = {
      spf: { result: 'none', domain: 'elsewhere.test' },
      dkim: [{ result: 'pass', domain: dkimDomain, selector: 's', unsignedBodyBytes: 0, comment: null }],
      dmarc: null,
      arc: null,
    };
    const decideIt = () =>
      decide({ ...input([authenticated], [body], GOOGLE), authentication: { results, alignsRelaxed } });
    if (outcome === 'held') expect(decideIt().summary.hold?.reason).toBe('forwarding_confirmation');
    else expect(decideIt).toThrow(expect.objectContaining({ code: outcome }));
  });

  it('takes any other sender as before: refused without an attachment', () => {
    expect(() => decide(input([workspace('ws-a', null)], [body], 'Ann <ann@acme.example>'))).toThrow(
      RefusalError,
    );
  });
});
