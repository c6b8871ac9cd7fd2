import { describe, expect, it } from 'vitest';
import { testWorkspace, type WorkspaceInput } from '../../../harness/test-config.ts';
import {
  type UploadContext,
  uploadFields,
  uploadQuery,
  withDocumentType,
  withSubaddress,
} from '../../../src/uploader/upload-fields.ts';
import type { UploadWorkspace } from '../../../src/uploader/upload-settings-schema.ts';

/** From a workspace's configuration to the exact list of form parts sent (docs/parsing-api.md). */

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
  it.each<{ name: string; settings: Partial<WorkspaceInput>; expected: Array<[string, string]> }>([
    { name: 'nothing configured', settings: {}, expected: base },
    {
      name: 'workspace-level collection and documentType',
      settings: { collection: 'col-1', documentType: 'invoice' },
      expected: [
        ['workspace', 'ws-1'],
        ['collection', 'col-1'],
        ['documentType', 'invoice'],
        ...base.slice(1),
      ],
    },
    {
      name: 'upload.collection and upload.documentType win over the workspace-level keys',
      settings: {
        collection: 'outer-col',
        documentType: 'outer-type',
        upload: { collection: 'inner-col', documentType: 'inner-type' },
      },
      expected: [
        ['workspace', 'ws-1'],
        ['collection', 'inner-col'],
        ['documentType', 'inner-type'],
        ...base.slice(1),
      ],
    },
    {
      name: 'upload.documentType null falls back to the workspace-level one',
      settings: { documentType: 'outer-type', upload: { documentType: null } },
      expected: [['workspace', 'ws-1'], ['documentType', 'outer-type'], ...base.slice(1)],
    },
    {
      name: 'wait true',
      settings: { upload: { wait: true } },
      expected: [
        ['workspace', 'ws-1'],
        ['fileName', 'Rechnung März.pdf'],
        ['wait', 'true'],
        ['customIdentifier', 'mq7x2k3l0a1b2c-3'],
      ],
    },
    {
      name: 'customIdentifier rendered from the message',
      settings: {
        upload: {
          customIdentifier:
            '{queueId}/{attachmentIndex} {fileName} <{messageId}> {from}: {subject} @{workspace} {{x}}',
        },
      },
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
      settings: { upload: { expiryTime: '30d' } },
      expected: [...base, ['expiryTime', '2025-03-31T10:00:00.000Z']],
    },
    {
      name: 'expiryTime as a date-time, as written',
      settings: { upload: { expiryTime: '2030-01-31T08:30:00+02:00' } },
      expected: [...base, ['expiryTime', '2030-01-31T08:30:00+02:00']],
    },
    {
      name: 'language',
      settings: { upload: { language: 'zh-CN' } },
      expected: [...base, ['language', 'zh-cn']],
    },
    {
      name: 'booleans as "true"/"false"',
      settings: {
        upload: {
          rejectDuplicates: false,
          lowPriority: true,
          compact: false,
          enableValidationTool: true,
          useOcr: false,
        },
      },
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
      settings: { upload: { wait: true, deleteAfterParse: true } },
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
      settings: {
        upload: {
          rejectDuplicates: null,
          useOcr: null,
          language: null,
          llmHint: null,
          expiryTime: null,
          limitToExamples: null,
        },
      },
      expected: base,
    },
    {
      name: 'regionBias as one part of JSON text',
      settings: { upload: { regionBias: { strict: true, country: 'vn', squareCoordinates: [1.5, 2] } } },
      expected: [...base, ['regionBias', '{"country":"vn","squareCoordinates":[1.5,2],"strict":true}']],
    },
    {
      name: 'llmHint',
      settings: { upload: { llmHint: 'Totals in VND' } },
      expected: [...base, ['llmHint', 'Totals in VND']],
    },
    {
      name: 'limitToExamples as one part per identifier',
      settings: { upload: { limitToExamples: ['doc-a', 'doc-b', 'doc-c'] } },
      expected: [
        ...base,
        ['limitToExamples', 'doc-a'],
        ['limitToExamples', 'doc-b'],
        ['limitToExamples', 'doc-c'],
      ],
    },
    {
      name: 'warningMessages as one part of JSON text per warning',
      settings: {
        upload: {
          warningMessages: [
            { warningDetail: 'ten pages', warningCode: 'too_many_pages' },
            { warningCode: 'other' },
          ],
        },
      },
      expected: [
        ...base,
        ['warningMessages', '{"warningCode":"too_many_pages","warningDetail":"ten pages"}'],
        ['warningMessages', '{"warningCode":"other"}'],
      ],
    },
    { name: 'snake_case is not a form field', settings: { upload: { snake_case: true } }, expected: base },
  ])('$name', ({ settings, expected }) => {
    expect(uploadFields(testWorkspace(settings), context)).toEqual(expected);
  });

  it('sends every configurable field in the order of the upload form', () => {
    const all = testWorkspace({
      upload: {
        warningMessages: [{ warningCode: 'w' }],
        limitToExamples: ['e'],
        llmHint: 'h',
        useOcr: true,
        enableValidationTool: true,
        deleteAfterParse: true,
        compact: true,
        lowPriority: true,
        regionBias: { country: 'vn' },
        rejectDuplicates: true,
        language: 'en',
        expiryTime: '1h',
        customIdentifier: 'c',
        wait: true,
        documentType: 'd',
        collection: 'c',
      },
    });
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
      testWorkspace({ upload: { customIdentifier: '[{messageId}|{from}|{subject}]' } }),
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
    { settings: {}, snakeCase: false },
    { settings: { upload: { snake_case: false } }, snakeCase: false },
    { settings: { upload: { snake_case: true } }, snakeCase: true },
  ])('$settings → snakeCase $snakeCase', ({ settings, snakeCase }) => {
    expect(uploadQuery(testWorkspace(settings))).toEqual({ snakeCase });
  });
});

describe('withSubaddress', () => {
  const workspace = testWorkspace({
    collection: 'col-outer',
    documentType: 'outer',
    upload: { language: 'en', llmHint: 'Amounts in EUR', documentType: 'invoice', snake_case: true },
    subaddresses: {
      Receipts: { documentType: 'receipt', llmHint: 'Shop receipts' },
      contracts: { collection: 'col-contracts', useOcr: true, limitToExamples: ['ex-1'] },
    },
  });
  const sent = (tag: string | undefined) => uploadFields(withSubaddress(workspace, tag), context);

  it.each<{ name: string; tag: string | undefined; expected: Array<[string, string]> }>([
    {
      name: 'no tag: the workspace fields',
      tag: undefined,
      expected: [
        ['workspace', 'ws-1'],
        ['collection', 'col-outer'],
        ['documentType', 'invoice'],
        ...base.slice(1),
        ['language', 'en'],
        ['llmHint', 'Amounts in EUR'],
      ],
    },
    {
      name: "a tag's fields over the upload block, field by field, the tag without case",
      tag: 'receipts',
      expected: [
        ['workspace', 'ws-1'],
        ['collection', 'col-outer'],
        ['documentType', 'receipt'],
        ...base.slice(1),
        ['language', 'en'],
        ['llmHint', 'Shop receipts'],
      ],
    },
    {
      name: 'a tag with other fields',
      tag: 'CONTRACTS',
      expected: [
        ['workspace', 'ws-1'],
        ['collection', 'col-contracts'],
        ['documentType', 'invoice'],
        ...base.slice(1),
        ['language', 'en'],
        ['useOcr', 'true'],
        ['llmHint', 'Amounts in EUR'],
        ['limitToExamples', 'ex-1'],
      ],
    },
  ])('$name', ({ tag, expected }) => {
    expect(sent(tag)).toEqual(expected);
  });

  it('uploads an unknown tag with the workspace fields, and keeps snake_case the workspace’s', () => {
    expect(sent('unknown')).toEqual(sent(undefined));
    expect(withSubaddress(workspace, 'unknown')).toBe(workspace);
    expect(uploadQuery(withSubaddress(workspace, 'receipts'))).toEqual({ snakeCase: true });
  });

  it('leaves a workspace without subaddresses as it is', () => {
    const plain = testWorkspace({ upload: { documentType: 'invoice' } });
    expect(withSubaddress(plain, 'receipts')).toBe(plain);
  });
});

describe('withDocumentType', () => {
  const workspace = testWorkspace({
    documentType: 'outer',
    upload: { language: 'en', documentType: 'invoice' },
    subaddresses: { receipts: { documentType: 'receipt', llmHint: 'Shop receipts' } },
  });
  const documentTypeSent = (ws: UploadWorkspace) =>
    uploadFields(ws, context).filter(([name]) => name === 'documentType');

  it('sends the type of the address, over the workspace’s and a tag’s, and keeps the other fields', () => {
    expect(documentTypeSent(withDocumentType(workspace, 'dt-1'))).toEqual([['documentType', 'dt-1']]);
    const tagged = withDocumentType(withSubaddress(workspace, 'receipts'), 'dt-1');
    expect(documentTypeSent(tagged)).toEqual([['documentType', 'dt-1']]);
    expect(uploadFields(tagged, context)).toContainEqual(['llmHint', 'Shop receipts']);
    expect(uploadFields(tagged, context)).toContainEqual(['language', 'en']);
  });

  it('leaves the workspace as it is without one', () => {
    expect(withDocumentType(workspace, undefined)).toBe(workspace);
  });
});
