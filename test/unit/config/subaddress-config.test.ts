import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../src/config/load-config.ts';
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

describe('smtp.subaddressSeparator', () => {
  it('is + unless the file says otherwise; null turns it off', () => {
    expect(parse(workspace()).smtp.subaddressSeparator).toBe('+');
    expect(parse(`smtp:\n  subaddressSeparator: "-"\n${workspace()}`).smtp.subaddressSeparator).toBe('-');
    expect(parse(`smtp:\n  subaddressSeparator: null\n${workspace()}`).smtp.subaddressSeparator).toBeNull();
  });

  it.each(['"."', '"@"', '"++"', '""', 'a', '"1"'])('refuses %s', (value) => {
    expect(problemsOf(`smtp:\n  subaddressSeparator: ${value}\n${workspace()}`)).toEqual([
      expect.stringMatching(
        /^smtp\.subaddressSeparator: expected one of .* \(or null to turn subaddresses off\)/,
      ),
    ]);
  });
});

describe('workspaces[].subaddresses', () => {
  it('takes upload fields by tag', () => {
    const config = parse(
      workspace(`    subaddresses:
      invoices: {documentType: doc-invoice, llmHint: Totals in VND}
      receipts: {collection: col-receipts, language: DE}`),
    );
    expect(config.workspaces[0]?.subaddresses).toEqual({
      invoices: { documentType: 'doc-invoice', llmHint: 'Totals in VND' },
      receipts: { collection: 'col-receipts', language: 'de' },
    });
  });

  it('lists every problem of every tag at once', () => {
    const problems = problemsOf(
      workspace(`    subaddresses:
      invoices: {documentType: "", snake_case: true}
      Invoices: {language: xx}
      INVOICES: {}
      "a b": {}
      receipts: {deleteAfterParse: true, colour: red}`),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^workspaces\[0\]\.subaddresses\.invoices\.documentType: /),
        expect.stringMatching(/^workspaces\[0\]\.subaddresses\.invoices\.snake_case: is the workspace’s/),
        expect.stringMatching(/^workspaces\[0\]\.subaddresses\.Invoices\.language: expected an ISO 639-1/),
        expect.stringMatching(/^workspaces\[0\]\.subaddresses\.a b: expected a tag/),
        expect.stringMatching(/^workspaces\[0\]\.subaddresses\.Invoices: is the tag invoices again/),
        expect.stringMatching(/^workspaces\[0\]\.subaddresses\.INVOICES: is the tag invoices again/),
        expect.stringMatching(/^workspaces\[0\]\.subaddresses\.receipts\.deleteAfterParse: needs wait: true/),
        expect.stringMatching(/^workspaces\[0\]\.subaddresses\.receipts.*colour/),
      ]),
    );
  });

  it('refuses two tags that differ only in case', () => {
    expect(
      problemsOf(
        workspace(`    subaddresses:
      invoices: {documentType: a}
      INVOICES: {documentType: b}`),
      ),
    ).toEqual([
      'workspaces[0].subaddresses.INVOICES: is the tag invoices again (tags are compared without case)',
    ]);
  });

  it('is refused while the separator is off: its fields would apply to no mail', () => {
    expect(
      problemsOf(
        `smtp:\n  subaddressSeparator: null\n${workspace('    subaddresses: {invoices: {documentType: a}}')}`,
      ),
    ).toEqual([
      'workspaces[0].subaddresses: applies to no mail while smtp.subaddressSeparator is null: set a separator or remove it',
    ]);
  });
});
