import { describe, expect, it } from 'vitest';
import { findEarlierUpload } from '../../../src/uploader/find-earlier-upload.ts';
import { gatewayCustomIdentifier, identifiesOneUpload } from '../../../src/uploader/upload-identity.ts';
import { testWorkspace } from '../../support/test-config.ts';

describe('identifiesOneUpload', () => {
  it.each([
    ['no template: the gateway identifies the upload itself', {}, true],
    ['queue id and attachment index', { upload: { customIdentifier: '{queueId}-{attachmentIndex}' } }, true],
    [
      'both among other text',
      { upload: { customIdentifier: 'inv {subject} {queueId}/{attachmentIndex}' } },
      true,
    ],
    [
      'the Message-ID alone: a resent message has the same',
      { upload: { customIdentifier: '{messageId}' } },
      false,
    ],
    ['queue id without the attachment', { upload: { customIdentifier: '{queueId}' } }, false],
    ['a constant', { upload: { customIdentifier: 'from-mail' } }, false],
  ])('%s', (_name, settings, expected) => {
    expect(identifiesOneUpload(testWorkspace(settings))).toBe(expected);
  });

  it('is the job id when the gateway chooses', () => {
    expect(gatewayCustomIdentifier('mq1abc', 3)).toBe('mq1abc-3');
  });
});

describe('findEarlierUpload', () => {
  const document = (customIdentifier: string, workspaceId = 'ws-1') => ({
    extractor: 'invoice',
    meta: { identifier: `doc-${customIdentifier}`, customIdentifier, workspace: { identifier: workspaceId } },
    data: {},
  });
  const ok = (body: unknown) => ({ kind: 'response' as const, status: 200, headers: {}, body });

  it('finds the document an earlier attempt created', () => {
    const found = findEarlierUpload(ok({ results: [document('q-0')] }), 'q-0', 'ws-1');
    expect(found).toEqual({
      found: expect.objectContaining({ meta: expect.objectContaining({ identifier: 'doc-q-0' }) }),
    });
  });

  it('reads a bare array and snake_case keys', () => {
    const snake = { extractor: 'x', meta: { identifier: 'doc-1', custom_identifier: 'q-1' } };
    expect(findEarlierUpload(ok([snake]), 'q-1', 'ws-1')).toEqual({
      found: expect.objectContaining({ meta: expect.objectContaining({ identifier: 'doc-1' }) }),
    });
  });

  it.each([
    ['an empty list', { results: [] }],
    ['another identifier only', { results: [document('q-9')] }],
    ["another workspace's document", { results: [document('q-0', 'ws-2')] }],
  ])('finds nothing in %s', (_name, body) => {
    expect(findEarlierUpload(ok(body), 'q-0', 'ws-1')).toEqual({ found: null });
  });

  it.each([
    [
      'a network error',
      { kind: 'network' as const, error: { code: 'ECONNRESET', message: 'socket hang up' } },
    ],
    ['a 503', { kind: 'response' as const, status: 503, headers: {}, body: undefined }],
    ['something not a list', ok({ detail: 'no' })],
  ])('has no answer to rely on after %s', (_name, result) => {
    expect(findEarlierUpload(result, 'q-0', 'ws-1')).toEqual({ unknown: expect.any(String) });
  });
});
