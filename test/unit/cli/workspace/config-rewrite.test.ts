// biome-ignore-all lint/suspicious/noTemplateCurlyInString: a ${VAR} in the file is one of the cases.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  ConfigRewriteError,
  rewriteWorkspaces,
  yamlScalar,
} from '../../../../src/cli/workspace/config-rewrite.ts';

const file = `# gateway configuration
api:
  mock: false # the real service
workspaces: # at least one
  - identifier: ws-acme # the invoices workspace
    ingestEmail: invoices@ingest.example.com # from the service
    whitelistIngestAddresses: # who may send
      - "*@acme.example" # all of Acme
      - ap@partner.example # the partner's AP desk
    collection: col-1
  - identifier: ws-open
    ingestEmail: 'open@ingest.example.com'
    whitelistIngestAddresses: null # any sender
  - identifier: ws-flow
    ingestEmail: flow@ingest.example.com
    whitelistIngestAddresses: ["*@one.example", two@two.example] # flow style
  - identifier: ws-bare
    ingestEmail: bare@ingest.example.com # no allow-list: any sender
    documentType: doc-1
`;

function workspaces(text: string): Array<Record<string, unknown>> {
  return (parse(text) as { workspaces: Array<Record<string, unknown>> }).workspaces;
}

/** The lines of `after` that are not in `before`, and the reverse: what the rewrite touched. */
function changedLines(before: string, after: string) {
  const a = before.split('\n');
  const b = after.split('\n');
  return { removed: a.filter((line) => !b.includes(line)), added: b.filter((line) => !a.includes(line)) };
}

describe('rewriteWorkspaces', () => {
  it('replaces a plain ingestEmail in place, keeping its comment and every other line', () => {
    const { text } = rewriteWorkspaces(file, [
      { index: 0, identifier: 'ws-acme', ingestEmail: 'acme-7f3a@ingest.example.com' },
    ]);
    expect(changedLines(file, text)).toEqual({
      removed: ['    ingestEmail: invoices@ingest.example.com # from the service'],
      added: ['    ingestEmail: acme-7f3a@ingest.example.com # from the service'],
    });
  });

  it('keeps the quoting of a quoted value', () => {
    const { text } = rewriteWorkspaces(file, [
      { index: 1, identifier: 'ws-open', ingestEmail: "o'neil@ingest.example.com" },
    ]);
    expect(text).toContain("    ingestEmail: 'o''neil@ingest.example.com'\n");
    expect(workspaces(text)[1]?.ingestEmail).toBe("o'neil@ingest.example.com");
  });

  it('turns null into a flow list on the same line, keeping the comment', () => {
    const { text } = rewriteWorkspaces(file, [
      { index: 1, identifier: 'ws-open', whitelistIngestAddresses: ['*@acme.example', 'b@c.example'] },
    ]);
    expect(changedLines(file, text)).toEqual({
      removed: ['    whitelistIngestAddresses: null # any sender'],
      added: ['    whitelistIngestAddresses: ["*@acme.example", b@c.example] # any sender'],
    });
  });

  it('rewrites a flow list as a flow list', () => {
    const { text } = rewriteWorkspaces(file, [
      { index: 2, identifier: 'ws-flow', whitelistIngestAddresses: ['x@y.example'] },
    ]);
    expect(text).toContain('    whitelistIngestAddresses: [x@y.example] # flow style\n');
    expect(workspaces(text)[2]?.whitelistIngestAddresses).toEqual(['x@y.example']);
  });

  it('edits a block list line by line: kept rules keep their comments, new ones take its indentation', () => {
    const { text } = rewriteWorkspaces(file, [
      {
        index: 0,
        identifier: 'ws-acme',
        whitelistIngestAddresses: ['*@ACME.example', 'new@partner.example'],
      },
    ]);
    expect(changedLines(file, text)).toEqual({
      removed: ["      - ap@partner.example # the partner's AP desk"],
      added: ['      - new@partner.example'],
    });
    expect(text).toContain(
      '    whitelistIngestAddresses: # who may send\n      - "*@acme.example" # all of Acme\n',
    );
    expect(workspaces(text)[0]?.whitelistIngestAddresses).toEqual(['*@acme.example', 'new@partner.example']);
  });

  it('replaces every rule of a block list, the new ones in its indentation', () => {
    const { text } = rewriteWorkspaces(file, [
      { index: 0, identifier: 'ws-acme', whitelistIngestAddresses: ['x@one.example', '*@two.example'] },
    ]);
    expect(text).toContain(
      '    whitelistIngestAddresses: # who may send\n      - x@one.example\n      - "*@two.example"\n    collection: col-1\n',
    );
  });

  it('adds the allow-list after ingestEmail when that is the first key of the item', () => {
    const source = 'workspaces:\n  - ingestEmail: a@i.example\n    identifier: ws\n';
    const { text } = rewriteWorkspaces(source, [
      { index: 0, identifier: 'ws', whitelistIngestAddresses: ['b@c.example'] },
    ]);
    expect(text).toBe(
      'workspaces:\n  - ingestEmail: a@i.example\n    whitelistIngestAddresses: [b@c.example]\n    identifier: ws\n',
    );
  });

  it.each([
    { rules: null, line: '    whitelistIngestAddresses: null # who may send', value: null },
    { rules: [], line: '    whitelistIngestAddresses: [] # who may send', value: [] },
  ])('replaces a block list by $line', ({ rules, line, value }) => {
    const { text } = rewriteWorkspaces(file, [
      { index: 0, identifier: 'ws-acme', whitelistIngestAddresses: rules },
    ]);
    expect(text).toContain(`${line}\n    collection: col-1\n`);
    expect(workspaces(text)[0]?.whitelistIngestAddresses).toEqual(value);
  });

  it('adds an absent allow-list on the line after ingestEmail', () => {
    const { text } = rewriteWorkspaces(file, [
      { index: 3, identifier: 'ws-bare', whitelistIngestAddresses: ['*@bare.example'] },
    ]);
    expect(text).toContain(
      '    ingestEmail: bare@ingest.example.com # no allow-list: any sender\n' +
        '    whitelistIngestAddresses: ["*@bare.example"]\n    documentType: doc-1\n',
    );
  });

  it('writes nothing for an absent allow-list that stays "any sender"', () => {
    expect(
      rewriteWorkspaces(file, [{ index: 3, identifier: 'ws-bare', whitelistIngestAddresses: null }]).text,
    ).toBe(file);
  });

  it('edits several workspaces in one pass', () => {
    const { text } = rewriteWorkspaces(file, [
      {
        index: 0,
        identifier: 'ws-acme',
        ingestEmail: 'a2@ingest.example.com',
        whitelistIngestAddresses: null,
      },
      { index: 2, identifier: 'ws-flow', ingestEmail: 'f2@ingest.example.com' },
    ]);
    const [acme, , flow] = workspaces(text);
    expect(acme).toMatchObject({ ingestEmail: 'a2@ingest.example.com', whitelistIngestAddresses: null });
    expect(flow).toMatchObject({
      ingestEmail: 'f2@ingest.example.com',
      whitelistIngestAddresses: ['*@one.example', 'two@two.example'],
    });
    expect(
      text.startsWith(
        '# gateway configuration\napi:\n  mock: false # the real service\nworkspaces: # at least one\n',
      ),
    ).toBe(true);
  });

  it('notes a ${VAR} that becomes a literal', () => {
    const source = 'workspaces:\n  - identifier: ws\n    ingestEmail: ${INGEST_ADDRESS}\n';
    const { text, notes } = rewriteWorkspaces(source, [
      { index: 0, identifier: 'ws', ingestEmail: 'n@i.example' },
    ]);
    expect(text).toBe('workspaces:\n  - identifier: ws\n    ingestEmail: n@i.example\n');
    expect(notes).toEqual([
      "workspaces[0].ingestEmail was ${INGEST_ADDRESS}; it now holds the service's value",
    ]);
  });

  it.each([
    {
      name: 'a flow mapping',
      source: 'workspaces:\n  - {identifier: ws, ingestEmail: a@b.example}\n',
      message: /workspaces\[0\] is not a block mapping/,
    },
    {
      name: 'another workspace at that position',
      source: 'workspaces:\n  - identifier: other\n    ingestEmail: a@b.example\n',
      message: /workspaces\[0\] is other in the file, not ws/,
    },
    { name: 'no workspaces list', source: 'smtp: {}\n', message: /no workspaces list/ },
  ])('refuses $name', ({ source, message }) => {
    expect(() =>
      rewriteWorkspaces(source, [{ index: 0, identifier: 'ws', ingestEmail: 'n@i.example' }]),
    ).toThrow(ConfigRewriteError);
    expect(() =>
      rewriteWorkspaces(source, [{ index: 0, identifier: 'ws', ingestEmail: 'n@i.example' }]),
    ).toThrow(message);
  });
});

describe('yamlScalar', () => {
  it.each([
    { value: 'ap@partner.example', written: 'ap@partner.example' },
    { value: '*@acme.example', written: '"*@acme.example"' },
    { value: 'null', written: '"null"' },
    { value: 'a b@c.example', written: '"a b@c.example"' },
    { value: '#x@y.example', written: '"#x@y.example"' },
  ])('$value → $written', ({ value, written }) => {
    expect(yamlScalar(value)).toBe(written);
    expect(parse(`v: ${written}`)).toEqual({ v: value });
  });
});
