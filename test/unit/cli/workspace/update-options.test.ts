import { describe, expect, it } from 'vitest';
import { parseUpdateOptions, type UpdateOptionValues } from '../../../../src/cli/workspace/update-options.ts';

describe('parseUpdateOptions: the fields given, and only those', () => {
  it.each<{ values: UpdateOptionValues; update: Record<string, unknown> }>([
    { values: { name: 'Invoices EU' }, update: { name: 'Invoices EU' } },
    { values: { visibility: 'private' }, update: { visibility: 'private' } },
    { values: { visibility: 'organization' }, update: { visibility: 'organization' } },
    { values: { 'reject-invalid-documents': 'true' }, update: { rejectInvalidDocuments: true } },
    { values: { 'reject-invalid-documents': 'false' }, update: { rejectInvalidDocuments: false } },
    { values: { 'reject-duplicates': 'true' }, update: { rejectDuplicates: true } },
    { values: { 'reject-duplicates': 'false' }, update: { rejectDuplicates: false } },
    { values: { 'reject-duplicates': 'null' }, update: { rejectDuplicates: null } },
    { values: { 'document-types': 'inv,credit-note' }, update: { documentTypes: ['inv', 'credit-note'] } },
    { values: { 'document-types': ' inv , cn ' }, update: { documentTypes: ['inv', 'cn'] } },
    { values: { 'document-types': '' }, update: { documentTypes: [] } },
    {
      values: { whitelist: '*@acme.example,ap@partner.example' },
      update: { whitelistIngestAddresses: ['*@acme.example', 'ap@partner.example'] },
    },
    { values: { whitelist: 'null' }, update: { whitelistIngestAddresses: null } },
    { values: { whitelist: '' }, update: { whitelistIngestAddresses: [] } },
    { values: { 'document-splitter': 'split-1' }, update: { documentSplitter: 'split-1' } },
    {
      values: { name: 'N', visibility: 'private', 'reject-duplicates': 'null', whitelist: '*@a.example' },
      update: {
        name: 'N',
        visibility: 'private',
        rejectDuplicates: null,
        whitelistIngestAddresses: ['*@a.example'],
      },
    },
  ])('$values → $update', ({ values, update }) => {
    expect(parseUpdateOptions(values)).toEqual({ ok: true, update });
  });
});

describe('parseUpdateOptions: refusals name the option', () => {
  it.each<{ values: UpdateOptionValues; problem: RegExp }>([
    { values: { name: '' }, problem: /^--name must not be empty/ },
    { values: { name: '   ' }, problem: /^--name must not be empty/ },
    {
      values: { visibility: 'public' },
      problem: /^--visibility must be organization or private, not "public"/,
    },
    { values: { visibility: 'Private' }, problem: /^--visibility/ },
    {
      values: { 'reject-invalid-documents': 'yes' },
      problem: /^--reject-invalid-documents must be true or false/,
    },
    { values: { 'reject-invalid-documents': 'null' }, problem: /^--reject-invalid-documents/ },
    { values: { 'reject-duplicates': 'TRUE' }, problem: /^--reject-duplicates must be true, false or null/ },
    { values: { 'document-types': 'a,,b' }, problem: /^--document-types has an empty entry/ },
    { values: { 'document-types': 'a,' }, problem: /^--document-types has an empty entry/ },
    {
      values: { whitelist: 'acme.example' },
      problem: /^--whitelist: allow-list rule "acme.example" has no "@"/,
    },
    {
      values: { whitelist: '*@acme.example,!x@y.example' },
      problem: /^--whitelist: .*"!x@y.example".*negation/,
    },
    { values: { whitelist: 'a{b}@acme.example' }, problem: /^--whitelist: .*brace/ },
    { values: { whitelist: '*@acme.example,,' }, problem: /^--whitelist has an empty entry/ },
    { values: { 'document-splitter': '' }, problem: /^--document-splitter must not be empty/ },
    { values: {}, problem: /^nothing to update: give at least one of --name, --visibility/ },
  ])('$values', ({ values, problem }) => {
    const result = parseUpdateOptions(values);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([expect.stringMatching(problem)]);
  });

  it('lists every bad option at once', () => {
    const result = parseUpdateOptions({ visibility: 'public', 'reject-duplicates': 'maybe', name: 'fine' });
    expect(result).toEqual({
      ok: false,
      problems: [expect.stringMatching(/^--visibility/), expect.stringMatching(/^--reject-duplicates/)],
    });
  });
});
