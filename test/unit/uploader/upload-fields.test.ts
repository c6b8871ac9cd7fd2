import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load-config.ts';
import type { WorkspaceConfig } from '../../../src/config/schema.ts';
import { type UploadContext, uploadFields, uploadQuery } from '../../../src/uploader/upload-fields.ts';

/** From a workspace's configuration to the exact list of form parts sent (parsing-api-facts.md). */

const HEAD = 'api:\n  mock: true\nworkspaces:\n  - identifier: ws-1\n    ingestEmail: in@ingest.example\n';

function workspace(yaml: string): WorkspaceConfig {
  const config = parseConfig({ text: `${HEAD}${yaml}`, env: {}, source: 'inline' });
  const [first] = config.workspaces;
  if (!first) throw new Error('no workspace');
  return first;
}

const context: UploadContext = {
  fileName: 'Rechnung März.pdf',
  receivedAt: new Date('2025-03-01T10:00:00.000Z'),
  queueId: 'mq7x2k3l0a1b2c',
  messageId: 'CAF=abc@mail.example',
  from: 'ann@acme.example',
  subject: 'Invoice 42',
  attachmentIndex: 2,
  entry: 3,
};

/**
 * What every upload starts with: the workspace, the file name, wait=false and the gateway's
 * own customIdentifier (queue id and entry), by which a retry finds an earlier attempt's document.
 */
const base: Array<[string, string]> = [
  ['workspace', 'ws-1'],
  ['fileName', 'Rechnung März.pdf'],
  ['wait', 'false'],
  ['customIdentifier', 'mq7x2k3l0a1b2c-3'],
];

describe('uploadFields', () => {
  it.each<{ name: string; yaml: string; expected: Array<[string, string]> }>([
    { name: 'nothing configured', yaml: '', expected: base },
    {
      name: 'workspace-level collection and documentType',
      yaml: '    collection: col-1\n    documentType: invoice\n',
      expected: [
        ['workspace', 'ws-1'],
        ['collection', 'col-1'],
        ['documentType', 'invoice'],
        ...base.slice(1),
      ],
    },
    {
      name: 'upload.collection and upload.documentType win over the workspace-level keys',
      yaml: '    collection: outer-col\n    documentType: outer-type\n    upload: {collection: inner-col, documentType: inner-type}\n',
      expected: [
        ['workspace', 'ws-1'],
        ['collection', 'inner-col'],
        ['documentType', 'inner-type'],
        ...base.slice(1),
      ],
    },
    {
      name: 'upload.documentType null falls back to the workspace-level one',
      yaml: '    documentType: outer-type\n    upload: {documentType: null}\n',
      expected: [['workspace', 'ws-1'], ['documentType', 'outer-type'], ...base.slice(1)],
    },
    {
      name: 'wait true',
      yaml: '    upload: {wait: true}\n',
      expected: [
        ['workspace', 'ws-1'],
        ['fileName', 'Rechnung März.pdf'],
        ['wait', 'true'],
        ['customIdentifier', 'mq7x2k3l0a1b2c-3'],
      ],
    },
    {
      name: 'customIdentifier rendered from the message',
      yaml: '    upload: {customIdentifier: "{queueId}/{attachmentIndex} {fileName} <{messageId}> {from}: {subject} @{workspace} {{x}}"}\n',
      expected: [
        ...base.slice(0, 3),
        [
          'customIdentifier',
          'mq7x2k3l0a1b2c/2 Rechnung März.pdf <CAF=abc@mail.example> ann@acme.example: Invoice 42 @ws-1 {x}',
        ],
      ],
    },
    {
      name: 'expiryTime as a duration, from the receipt time',
      yaml: '    upload: {expiryTime: 30d}\n',
      expected: [...base, ['expiryTime', '2025-03-31T10:00:00.000Z']],
    },
    {
      name: 'expiryTime as a date-time, as written',
      yaml: '    upload: {expiryTime: "2030-01-31T08:30:00+02:00"}\n',
      expected: [...base, ['expiryTime', '2030-01-31T08:30:00+02:00']],
    },
    { name: 'language', yaml: '    upload: {language: zh-CN}\n', expected: [...base, ['language', 'zh-cn']] },
    {
      name: 'booleans as "true"/"false"',
      yaml: '    upload: {rejectDuplicates: false, lowPriority: true, compact: false, enableValidationTool: true, useOcr: false}\n',
      expected: [
        ...base,
        ['rejectDuplicates', 'false'],
        ['lowPriority', 'true'],
        ['compact', 'false'],
        ['enableValidationTool', 'true'],
        ['useOcr', 'false'],
      ],
    },
    {
      name: 'deleteAfterParse with wait',
      yaml: '    upload: {wait: true, deleteAfterParse: true}\n',
      expected: [
        ['workspace', 'ws-1'],
        ['fileName', 'Rechnung März.pdf'],
        ['wait', 'true'],
        ['customIdentifier', 'mq7x2k3l0a1b2c-3'],
        ['deleteAfterParse', 'true'],
      ],
    },
    {
      name: 'null means not sent',
      yaml: '    upload: {rejectDuplicates: null, useOcr: null, language: null, llmHint: null, expiryTime: null, limitToExamples: null}\n',
      expected: base,
    },
    {
      name: 'regionBias as one part of JSON text',
      yaml: '    upload: {regionBias: {strict: true, country: vn, squareCoordinates: [1.5, 2]}}\n',
      expected: [...base, ['regionBias', '{"country":"vn","squareCoordinates":[1.5,2],"strict":true}']],
    },
    {
      name: 'llmHint',
      yaml: '    upload: {llmHint: "Totals in VND"}\n',
      expected: [...base, ['llmHint', 'Totals in VND']],
    },
    {
      name: 'limitToExamples as one part per identifier',
      yaml: '    upload: {limitToExamples: [doc-a, doc-b, doc-c]}\n',
      expected: [
        ...base,
        ['limitToExamples', 'doc-a'],
        ['limitToExamples', 'doc-b'],
        ['limitToExamples', 'doc-c'],
      ],
    },
    {
      name: 'warningMessages as one part of JSON text per warning',
      yaml: '    upload: {warningMessages: [{warningDetail: "ten pages", warningCode: too_many_pages}, {warningCode: other}]}\n',
      expected: [
        ...base,
        ['warningMessages', '{"warningCode":"too_many_pages","warningDetail":"ten pages"}'],
        ['warningMessages', '{"warningCode":"other"}'],
      ],
    },
    { name: 'snake_case is not a form field', yaml: '    upload: {snake_case: true}\n', expected: base },
  ])('$name', ({ yaml, expected }) => {
    expect(uploadFields(workspace(yaml), context)).toEqual(expected);
  });

  it('sends every configurable field in the order of parsing-api.md §4.2', () => {
    const all = workspace(`    upload:
      warningMessages: [{warningCode: w}]
      limitToExamples: [e]
      llmHint: h
      useOcr: true
      enableValidationTool: true
      deleteAfterParse: true
      compact: true
      lowPriority: true
      regionBias: {country: vn}
      rejectDuplicates: true
      language: en
      expiryTime: 1h
      customIdentifier: c
      wait: true
      documentType: d
      collection: c
`);
    expect(uploadFields(all, context).map(([name]) => name)).toEqual([
      'workspace',
      'collection',
      'documentType',
      'fileName',
      'wait',
      'customIdentifier',
      'expiryTime',
      'language',
      'rejectDuplicates',
      'regionBias',
      'lowPriority',
      'compact',
      'deleteAfterParse',
      'enableValidationTool',
      'useOcr',
      'llmHint',
      'limitToExamples',
      'warningMessages',
    ]);
  });

  it('renders absent message facts as empty text', () => {
    const fields = uploadFields(
      workspace('    upload: {customIdentifier: "[{messageId}|{from}|{subject}]"}\n'),
      {
        ...context,
        messageId: null,
        from: null,
        subject: null,
      },
    );
    expect(fields).toContainEqual(['customIdentifier', '[||]']);
  });
});

describe('uploadQuery', () => {
  it.each([
    { yaml: '', snakeCase: false },
    { yaml: '    upload: {snake_case: false}\n', snakeCase: false },
    { yaml: '    upload: {snake_case: true}\n', snakeCase: true },
  ])('$yaml → snakeCase $snakeCase', ({ yaml, snakeCase }) => {
    expect(uploadQuery(workspace(yaml))).toEqual({ snakeCase });
  });
});
