import { describe, expect, it } from 'vitest';
import { createProgress } from '../../../src/cli/progress.ts';

function sink() {
  const written: string[] = [];
  return { written, stream: { write: (text: string) => written.push(text) } };
}

describe('createProgress', () => {
  it('on a terminal rewrites one line per step and clears it at the last', () => {
    const { written, stream } = sink();
    const progress = createProgress({ stream, terminal: true, label: 'retrying' });
    progress.advance(0, 2);
    progress.advance(1, 2);
    progress.advance(2, 2);
    progress.end();
    expect(written).toEqual([
      '\r\u001b[2Kretrying: 0/2',
      '\r\u001b[2Kretrying: 1/2',
      '\r\u001b[2Kretrying: 2/2\r\u001b[2K',
    ]);
  });

  it('clears a line left shown when the operation ends early', () => {
    const { written, stream } = sink();
    const progress = createProgress({ stream, terminal: true, label: 'reading' });
    progress.advance(1, 5);
    progress.end();
    progress.end();
    expect(written).toEqual(['\r\u001b[2Kreading: 1/5', '\r\u001b[2K']);
  });

  it('writes nothing when not on a terminal', () => {
    const { written, stream } = sink();
    const progress = createProgress({ stream, terminal: false, label: 'retrying' });
    progress.advance(0, 1);
    progress.advance(1, 1);
    progress.end();
    expect(written).toEqual([]);
  });
});
