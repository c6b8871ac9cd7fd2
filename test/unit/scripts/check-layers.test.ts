import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkBoundaries,
  checkLayers,
  findCycles,
  readImports,
  readRepositoryImports,
} from '../../../scripts/check-layers.ts';

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
      'smtp/create-smtp-server.ts imports config/schema.ts: smtp (layer 6) may not import config (layer 7)',
    ]);
  });

  it('keeps Redis plumbing below the message store, and the store below the queue', () => {
    expect(checkLayers([{ from: 'redis/connections.ts', to: 'record/keys.ts' }])).toEqual([
      'redis/connections.ts imports record/keys.ts: redis (layer 1) may not import record (layer 2)',
    ]);
    expect(checkLayers([{ from: 'store/message-store.ts', to: 'queue/producer.ts' }])).toEqual([
      'store/message-store.ts imports queue/producer.ts: store (layer 3) may not import queue (layer 4)',
    ]);
    expect(checkLayers([{ from: 'queue/producer.ts', to: 'store/message-store.ts' }])).toEqual([]);
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

  it('keeps tests and benchmarks apart, sharing harness/, and the gateway and the mock to themselves', () => {
    expect(
      checkBoundaries([
        { from: 'test/integration/a.test.ts', to: 'harness/redis-server.ts' },
        { from: 'bench/intake.ts', to: 'harness/smtp-session.ts' },
        { from: 'harness/messages.ts', to: 'test/fixtures/files/sample.pdf' },
        { from: 'bench/test/pieces.test.ts', to: 'bench/load/smtp-load.ts' },
      ]),
    ).toEqual([]);
    expect(
      checkBoundaries([
        { from: 'test/unit/a.test.ts', to: 'bench/load/smtp-load.ts' },
        { from: 'bench/intake.ts', to: 'test/integration/helper.ts' },
        { from: 'src/main.ts', to: 'packages/mock-parsing-api/src/faults.ts' },
        { from: 'packages/mock-parsing-api/src/faults.ts', to: 'src/errors.ts' },
      ]),
    ).toEqual([
      'test/unit/a.test.ts imports bench/load/smtp-load.ts: test/ may not import bench',
      'bench/intake.ts imports test/integration/helper.ts: bench/ may not import test',
      'src/main.ts imports packages/mock-parsing-api/src/faults.ts: src/ may not import packages/mock-parsing-api',
      'packages/mock-parsing-api/src/faults.ts imports src/errors.ts: packages/mock-parsing-api/ may not import src',
    ]);
  });

  it('finds no crossing in the repository as it is', () => {
    const edges = readRepositoryImports(join(import.meta.dirname, '../../..'));
    expect(edges.some(({ from }) => from.startsWith('bench/'))).toBe(true);
    expect(checkBoundaries(edges)).toEqual([]);
  });
});
