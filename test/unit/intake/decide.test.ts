import { describe, expect, it } from 'vitest';
import { RefusalError } from '../../../src/errors.ts';
import { type DecideInput, decide, type Transaction } from '../../../src/intake/decide.ts';
import type { IntakeWorkspace } from '../../../src/intake/intake-settings-schema.ts';
import type { RoutedWorkspace } from '../../../src/intake/route-table.ts';
import type { LeafPart } from '../../../src/mail/leaf-part.ts';
import type { WalkResult } from '../../../src/mail/walk-message.ts';
import type { AdmittingWorkspace } from '../../../src/sender/admit-sender.ts';
import { compileAllowList } from '../../../src/sender/compile-allow-list.ts';

const hash = (seed: string) => seed.repeat(64).slice(0, 64);

function leaf(index: number, fields: Partial<LeafPart> = {}): LeafPart {
  return {
    index,
    partNumber: String(index + 1),
    declaredType: 'application/pdf',
    disposition: 'attachment',
    fileName: `doc-${index}.pdf`,
    contentId: null,
    depth: 0,
    role: 'candidate',
    size: 1000 + index,
    sha256: hash(String(index)),
    detectedType: 'pdf',
    bytesType: 'application/pdf',
    stored: true,
    exclusion: null,
    textContent: false,
    path: `part ${index + 1}`,
    container: null,
    inArchive: false,
    ...fields,
  };
}

const body = (index: number): LeafPart =>
  leaf(index, {
    declaredType: 'text/plain',
    disposition: null,
    fileName: null,
    role: 'body',
    sha256: '',
    detectedType: null,
    bytesType: null,
    stored: false,
  });

function walk(parts: LeafPart[], fields: Partial<WalkResult> = {}): WalkResult {
  return {
    messageId: 'm1@acme.example',
    subject: 'Invoice 42',
    fromHeaders: ['Ann <ann@acme.example>'],
    parts,
    htmlCids: new Set(),
    ...fields,
  };
}

function workspace(
  identifier: string,
  rules: string[] | null,
  archives: IntakeWorkspace['archives'] = 'skip',
  encryptedPdf: IntakeWorkspace['encryptedPdf'] = 'skip',
): AdmittingWorkspace<IntakeWorkspace> {
  return {
    config: { identifier, whitelistIngestAddresses: rules, archives, bodyAsDocument: 'never', encryptedPdf },
    admits: compileAllowList(rules),
    policy: 'unused by decide',
  };
}

function transaction(
  workspaces: RoutedWorkspace<IntakeWorkspace>[],
  rcptTo = ['a@ingest.example'],
): Transaction {
  return {
    remoteAddress: '192.0.2.7',
    helo: 'mx.acme.example',
    mailFrom: 'bounce@acme.example',
    workspaces,
    rcptTo,
  };
}

function input(fields: Partial<DecideInput> = {}): DecideInput {
  return {
    queueId: 'q1',
    walk: walk([body(0), leaf(1)]),
    transaction: transaction([workspace('ws-acme', ['*@acme.example'])]),
    authentication: null,
    size: 5000,
    rawSha256: hash('r'),
    now: '2026-11-24T00:00:00.000Z',
    publicUrl: 'http://gw.example:8025',
    policy: { maxAttachments: 10, defaultMode: 'off', trustedArcSealers: new Set() },
    scan: null,
    ...fields,
  };
}

/** The uploads a decision makes, as "workspace:part:fileName". */
const uploads = (fields: Partial<DecideInput>) =>
  decide(input(fields))
    .entries.filter((entry) => entry.state === 'queued')
    .map((entry) => `${entry.workspace}:${entry.part}:${entry.fileName}`);

const refusal = (fields: Partial<DecideInput>) => {
  try {
    decide(input(fields));
  } catch (err) {
    if (err instanceof RefusalError) return `${err.code}: ${err.message}`;
    throw err;
  }
  return 'accepted';
};

describe('decide', () => {
  it.each<{ name: string; fields: Partial<DecideInput>; expected: string[] }>([
    { name: 'one document for one admitting workspace', fields: {}, expected: ['ws-acme:1:doc-1.pdf'] },
    {
      name: 'every document for every admitting workspace, workspace by workspace',
      fields: {
        walk: walk([body(0), leaf(1), leaf(2)]),
        transaction: transaction([workspace('ws-a', null), workspace('ws-b', ['ann@acme.example'])]),
      },
      expected: ['ws-a:1:doc-1.pdf', 'ws-a:2:doc-2.pdf', 'ws-b:1:doc-1.pdf', 'ws-b:2:doc-2.pdf'],
    },
    {
      name: 'nothing for the workspace that refuses the sender',
      fields: {
        transaction: transaction([workspace('ws-other', ['*@other.example']), workspace('ws-acme', null)]),
      },
      expected: ['ws-acme:1:doc-1.pdf'],
    },
    {
      name: 'the name sent upstream is sanitised, and a nameless part named from its type',
      fields: {
        walk: walk([leaf(0, { fileName: '../../etc/in\u202evoice.pdf' }), leaf(1, { fileName: null })]),
      },
      expected: ['ws-acme:0:invoice.pdf', 'ws-acme:1:attachment-2.pdf'],
    },
    {
      name: 'exactly maxAttachments documents are taken',
      fields: {
        walk: walk([leaf(0), leaf(1)]),
        policy: { maxAttachments: 2, defaultMode: 'off', trustedArcSealers: new Set() },
      },
      expected: ['ws-acme:0:doc-0.pdf', 'ws-acme:1:doc-1.pdf'],
    },
  ])('uploads $name', ({ fields, expected }) => {
    expect(uploads(fields)).toEqual(expected);
  });

  it.each<{ name: string; fields: Partial<DecideInput>; expected: RegExp }>([
    {
      name: 'a sender no workspace admits',
      fields: { transaction: transaction([workspace('ws-other', ['*@other.example'])]) },
      expected: /^SENDER_NOT_ADMITTED: /,
    },
    {
      name: 'a malformed From where an allow-list applies',
      fields: { walk: walk([leaf(0)], { fromHeaders: ['not an address'] }) },
      expected: /^SENDER_NOT_ADMITTED: /,
    },
    {
      name: 'two From headers where an allow-list applies',
      fields: { walk: walk([leaf(0)], { fromHeaders: ['ann@acme.example', 'eve@evil.example'] }) },
      expected: /^SENDER_NOT_ADMITTED: /,
    },
    {
      name: 'a message with only its body',
      fields: { walk: walk([body(0)]) },
      expected: /^NO_SUPPORTED_ATTACHMENT: no supported attachment: /,
    },
    {
      name: 'a message whose only attachment is of no supported type',
      fields: {
        walk: walk([
          body(0),
          leaf(1, {
            declaredType: 'application/zip',
            detectedType: null,
            bytesType: 'application/zip',
            fileName: 'a.zip',
          }),
        ]),
      },
      expected: /^NO_SUPPORTED_ATTACHMENT: .*a\.zip/,
    },
    {
      name: 'more documents than maxAttachments',
      fields: {
        walk: walk([leaf(0), leaf(1), leaf(2)]),
        policy: { maxAttachments: 2, defaultMode: 'off', trustedArcSealers: new Set() },
      },
      expected: /^TOO_MANY_ATTACHMENTS: 3 supported attachments, at most 2 are taken per message$/,
    },
  ])('refuses $name', ({ fields, expected }) => {
    expect(refusal(fields)).toMatch(expected);
  });

  it('admits an open workspace whatever the From says', () => {
    expect(
      refusal({
        walk: walk([leaf(0)], { fromHeaders: [] }),
        transaction: transaction([workspace('ws-open', null)]),
      }),
    ).toBe('accepted');
  });

  it('records skipped parts after the uploads, with their reasons, and no workspace', () => {
    const logo = leaf(2, {
      declaredType: 'image/png',
      detectedType: 'png',
      bytesType: 'image/png',
      fileName: 'logo.png',
      contentId: 'logo@x',
      disposition: 'inline',
    });
    const zip = leaf(3, {
      declaredType: 'application/zip',
      detectedType: null,
      bytesType: 'application/zip',
      fileName: 'a.zip',
    });
    const { entries, skipKinds } = decide(
      input({ walk: walk([body(0), leaf(1), logo, zip], { htmlCids: new Set(['logo@x']) }) }),
    );
    expect(entries.map((entry) => [entry.entry, entry.part, entry.state, entry.workspace])).toEqual([
      [0, 1, 'queued', 'ws-acme'],
      [1, 2, 'skipped', null],
      [2, 3, 'skipped', null],
    ]);
    expect(entries[1]?.reason).toMatch(/^inline image referenced by the message/);
    expect(entries[2]?.reason).toMatch(/application\/zip/);
    expect(skipKinds).toEqual(['inline_image', 'unsupported_type']);
    expect(entries.every((entry) => entry.attempts === 0 && entry.documentIdentifier === null)).toBe(true);
  });

  it('records on each upload the subaddress tag its workspace was reached by, and nothing without one', () => {
    const tagged = { ...workspace('ws-acme', ['*@acme.example']), subaddress: 'Invoices' };
    const { entries } = decide(
      input({
        walk: walk([body(0), leaf(1), leaf(2, { declaredType: 'image/x-unknown', detectedType: null })]),
        transaction: transaction(
          [tagged, workspace('ws-open', null)],
          ['a+Invoices@ingest.example', 'b@x.example'],
        ),
      }),
    );
    expect(entries.map((entry) => [entry.workspace, entry.state, entry.subaddress])).toEqual([
      ['ws-acme', 'queued', 'Invoices'],
      ['ws-open', 'queued', undefined],
      [null, 'skipped', undefined],
    ]);
    expect(
      entries.filter((entry) => entry.subaddress === undefined).every((entry) => !('subaddress' in entry)),
    ).toBe(true);
    // Held documents keep the tag: a release uploads them with its fields.
    const partner = workspace('ws-partner', ['*@partner.example']);
    const holding = { ...partner, config: { ...partner.config, unlistedSenders: 'hold' as const } };
    const held = decide(input({ transaction: transaction([{ ...holding, subaddress: 'x' }]) }));
    expect(held.entries.map((entry) => [entry.state, entry.subaddress])).toEqual([['held', 'x']]);
  });

  it('records on each upload the document type whose address reached its workspace, and nothing without one', () => {
    const typed = {
      ...workspace('ws-acme', ['*@acme.example']),
      documentType: 'dt-receipt',
      subaddress: 'x',
    };
    const { entries } = decide(
      input({
        walk: walk([body(0), leaf(1)]),
        transaction: transaction([typed, workspace('ws-open', null)], ['r@ingest.example', 'b@x.example']),
      }),
    );
    expect(entries.map((entry) => [entry.workspace, entry.documentType, entry.subaddress])).toEqual([
      ['ws-acme', 'dt-receipt', 'x'],
      ['ws-open', undefined, undefined],
    ]);
    expect(
      entries.filter((entry) => entry.workspace === 'ws-open').every((entry) => !('documentType' in entry)),
    ).toBe(true);
  });

  it('writes the record summary the HTTP API serves', () => {
    const { summary, entries } = decide(input());
    expect(summary).toEqual({
      id: 'q1',
      messageId: 'm1@acme.example',
      receivedAt: '2026-11-24T00:00:00.000Z',
      remoteAddress: '192.0.2.7',
      envelope: { mailFrom: 'bounce@acme.example', rcptTo: ['a@ingest.example'] },
      from: 'ann@acme.example',
      subject: 'Invoice 42',
      sourceEmail: 'http://gw.example:8025/v1/messages/q1/raw',
      sourceEmailAddress: 'ann@acme.example',
      size: 5000,
      workspaces: [{ identifier: 'ws-acme', admitted: true, reason: null }],
      authentication: null,
    });
    expect(entries[0]).toMatchObject({
      contentType: 'application/pdf',
      detectedType: 'application/pdf',
      size: 1001,
      sha256: hash('1'),
      updatedAt: '2026-11-24T00:00:00.000Z',
    });
  });

  it('names a delivery by its bytes and its recipients, whatever their order and case', () => {
    const hashOf = (rcptTo: string[], rawSha256 = hash('r')) =>
      decide(input({ rawSha256, transaction: transaction([workspace('ws-acme', null)], rcptTo) }))
        .deliveryHash;
    expect(hashOf(['a@x.example', 'B@x.example'])).toBe(hashOf(['b@x.example', 'A@x.example']));
    expect(hashOf(['a@x.example'])).not.toBe(hashOf(['a@x.example', 'b@x.example']));
    expect(hashOf(['a@x.example'])).not.toBe(hashOf(['a@x.example'], hash('s')));
  });
});

describe('decide: files taken out of a ZIP archive', () => {
  const fromZip = (index: number) =>
    leaf(index, { inArchive: true, path: `part 2 > a.zip > doc-${index}.pdf` });
  const zipWalk = walk([body(0), leaf(1), fromZip(2), fromZip(3)]);
  const open = (identifier: string, archives?: 'unpack' | 'skip') => workspace(identifier, null, archives);

  it.each<[string, AdmittingWorkspace<IntakeWorkspace>[], string[]]>([
    [
      'unpack: every document',
      [open('ws-u', 'unpack')],
      ['ws-u:1:doc-1.pdf', 'ws-u:2:doc-2.pdf', 'ws-u:3:doc-3.pdf'],
    ],
    ['skip: none of the archive', [open('ws-s', 'skip')], ['ws-s:1:doc-1.pdf']],
    [
      'each workspace by its own setting',
      [open('ws-s', 'skip'), open('ws-u', 'unpack')],
      ['ws-s:1:doc-1.pdf', 'ws-u:1:doc-1.pdf', 'ws-u:2:doc-2.pdf', 'ws-u:3:doc-3.pdf'],
    ],
  ])('%s', (_case, workspaces, expected) => {
    expect(uploads({ walk: zipWalk, transaction: transaction(workspaces) })).toEqual(expected);
  });

  it('records where each document came from', () => {
    const { entries } = decide(input({ walk: zipWalk, transaction: transaction([open('ws-u', 'unpack')]) }));
    expect(entries.map((entry) => entry.path)).toEqual([
      'part 2',
      'part 2 > a.zip > doc-2.pdf',
      'part 2 > a.zip > doc-3.pdf',
    ]);
  });

  it('counts against maxAttachments what the workspace that gets the most gets', () => {
    const policy = { maxAttachments: 2, defaultMode: 'off' as const, trustedArcSealers: new Set<string>() };
    expect(refusal({ walk: zipWalk, policy, transaction: transaction([open('ws-s', 'skip')]) })).toBe(
      'accepted',
    );
    expect(
      refusal({ walk: zipWalk, policy, transaction: transaction([open('ws-s'), open('ws-u', 'unpack')]) }),
    ).toBe('TOO_MANY_ATTACHMENTS: 3 supported attachments, at most 2 are taken per message');
  });

  it('refuses a message whose only documents are in an archive no addressed workspace unpacks', () => {
    const onlyZip = walk([body(0), fromZip(1)]);
    expect(refusal({ walk: onlyZip, transaction: transaction([open('ws-s', 'skip')]) })).toMatch(
      /^NO_SUPPORTED_ATTACHMENT: no supported attachment: found 1 part/,
    );
  });
});

describe('decide: the body as a document (bodyAsDocument)', () => {
  const htmlBody = (index: number, fields: Partial<LeafPart> = {}) =>
    leaf(index, {
      declaredType: 'text/html',
      disposition: null,
      fileName: null,
      role: 'body',
      size: 300,
      sha256: hash('h'),
      detectedType: 'html',
      bytesType: null,
      path: 'body (text/html)',
      ...fields,
    });
  const textBody = (index: number, fields: Partial<LeafPart> = {}) =>
    htmlBody(index, {
      declaredType: 'text/plain',
      sha256: hash('t'),
      detectedType: 'txt',
      path: 'body (text/plain)',
      ...fields,
    });
  const open = (identifier: string, bodyAsDocument: IntakeWorkspace['bodyAsDocument'] = 'never') => ({
    ...workspace(identifier, null),
    config: { ...workspace(identifier, null).config, bodyAsDocument },
  });
  const bodyOnly = walk([textBody(0), htmlBody(1)]);
  const withPdf = walk([textBody(0), htmlBody(1), leaf(2)]);
  const noAttachment = /^NO_SUPPORTED_ATTACHMENT: no supported attachment: found no attachment/;

  it.each<[string, WalkResult, AdmittingWorkspace<IntakeWorkspace>[], string[] | RegExp]>([
    [
      'never: a message of only its body is refused',
      bodyOnly,
      [open('ws-n', 'never'), open('ws-d')],
      noAttachment,
    ],
    [
      'whenNoAttachment: the HTML body, named from the subject',
      bodyOnly,
      [open('ws-n', 'never'), open('ws-w', 'whenNoAttachment')],
      ['ws-w:1:Invoice 42.html'],
    ],
    [
      'whenNoAttachment: not when the workspace gets an attachment',
      withPdf,
      [open('ws-w', 'whenNoAttachment')],
      ['ws-w:2:doc-2.pdf'],
    ],
    [
      'always: the body beside the attachments, in message order',
      withPdf,
      [open('ws-n', 'never'), open('ws-a', 'always')],
      ['ws-n:2:doc-2.pdf', 'ws-a:1:Invoice 42.html', 'ws-a:2:doc-2.pdf'],
    ],
    [
      'whenNoAttachment and always side by side',
      withPdf,
      [open('ws-w', 'whenNoAttachment'), open('ws-a', 'always')],
      ['ws-w:2:doc-2.pdf', 'ws-a:1:Invoice 42.html', 'ws-a:2:doc-2.pdf'],
    ],
    [
      'always: a message of only its body, to two workspaces',
      bodyOnly,
      [open('ws-w', 'whenNoAttachment'), open('ws-a', 'always')],
      ['ws-w:1:Invoice 42.html', 'ws-a:1:Invoice 42.html'],
    ],
    [
      'the text body when there is no HTML one',
      walk([textBody(0)]),
      [open('ws-a', 'always')],
      ['ws-a:0:Invoice 42.txt'],
    ],
    [
      'the text body when the HTML one is empty',
      walk([textBody(0), htmlBody(1, { size: 0, stored: false, sha256: '', detectedType: null })]),
      [open('ws-a', 'always')],
      ['ws-a:0:Invoice 42.txt'],
    ],
    [
      'a message without a subject',
      walk([htmlBody(0)], { subject: null }),
      [open('ws-a', 'always')],
      ['ws-a:0:message.html'],
    ],
    [
      'the body of an attached message is not the message body',
      walk([
        leaf(0, { declaredType: 'message/rfc822', detectedType: null, bytesType: null, exclusion: 'x' }),
        htmlBody(1, { depth: 1 }),
      ]),
      [open('ws-a', 'always')],
      /^NO_SUPPORTED_ATTACHMENT: /,
    ],
    [
      'whenNoAttachment: per workspace, when its only documents are in an archive it does not unpack',
      walk([htmlBody(0), leaf(1, { inArchive: true })]),
      [
        open('ws-w', 'whenNoAttachment'),
        {
          ...open('ws-u'),
          config: {
            identifier: 'ws-u',
            whitelistIngestAddresses: null,
            archives: 'unpack',
            bodyAsDocument: 'whenNoAttachment',
            encryptedPdf: 'skip',
          },
        },
      ],
      ['ws-w:0:Invoice 42.html', 'ws-u:1:doc-1.pdf'],
    ],
    [
      'a body too large to store is no document: nothing else, refused',
      walk([htmlBody(0, { stored: false, sha256: '', detectedType: null })]),
      [open('ws-w', 'whenNoAttachment')],
      noAttachment,
    ],
  ])('%s', (_case, walked, workspaces, expected) => {
    const fields = { walk: walked, transaction: transaction(workspaces) };
    if (expected instanceof RegExp) expect(refusal(fields)).toMatch(expected);
    else expect(uploads(fields)).toEqual(expected);
  });

  it('records the body document with its path, its name and the UTF-8 bytes walked', () => {
    const { entries } = decide(input({ walk: withPdf, transaction: transaction([open('ws-a', 'always')]) }));
    expect(entries[0]).toMatchObject({
      part: 1,
      path: 'body (text/html)',
      fileName: 'Invoice 42.html',
      originalFileName: null,
      contentType: 'text/html',
      detectedType: 'text/html',
      size: 300,
      sha256: hash('h'),
      workspace: 'ws-a',
      state: 'queued',
    });
    expect(entries).toHaveLength(2);
  });

  it('records a body too large to store as skipped, for a workspace that wanted it', () => {
    const tooLarge = walk([htmlBody(0, { stored: false, sha256: '', detectedType: null }), leaf(1)]);
    const taking = decide(input({ walk: tooLarge, transaction: transaction([open('ws-a', 'always')]) }));
    expect(taking.entries.map((entry) => [entry.path, entry.state, entry.reason])).toEqual([
      ['part 2', 'queued', null],
      ['body (text/html)', 'skipped', 'message body (text/html) larger than the parsing service accepts'],
    ]);
    const notTaking = decide(input({ walk: tooLarge, transaction: transaction([open('ws-n', 'never')]) }));
    expect(notTaking.entries.map((entry) => entry.path)).toEqual(['part 2']);
  });

  it('counts the body document against maxAttachments', () => {
    const policy = { maxAttachments: 2, defaultMode: 'off' as const, trustedArcSealers: new Set<string>() };
    const twoPdfs = walk([htmlBody(0), leaf(1), leaf(2)]);
    expect(refusal({ walk: twoPdfs, policy, transaction: transaction([open('ws-a', 'always')]) })).toBe(
      'TOO_MANY_ATTACHMENTS: 3 supported attachments (the message body among them), at most 2 are taken per message',
    );
    expect(
      refusal({ walk: twoPdfs, policy, transaction: transaction([open('ws-w', 'whenNoAttachment')]) }),
    ).toBe('accepted');
  });
});

describe('decide: encrypted PDFs (encryptedPdf)', () => {
  const lockedWalk = walk([body(0), leaf(1), leaf(2, { encrypted: true })]);
  const open = (identifier: string, encryptedPdf: 'skip' | 'upload') =>
    workspace(identifier, null, 'skip', encryptedPdf);
  const skippedOf = (workspaces: AdmittingWorkspace<IntakeWorkspace>[]) =>
    decide(input({ walk: lockedWalk, transaction: transaction(workspaces) }))
      .entries.filter((entry) => entry.state === 'skipped')
      .map((entry) => `${entry.part}:${entry.reason?.split(':')[0]}`);

  it.each<[string, AdmittingWorkspace<IntakeWorkspace>[], string[], string[]]>([
    ['skip: the locked PDF is skipped', [open('ws-s', 'skip')], ['ws-s:1:doc-1.pdf'], ['2:encrypted_pdf']],
    ['upload: it is a document', [open('ws-u', 'upload')], ['ws-u:1:doc-1.pdf', 'ws-u:2:doc-2.pdf'], []],
    [
      'each workspace by its own setting; taken by one, it is not listed as skipped',
      [open('ws-s', 'skip'), open('ws-u', 'upload')],
      ['ws-s:1:doc-1.pdf', 'ws-u:1:doc-1.pdf', 'ws-u:2:doc-2.pdf'],
      [],
    ],
  ])('%s', (_case, workspaces, expectedUploads, expectedSkipped) => {
    expect(uploads({ walk: lockedWalk, transaction: transaction(workspaces) })).toEqual(expectedUploads);
    expect(skippedOf(workspaces)).toEqual(expectedSkipped);
  });

  it('counts a skipped locked PDF as encrypted_pdf', () => {
    const { skipKinds } = decide(
      input({ walk: lockedWalk, transaction: transaction([open('ws-s', 'skip')]) }),
    );
    expect(skipKinds).toEqual(['encrypted_pdf']);
  });

  it('refuses a message whose only document is a locked PDF, naming it encrypted', () => {
    const onlyLocked = walk([body(0), leaf(1, { encrypted: true, fileName: 'payslip.pdf' })]);
    expect(refusal({ walk: onlyLocked, transaction: transaction([open('ws-s', 'skip')]) })).toBe(
      'NO_SUPPORTED_ATTACHMENT: no supported attachment: found 1 part: payslip.pdf (encrypted PDF)',
    );
  });
});

describe('decide: decrypted S/MIME content (decryptedFor)', () => {
  const open = (identifier: string, bodyAsDocument: IntakeWorkspace['bodyAsDocument'] = 'never') => ({
    ...workspace(identifier, null),
    config: { ...workspace(identifier, null).config, bodyAsDocument },
  });
  const decrypted = { decryptedFor: ['ws-key'] };
  const htmlBody = leaf(0, {
    declaredType: 'text/html',
    disposition: null,
    fileName: null,
    role: 'body',
    detectedType: 'html',
    path: 'part 1 > smime.p7m > body (text/html)',
    ...decrypted,
  });

  it('gives decrypted documents and the decrypted body only to the workspaces whose key opened them', () => {
    const walked = walk([htmlBody, leaf(1, decrypted), leaf(2)]);
    expect(
      uploads({
        walk: walked,
        transaction: transaction([open('ws-key', 'always'), open('ws-other', 'always')]),
      }),
    ).toEqual([
      'ws-key:0:Invoice 42.html',
      'ws-key:1:doc-1.pdf',
      'ws-key:2:doc-2.pdf',
      'ws-other:2:doc-2.pdf',
    ]);
  });

  it('refuses a message whose documents are all decrypted for another workspace than those addressed', () => {
    const walked = walk([body(0), leaf(1, decrypted)]);
    expect(refusal({ walk: walked, transaction: transaction([open('ws-other')]) })).toMatch(
      /^NO_SUPPORTED_ATTACHMENT: /,
    );
  });
});

describe('decide for a workspace holding unlisted senders', () => {
  const holding = (identifier: string, rules: string[]) => {
    const base = workspace(identifier, rules);
    return { ...base, config: { ...base.config, unlistedSenders: 'hold' as const } };
  };

  it('keeps the documents an unlisted sender sent, each held, and says why the message is held', () => {
    const decision = decide(
      input({ transaction: transaction([holding('ws-partner', ['*@partner.example'])]) }),
    );
    expect(decision.summary).toMatchObject({
      state: 'held',
      hold: { reason: 'sender_not_listed', workspace: 'ws-partner' },
    });
    expect(decision.entries.map((entry) => `${entry.workspace}:${entry.state}`)).toEqual(['ws-partner:held']);
    expect(decision.summary.workspaces).toEqual([
      { identifier: 'ws-partner', admitted: false, reason: 'sender not in the allow-list' },
    ]);
  });

  it('holds nothing when another workspace of the transaction admits the sender', () => {
    const decision = decide(
      input({
        transaction: transaction([
          holding('ws-partner', ['*@partner.example']),
          workspace('ws-acme', ['*@acme.example']),
        ]),
      }),
    );
    expect(decision.summary.state).toBeUndefined();
    expect(decision.entries.map((entry) => `${entry.workspace}:${entry.state}`)).toEqual(['ws-acme:queued']);
  });

  it('still refuses a held sender with nothing the workspace takes (550 5.6.0)', () => {
    expect(
      refusal({
        walk: walk([body(0)]),
        transaction: transaction([holding('ws-partner', ['*@partner.example'])]),
      }),
    ).toMatch(/^NO_SUPPORTED_ATTACHMENT/);
  });
});
