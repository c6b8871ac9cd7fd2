import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkLayers, findCycles, readImports } from '../../../scripts/check-layers.ts';

describe('check-layers', () => {
  it('finds a cycle between files and between folders', () => {
    expect(
      findCycles([
        { from: 'a.ts', to: 'b.ts' },
        { from: 'b.ts', to: 'c.ts' },
        { from: 'c.ts', to: 'a.ts' },
        { from: 'c.ts', to: 'd.ts' },
      ]),
    ).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    const problems = checkLayers([
      { from: 'sender/a.ts', to: 'record/b.ts' },
      { from: 'record/b.ts', to: 'sender/c.ts' },
    ]);
    expect(problems).toContain('folder cycle: record <-> sender');
  });

  it('refuses an import from a lower layer into a higher one, type-only or not', () => {
    expect(checkLayers([{ from: 'smtp/create-smtp-server.ts', to: 'config/schema.ts' }])).toEqual([
      'smtp/create-smtp-server.ts imports config/schema.ts: smtp (layer 5) may not import config (layer 6)',
    ]);
  });

  it('refuses imports between folders of one layer, and names a folder it does not know', () => {
    expect(checkLayers([{ from: 'intake/a.ts', to: 'uploader/b.ts' }])).toHaveLength(1);
    expect(checkLayers([{ from: 'extra/a.ts', to: 'mail/b.ts' }])).toEqual([
      'extra is in no layer: add it to LAYERS',
    ]);
  });

  it('allows imports downwards and within the foundation', () => {
    expect(
      checkLayers([
        { from: 'gateway.ts', to: 'smtp/create-smtp-server.ts' },
        { from: 'uploader/upload-worker.ts', to: 'parsing-api/api-result.ts' },
        { from: 'metrics.ts', to: 'errors.ts' },
      ]),
    ).toEqual([]);
  });

  it('reads every kind of relative import: static, type-only and dynamic', () => {
    const edges = readImports(join(import.meta.dirname, '../../../src'));
    const from = (file: string) => edges.filter((edge) => edge.from === file).map((edge) => edge.to);
    expect(from('intake/route-table.ts')).toContain('sender/admit-sender.ts');
    expect(from('smtp/create-smtp-server.ts')).toContain('intake/receive-message.ts');
  });

  it('passes on the gateway as it is', () => {
    expect(checkLayers(readImports(join(import.meta.dirname, '../../../src')))).toEqual([]);
  });
});
