import { describe, expect, it } from 'vitest';
import type { DocumentOutcome } from '../../../src/metrics.ts';
import { documentOutcomesOf } from '../../../src/uploader/document-metrics.ts';
import type { EntryChange } from '../../../src/uploader/settle-attempt.ts';

describe('documentOutcomesOf', () => {
  it.each<[string, EntryChange, DocumentOutcome[]]>([
    ['uploaded, not parsed yet', { state: 'uploaded', ready: false }, ['uploaded']],
    [
      'uploaded with a wait: true answer that is parsed',
      { state: 'uploaded', ready: true },
      ['uploaded', 'parsed'],
    ],
    ['rejected by the service', { state: 'rejected' }, ['rejected']],
    ['failed for good', { state: 'failed', reason: 'HTTP 400' }, ['failed']],
    ['back to the queue for a retry', { state: 'queued', reason: 'HTTP 503' }, []],
    ['marked uploading at the start of a run', { state: 'uploading' }, []],
    ['a change that leaves the state alone', { completion: null }, []],
  ])('%s → %j', (_case, change, outcomes) => {
    expect(documentOutcomesOf(change)).toEqual(outcomes);
  });
});
