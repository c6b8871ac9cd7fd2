import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../src/config/load-config.ts';
import { fileRoutes, type WorkspaceConfig } from '../../../src/config/schema.ts';

/**
 * The `upload:` block and `trackCompletion` of a workspace, validated through parseConfig so
 * each problem reads exactly as an operator sees it in check-config, path included.
 */

const HEAD = 'api:\n  mock: true\nworkspaces:\n  - identifier: ws-1\n    ingestEmail: in@ingest.example\n';

function load(workspaceYaml: string): WorkspaceConfig {
  const config = parseConfig({ text: `${HEAD}${workspaceYaml}`, env: {}, source: 'inline' });
  const [workspace] = fileRoutes(config);
  if (!workspace) throw new Error('no workspace');
  return workspace;
}

function problemsOf(workspaceYaml: string): readonly string[] {
  try {
    load(workspaceYaml);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

/** One field of `upload:` as YAML flow. */
const upload = (field: string) => `    upload:\n      ${field}\n`;

describe('upload fields: accepted values', () => {
  it.each<{ yaml: string; expected: Record<string, unknown> }>([
    { yaml: 'collection: col-1', expected: { collection: 'col-1' } },
    { yaml: 'documentType: invoice', expected: { documentType: 'invoice' } },
    { yaml: 'documentType: null', expected: { documentType: null } },
    { yaml: 'wait: true', expected: { wait: true } },
    {
      yaml: 'customIdentifier: "{queueId}-{attachmentIndex}"',
      expected: { customIdentifier: '{queueId}-{attachmentIndex}' },
    },
    {
      yaml: 'customIdentifier: "{{literal}} {messageId} {from} {subject} {fileName} {workspace}"',
      expected: { customIdentifier: '{{literal}} {messageId} {from} {subject} {fileName} {workspace}' },
    },
    { yaml: 'expiryTime: 30d', expected: { expiryTime: '30d' } },
    { yaml: 'expiryTime: 12h', expected: { expiryTime: '12h' } },
    { yaml: 'expiryTime: 90m', expected: { expiryTime: '90m' } },
    { yaml: 'expiryTime: 2030-01-31T00:00:00Z', expected: { expiryTime: '2030-01-31T00:00:00Z' } },
    { yaml: 'expiryTime: 2030-01-31T08:30:00+02:00', expected: { expiryTime: '2030-01-31T08:30:00+02:00' } },
    { yaml: 'expiryTime: null', expected: { expiryTime: null } },
    { yaml: 'language: en', expected: { language: 'en' } },
    { yaml: 'language: DE', expected: { language: 'de' } },
    { yaml: 'language: zh-cn', expected: { language: 'zh-cn' } },
    { yaml: 'language: zh-TW', expected: { language: 'zh-tw' } },
    // Tagalog: a current code, although ICU's canonical form is fil.
    { yaml: 'language: tl', expected: { language: 'tl' } },
    { yaml: 'rejectDuplicates: true', expected: { rejectDuplicates: true } },
    { yaml: 'rejectDuplicates: false', expected: { rejectDuplicates: false } },
    { yaml: 'rejectDuplicates: null', expected: { rejectDuplicates: null } },
    {
      yaml: 'regionBias: {country: vn, countries: [vn, th], squareCoordinates: [10.5, 106.1, 11, 107], strict: true}',
      expected: {
        regionBias: {
          country: 'vn',
          countries: ['vn', 'th'],
          squareCoordinates: [10.5, 106.1, 11, 107],
          strict: true,
        },
      },
    },
    { yaml: 'lowPriority: true', expected: { lowPriority: true } },
    { yaml: 'compact: false', expected: { compact: false } },
    { yaml: 'enableValidationTool: false', expected: { enableValidationTool: false } },
    { yaml: 'useOcr: true', expected: { useOcr: true } },
    { yaml: 'useOcr: null', expected: { useOcr: null } },
    { yaml: 'llmHint: "Totals are in VND"', expected: { llmHint: 'Totals are in VND' } },
    { yaml: 'limitToExamples: [doc-a, doc-b]', expected: { limitToExamples: ['doc-a', 'doc-b'] } },
    { yaml: 'limitToExamples: null', expected: { limitToExamples: null } },
    {
      yaml: 'warningMessages: [{warningCode: too_many_pages, warningDetail: "only 10 pages"}, {warningCode: custom}]',
      expected: {
        warningMessages: [
          { warningCode: 'too_many_pages', warningDetail: 'only 10 pages' },
          { warningCode: 'custom' },
        ],
      },
    },
    { yaml: 'snake_case: true', expected: { snake_case: true } },
  ])('$yaml', ({ yaml, expected }) => {
    expect(load(upload(yaml)).upload).toEqual(expected);
  });

  it('takes deleteAfterParse with wait: true', () => {
    expect(load('    upload: {wait: true, deleteAfterParse: true}\n').upload).toEqual({
      wait: true,
      deleteAfterParse: true,
    });
  });

  it('keeps both documentType keys; upload.documentType is the one sent (see upload-fields)', () => {
    const workspace = load('    documentType: outer\n    upload: {documentType: inner}\n');
    expect(workspace.documentType).toBe('outer');
    expect(workspace.upload?.documentType).toBe('inner');
  });
});

describe('upload fields: refused values, each with its path', () => {
  const at = (field: string) => `workspaces[0].upload.${field}`;
  it.each<{ yaml: string; problem: string }>([
    { yaml: 'collection: ""', problem: `${at('collection')}: must not be empty` },
    { yaml: 'documentType: 7', problem: `${at('documentType')}: expected a string, got number 7` },
    { yaml: 'wait: "yes"', problem: `${at('wait')}: expected a boolean, got the string "yes"` },
    { yaml: 'wait: null', problem: `${at('wait')}: expected a boolean, got null` },
    {
      yaml: 'customIdentifier: "{queueId}-{part}"',
      problem: `${at('customIdentifier')}: unknown placeholder {part}; expected one of {messageId}`,
    },
    { yaml: 'customIdentifier: "{queueId"', problem: `${at('customIdentifier')}: lone "{" at position 0` },
    { yaml: 'customIdentifier: "a}"', problem: `${at('customIdentifier')}: lone "}" at position 1` },
    { yaml: 'customIdentifier: ""', problem: `${at('customIdentifier')}: must not be empty` },
    { yaml: 'expiryTime: 30', problem: `${at('expiryTime')}: expected a string, got number 30` },
    {
      yaml: 'expiryTime: 30x',
      problem: `${at('expiryTime')}: expected an ISO 8601 date-time with a time zone`,
    },
    { yaml: 'expiryTime: 0d', problem: `${at('expiryTime')}: expected an ISO 8601 date-time` },
    { yaml: 'expiryTime: "-5d"', problem: `${at('expiryTime')}: expected an ISO 8601 date-time` },
    { yaml: 'expiryTime: 1.5h', problem: `${at('expiryTime')}: expected an ISO 8601 date-time` },
    {
      yaml: 'expiryTime: 2030-01-31T00:00:00',
      problem: `${at('expiryTime')}: expected an ISO 8601 date-time with a time zone`,
    },
    {
      yaml: 'expiryTime: 2030-02-30T00:00:00Z',
      problem: `${at('expiryTime')}: expected an ISO 8601 date-time`,
    },
    { yaml: 'expiryTime: 2030-01-31', problem: `${at('expiryTime')}: expected an ISO 8601 date-time` },
    { yaml: 'expiryTime: 99999w', problem: `${at('expiryTime')}: "99999w" is more than 100 years` },
    {
      yaml: 'language: zh',
      problem: `${at('language')}: for Chinese give zh-cn (simplified) or zh-tw (traditional)`,
    },
    {
      yaml: 'language: iw',
      problem: `${at('language')}: iw was withdrawn from ISO 639-1; give he`,
    },
    {
      yaml: 'language: sh',
      problem: `${at('language')}: sh was withdrawn from ISO 639-1; give sr, hr or bs`,
    },
    {
      yaml: 'language: eng',
      problem: `${at('language')}: expected an ISO 639-1 language code (en, de, vi) or zh-cn/zh-tw, got "eng"`,
    },
    { yaml: 'language: en-us', problem: `${at('language')}: expected an ISO 639-1 language code` },
    { yaml: 'language: qq', problem: `${at('language')}: expected an ISO 639-1 language code` },
    { yaml: 'language: zh-hk', problem: `${at('language')}: expected an ISO 639-1 language code` },
    {
      yaml: 'rejectDuplicates: "true"',
      problem: `${at('rejectDuplicates')}: expected a boolean, got the string "true"`,
    },
    { yaml: 'regionBias: "{\\"country\\":\\"vn\\"}"', problem: `${at('regionBias')}: expected an object` },
    {
      yaml: 'regionBias: {country: VN}',
      problem: `${at('regionBias.country')}: expected a lowercase two-letter country code`,
    },
    {
      yaml: 'regionBias: {countries: [vn, usa]}',
      problem: `${at('regionBias.countries[1]')}: expected a lowercase two-letter country code`,
    },
    {
      yaml: 'regionBias: {squareCoordinates: [1, north]}',
      problem: `${at('regionBias.squareCoordinates[1]')}: expected a number, got the string "north"`,
    },
    {
      yaml: 'regionBias: {squareCoordinates: []}',
      problem: `${at('regionBias.squareCoordinates')}: must not be empty`,
    },
    { yaml: 'regionBias: {strict: "yes"}', problem: `${at('regionBias.strict')}: expected a boolean` },
    {
      yaml: 'regionBias: {strict: true}',
      problem: `${at('regionBias')}: give at least one of country, countries, squareCoordinates`,
    },
    {
      yaml: 'regionBias: {country: vn, region: asia}',
      problem: `${at('regionBias.region')}: unknown key; expected one of country, countries, squareCoordinates, strict`,
    },
    { yaml: 'lowPriority: 1', problem: `${at('lowPriority')}: expected a boolean, got number 1` },
    { yaml: 'compact: "false"', problem: `${at('compact')}: expected a boolean` },
    { yaml: 'deleteAfterParse: true', problem: `${at('deleteAfterParse')}: needs wait: true` },
    {
      yaml: 'enableValidationTool: null',
      problem: `${at('enableValidationTool')}: expected a boolean, got null`,
    },
    { yaml: 'useOcr: auto', problem: `${at('useOcr')}: expected a boolean, got the string "auto"` },
    { yaml: 'llmHint: ""', problem: `${at('llmHint')}: must not be empty` },
    {
      yaml: 'limitToExamples: doc-a',
      problem: `${at('limitToExamples')}: expected an array, got the string "doc-a"`,
    },
    {
      yaml: 'limitToExamples: []',
      problem: `${at('limitToExamples')}: give at least one document identifier`,
    },
    { yaml: 'limitToExamples: [doc-a, ""]', problem: `${at('limitToExamples[1]')}: must not be empty` },
    {
      yaml: 'warningMessages: [{warningDetail: x}]',
      problem: `${at('warningMessages[0].warningCode')}: is required`,
    },
    {
      yaml: 'warningMessages: [{warningCode: a, level: 2}]',
      problem: `${at('warningMessages[0].level')}: unknown key`,
    },
    {
      yaml: 'warningMessages: {warningCode: a}',
      problem: `${at('warningMessages')}: expected an array, got a mapping`,
    },
    { yaml: 'snake_case: "true"', problem: `${at('snake_case')}: expected a boolean` },
    {
      yaml: 'identifier: inv-1',
      problem: `${at('identifier')}: is deprecated and never sent; use customIdentifier`,
    },
    {
      yaml: 'url: https://example.com/a.pdf',
      problem: `${at('url')}: cannot be configured: the gateway uploads the attachment`,
    },
    {
      yaml: 'fileName: a.pdf',
      problem: `${at('fileName')}: unknown key; expected one of wait, rejectDuplicates,`,
    },
    { yaml: 'snakeCase: true', problem: `${at('snakeCase')}: unknown key` },
  ])('$yaml', ({ yaml, problem }) => {
    const problems = problemsOf(upload(yaml));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(problem);
  });

  it('lists every problem of the block at once, deleteAfterParse included', () => {
    const problems = problemsOf(
      '    upload: {identifier: x, language: zh, deleteAfterParse: true, expiryTime: soon, wait: false}\n',
    );
    expect(problems).toEqual([
      expect.stringMatching(/^workspaces\[0\]\.upload\.expiryTime: /),
      expect.stringMatching(/^workspaces\[0\]\.upload\.language: for Chinese/),
      expect.stringMatching(/^workspaces\[0\]\.upload\.identifier: is deprecated/),
      expect.stringMatching(/^workspaces\[0\]\.upload\.deleteAfterParse: needs wait: true/),
    ]);
  });
});

describe('trackCompletion', () => {
  const defaults = { via: 'poll', firstDelay: 5_000, maxDelay: 300_000, maxPolls: 300, maxTime: 86_400_000 };

  it.each<{ yaml: string; expected: unknown }>([
    { yaml: '', expected: undefined },
    { yaml: '    trackCompletion: false\n', expected: null },
    { yaml: '    trackCompletion: true\n', expected: defaults },
    { yaml: '    trackCompletion: {}\n', expected: defaults },
    {
      yaml: '    trackCompletion: {firstDelay: 1000, maxDelay: 60000, maxPolls: 10, maxTime: 3600000}\n',
      expected: { via: 'poll', firstDelay: 1_000, maxDelay: 60_000, maxPolls: 10, maxTime: 3_600_000 },
    },
    { yaml: '    trackCompletion: {maxPolls: 5}\n', expected: { ...defaults, maxPolls: 5 } },
    // Pushed outcomes: polling is the fallback, so its first poll waits a minute.
    {
      yaml: '    trackCompletion: {via: resthook}\n',
      expected: { ...defaults, via: 'resthook', firstDelay: 60_000 },
    },
    {
      yaml: '    trackCompletion: {via: resthook, firstDelay: 1000}\n',
      expected: { ...defaults, via: 'resthook', firstDelay: 1_000 },
    },
  ])('$yaml → $expected', ({ yaml, expected }) => {
    expect(load(yaml).trackCompletion).toEqual(expected);
  });

  it('leaves the key out of the workspace when absent', () => {
    expect(Object.keys(load(''))).not.toContain('trackCompletion');
  });

  const at = 'workspaces[0].trackCompletion';
  it.each<{ yaml: string; problems: string[] }>([
    {
      yaml: '"yes"',
      problems: [`${at}: expected true, false, or a mapping of via, firstDelay, maxDelay, maxPolls, maxTime`],
    },
    { yaml: '{firstDelay: 10}', problems: [`${at}.firstDelay: expected an integer from 100 to 86400000`] },
    { yaml: '{maxPolls: 0}', problems: [`${at}.maxPolls: expected an integer from 1 to 100000`] },
    { yaml: '{maxTime: 1.5}', problems: [`${at}.maxTime: expected an integer from 1000 to 2592000000`] },
    {
      yaml: '{firstDelay: 60000, maxDelay: 1000}',
      problems: [`${at}.maxDelay: maxDelay must not be below firstDelay`],
    },
    {
      yaml: '{firstDelay: 60000, maxTime: 1000}',
      problems: [`${at}.maxTime: maxTime must not be below firstDelay`],
    },
    {
      yaml: '{via: push}',
      problems: [`${at}.via: expected poll or resthook`],
    },
    {
      yaml: '{via: resthook, maxTime: 30000}',
      problems: [`${at}.maxTime: maxTime must not be below firstDelay`],
    },
    {
      yaml: '{interval: 5}',
      problems: [`${at}.interval: unknown key; expected one of via, firstDelay, maxDelay, maxPolls, maxTime`],
    },
  ])('refuses $yaml', ({ yaml, problems }) => {
    expect(problemsOf(`    trackCompletion: ${yaml}\n`)).toEqual(problems);
  });
});
