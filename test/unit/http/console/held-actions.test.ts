import { describe, expect, it } from 'vitest';
import { refusalReplayHint } from '../../../../src/http/console/held-actions.ts';
import type { RefusalEntry } from '../../../../src/record/refusal-log.ts';

const entry = (over: Partial<RefusalEntry>): RefusalEntry => ({
  id: '1-0',
  at: '2026-01-01T00:00:00.000Z',
  stage: 'rcpt',
  code: 'recipient_unknown',
  reply: '550 5.1.1 no such ingest address here',
  remoteAddress: '192.0.2.1',
  helo: 'mx.example',
  mailFrom: 'a@example.com',
  recipients: ['in@ingest.example'],
  headerFrom: null,
  sessionId: 's',
  ...over,
});

const entities: Record<string, string> = {
  '&#39;': "'",
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&amp;': '&',
};
const asShown = (text: string) =>
  text.replace(/&#39;|&lt;|&gt;|&quot;|&amp;/g, (entity) => entities[entity] ?? entity);

describe('refusalReplayHint', () => {
  it.each([
    [
      'plain addresses as they are',
      'a@example.com',
      'in@ingest.example',
      '--to in@ingest.example --from a@example.com',
    ],
    [
      'an address with a quote or space, quoted for the shell',
      "o'brien x@example.com",
      'in@ingest.example',
      `--from 'o'\\''brien x@example.com'`,
    ],
    ['markup escaped in the page', 'a@example.com', '<b>@ingest.example', "--to '<b>@ingest.example'"],
  ])('shows %s', (_name, mailFrom, recipient, expected) => {
    const hint = refusalReplayHint(entry({ mailFrom, recipients: [recipient] }))?.text ?? '';
    // The command as the browser shows it: every value went in escaped.
    expect(hint).not.toContain('<b>');
    expect(asShown(hint)).toContain(expected);
  });

  it('offers none for a refusal before any recipient, and no --from for the null sender', () => {
    expect(refusalReplayHint(entry({ stage: 'connect', recipients: [] }))).toBeNull();
    expect(refusalReplayHint(entry({ mailFrom: null }))?.text).not.toContain('--from');
  });
});
