import { describe, expect, it } from 'vitest';
import { formatPath } from '../../../src/config/format-issue.ts';

describe('formatPath', () => {
  it.each([
    { path: [], text: '(root)' },
    { path: ['smtp', 'port'], text: 'smtp.port' },
    {
      path: ['workspaces', 0, 'whitelistIngestAddresses', 2],
      text: 'workspaces[0].whitelistIngestAddresses[2]',
    },
    { path: [1, 'x'], text: '[1].x' },
  ])('$path → $text', ({ path, text }) => {
    expect(formatPath(path)).toBe(text);
  });
});
