import { toSnakeCase } from '@ingest-gateway/mock-parsing-api';
import { describe, expect, it } from 'vitest';
import { camelKey, parseDocument } from '../../../src/parsing-api/document-schema.ts';

/** A Document (docs/parsing-api.md, "The Document") as the service writes it by default (camelCase). */
const camel = {
  extractor: 'invoice',
  meta: {
    identifier: 'AbCd1234',
    customIdentifier: 'mq7-1',
    fileName: 'invoice.pdf',
    ready: true,
    readyDt: '2025-03-01T10:00:05Z',
    failed: true,
    expiryTime: '2025-03-31T10:00:00Z',
    language: 'en',
    isOcrd: false,
    ocrConfidence: 0.97,
    parentDocument: { identifier: 'P1', customIdentifier: null },
    childDocuments: [{ identifier: 'C1', customIdentifier: 'child' }],
    workspace: { identifier: 'ws-1', name: 'Invoices' },
    errorCode: 'document_conversion_failed',
    errorDetail: 'could not convert',
    sourceEmailAddress: 'ann@acme.example',
  },
  data: { invoice_number: 'N-1', lineItems: [] },
  error: { errorCode: 'document_conversion_failed', errorDetail: 'could not convert' },
  warnings: [{ warningCode: 'too_many_pages', warningDetail: 'only the first 10 pages' }],
};

describe('parseDocument', () => {
  it('reads a camelCase Document', () => {
    const document = parseDocument(camel);
    expect(document?.meta).toMatchObject({
      identifier: 'AbCd1234',
      readyDt: '2025-03-01T10:00:05Z',
      isOcrd: false,
      childDocuments: [{ identifier: 'C1', customIdentifier: 'child' }],
    });
    expect(document?.error).toEqual(camel.error);
    expect(document?.warnings).toEqual(camel.warnings);
  });

  it('reads the same Document in snake_case (?snake_case=true) alike', () => {
    const snake = toSnakeCase(camel);
    // The conversion under test is real: the keys the gateway reads have changed.
    expect(JSON.stringify(snake)).toContain('"ready_dt"');
    expect(JSON.stringify(snake)).toContain('"warning_code"');
    // Only `data` differs: it is the parse result, passed on as the service wrote it.
    expect({ ...parseDocument(snake), data: null }).toEqual({ ...parseDocument(camel), data: null });
  });

  it('reads a handwritten snake_case Document', () => {
    const document = parseDocument({
      extractor: 'invoice',
      meta: {
        identifier: 'S1',
        custom_identifier: 'c',
        ready: true,
        ready_dt: '2025-01-01T00:00:00Z',
        failed: false,
      },
      error: { error_code: 'document_conversion_failed', error_detail: 'no' },
      warnings: [{ warning_code: 'too_many_pages', warning_detail: 'ten' }],
    });
    expect(document).toMatchObject({
      meta: {
        identifier: 'S1',
        customIdentifier: 'c',
        ready: true,
        readyDt: '2025-01-01T00:00:00Z',
        failed: false,
      },
      error: { errorCode: 'document_conversion_failed', errorDetail: 'no' },
      warnings: [{ warningCode: 'too_many_pages', warningDetail: 'ten' }],
    });
  });

  it('keeps the keys of data, the parse result, as the service wrote them', () => {
    expect(parseDocument(camel)?.data).toEqual({ invoice_number: 'N-1', lineItems: [] });
    expect(parseDocument({ ...(toSnakeCase(camel) as object), data: { line_items: [] } })?.data).toEqual({
      line_items: [],
    });
  });

  it.each([
    { name: 'no meta', body: { extractor: 'x' } },
    { name: 'no identifier', body: { meta: { ready: true } } },
    { name: 'snake_case without identifier', body: { meta: { ready_dt: 'x', custom_identifier: 'y' } } },
    { name: 'a list', body: [camel] },
    { name: 'text', body: 'OK' },
    { name: 'nothing', body: undefined },
  ])('refuses $name', ({ body }) => {
    expect(parseDocument(body)).toBeNull();
  });

  it('takes nulls for every optional field', () => {
    expect(
      parseDocument({
        extractor: null,
        meta: { identifier: 'X', ready_dt: null },
        error: null,
        warnings: null,
      }),
    ).toMatchObject({ meta: { identifier: 'X', readyDt: null }, error: null, warnings: null });
  });
});

describe('camelKey', () => {
  it.each([
    ['ready_dt', 'readyDt'],
    ['is_ocrd', 'isOcrd'],
    ['error_code', 'errorCode'],
    ['source_email_address', 'sourceEmailAddress'],
    ['readyDt', 'readyDt'],
    ['identifier', 'identifier'],
    ['page2_image', 'page2Image'],
  ])('%s → %s', (key, expected) => {
    expect(camelKey(key)).toBe(expected);
  });
});
