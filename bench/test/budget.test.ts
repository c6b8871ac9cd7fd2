import { afterEach, describe, expect, it, vi } from 'vitest';
import { budgetBenchmark } from '../budget.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the budget benchmark', () => {
  it("prints every step of the gateway's own work with CPU per message for both sizes", async () => {
    const printed: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((text: string) => {
      printed.push(text);
    });
    await budgetBenchmark({ BENCH_SMALL: '3', BENCH_LARGE: '1' });
    const table = printed.join('\n');
    expect(table).toContain('mean of 3 x 100 KB and 1 x 5 MB');
    for (const step of [
      'SHA-256 of the raw message',
      'bare CR / LF scan',
      'base64 decoding of the attachment',
      'SHA-256 of the decoded attachment',
      'the MIME walk',
    ]) {
      const row = table.split('\n').find((line) => line.startsWith(step));
      expect(row, step).toBeDefined();
      // Two figures, 100 KB and 5 MB, and a 5 MB message costs more than a 100 KB one.
      const [small, large] = (row ?? '')
        .trim()
        .split(/\s{2,}/)
        .slice(-2)
        .map(Number);
      expect(small).toBeGreaterThan(0);
      expect(large).toBeGreaterThan(small ?? 0);
    }
  });
});
