import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { STEP_SOURCES } from '../footprint.ts';

const root = new URL('../../', import.meta.url);

describe('the footprint benchmark', () => {
  it('imports in steps only sources that exist, each one it builds', async () => {
    for (const source of STEP_SOURCES)
      expect(existsSync(new URL(`src/${source}.ts`, root)), source).toBe(true);
    const steps = await readFile(new URL('bench/measure/import-steps.mjs', root), 'utf8');
    const imported = [...steps.matchAll(/entry\('([^']+)'\)/g)].map((match) => match[1]);
    expect(imported.length).toBeGreaterThan(0);
    for (const source of imported) expect(STEP_SOURCES, source).toContain(source);
  });
});
