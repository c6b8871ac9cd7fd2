import { describe, expect, it } from 'vitest';
import { testWorkspace } from '../../../harness/test-config.ts';
import { gatewayCustomIdentifier, identifiesOneUpload } from '../../../src/uploader/upload-identity.ts';

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
