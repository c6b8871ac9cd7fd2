import { describe, expect, it } from 'vitest';
import {
  CONVERSION_FAILED_ERROR_CODE,
  DUPLICATE_ERROR_CODE,
  decideParse,
  INVALID_DOCUMENT_ERROR_CODE,
  type ParseInput,
  type ParseSettings,
  resolveParseSettings,
  TOO_MANY_PAGES_WARNING_CODE,
} from '../../src/process-document.ts';
import { pdfWithPages } from '../../src/sample-pdf.ts';
import type { TypeCheck } from '../../src/supported-type.ts';
import { sampleFile } from '../support/sample-files.ts';

describe('resolveParseSettings', () => {
  it.each([
    {
      field: undefined,
      workspace: undefined,
      expected: { rejectDuplicates: false, rejectInvalidDocuments: false },
    },
    {
      field: true,
      workspace: undefined,
      expected: { rejectDuplicates: true, rejectInvalidDocuments: false },
    },
    {
      field: undefined,
      workspace: { rejectDuplicates: true, rejectInvalidDocuments: true },
      expected: { rejectDuplicates: true, rejectInvalidDocuments: true },
    },
    // The upload's own value wins over the workspace's, either way.
    {
      field: false,
      workspace: { rejectDuplicates: true, rejectInvalidDocuments: false },
      expected: { rejectDuplicates: false, rejectInvalidDocuments: false },
    },
    {
      field: true,
      workspace: { rejectDuplicates: false, rejectInvalidDocuments: false },
      expected: { rejectDuplicates: true, rejectInvalidDocuments: false },
    },
    // A workspace's null means "not set": nothing is rejected.
    {
      field: undefined,
      workspace: { rejectDuplicates: null, rejectInvalidDocuments: false },
      expected: { rejectDuplicates: false, rejectInvalidDocuments: false },
    },
  ])('field $field with workspace $workspace gives $expected', ({ field, workspace, expected }) => {
    expect(resolveParseSettings(field, workspace)).toEqual(expected);
  });
});

const supported = (type: string): TypeCheck => ({ supported: true, type });
const unsupported: TypeCheck = { supported: false, detail: 'Unsupported file type: application/zip.' };
const none: ParseSettings = { rejectDuplicates: false, rejectInvalidDocuments: false };
const both: ParseSettings = { rejectDuplicates: true, rejectInvalidDocuments: true };
const file = (bytes: Buffer, type: TypeCheck, duplicateOf?: string): ParseInput => ({
  kind: 'file',
  bytes,
  type,
  duplicateOf,
});
const docx = sampleFile('sample.docx');

describe('decideParse', () => {
  it.each([
    {
      name: 'an upload by url',
      input: { kind: 'url' } as const,
      settings: both,
      state: 'parsed',
      code: undefined,
    },
    {
      name: 'a whole one-page PDF',
      input: file(pdfWithPages(1), supported('pdf')),
      settings: none,
      state: 'parsed',
      code: undefined,
    },
    {
      name: 'a 10-page PDF',
      input: file(pdfWithPages(10), supported('pdf')),
      settings: none,
      state: 'parsed',
      code: undefined,
    },
    {
      name: 'an unsupported type, not rejected by the workspace',
      input: file(Buffer.from('x'), unsupported),
      settings: none,
      state: 'refused',
      code: undefined,
    },
    {
      name: 'an unsupported type in a workspace that rejects invalid documents',
      input: file(Buffer.from('x'), unsupported),
      settings: both,
      state: 'rejected',
      code: INVALID_DOCUMENT_ERROR_CODE,
    },
    {
      name: 'a duplicate with rejectDuplicates',
      input: file(pdfWithPages(1), supported('pdf'), 'orig1'),
      settings: both,
      state: 'rejected',
      code: DUPLICATE_ERROR_CODE,
    },
    {
      name: 'a duplicate without rejectDuplicates',
      input: file(pdfWithPages(1), supported('pdf'), 'orig1'),
      settings: none,
      state: 'parsed',
      code: undefined,
    },
    {
      name: 'a PDF without %%EOF',
      input: file(pdfWithPages(1, { endMarker: false }), supported('pdf')),
      settings: none,
      state: 'failed',
      code: CONVERSION_FAILED_ERROR_CODE,
    },
    {
      name: 'a DOCX whose zip is cut short',
      input: file(docx.subarray(0, docx.length - 30), supported('docx')),
      settings: none,
      state: 'failed',
      code: CONVERSION_FAILED_ERROR_CODE,
    },
    {
      name: 'a whole DOCX',
      input: file(docx, supported('docx')),
      settings: none,
      state: 'parsed',
      code: undefined,
    },
    // A PNG is not checked for structure: only PDFs and zip-based files are.
    {
      name: 'any PNG bytes',
      input: file(Buffer.from('x'), supported('png')),
      settings: none,
      state: 'parsed',
      code: undefined,
    },
    // Rejection comes before conversion: a rejected duplicate of a broken PDF costs nothing.
    {
      name: 'a broken PDF that is a duplicate',
      input: file(pdfWithPages(1, { endMarker: false }), supported('pdf'), 'orig1'),
      settings: both,
      state: 'rejected',
      code: DUPLICATE_ERROR_CODE,
    },
  ])('$name → $state $code', ({ input, settings, state, code }) => {
    const outcome = decideParse(input, settings);
    expect(outcome.state).toBe(state);
    if (outcome.state === 'rejected' || outcome.state === 'failed')
      expect(outcome.error.errorCode).toBe(code);
    if (outcome.state === 'parsed') expect(outcome.warnings).toEqual([]);
    if (outcome.state === 'refused') {
      expect(outcome.error).toEqual({
        type: 'validation_error',
        errors: [{ attr: 'file', code: 'invalid', detail: unsupported.detail }],
      });
    }
  });

  it('warns too_many_pages for an 11-page PDF, naming the count', () => {
    expect(decideParse(file(pdfWithPages(11), supported('pdf')), none)).toEqual({
      state: 'parsed',
      warnings: [
        {
          warningCode: TOO_MANY_PAGES_WARNING_CODE,
          warningDetail: 'The document has 11 pages; only the first 10 were parsed.',
        },
      ],
    });
  });

  it('names the original in a duplicate rejection', () => {
    const outcome = decideParse(file(pdfWithPages(1), supported('pdf'), 'orig1'), both);
    expect(outcome).toEqual({
      state: 'rejected',
      error: { errorCode: DUPLICATE_ERROR_CODE, errorDetail: 'The document duplicates document orig1.' },
    });
  });
});
