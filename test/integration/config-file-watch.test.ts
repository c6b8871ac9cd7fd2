import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LogSink } from '../../harness/gateway-harness.ts';
import { until } from '../../harness/http-state.ts';
import { kubernetesVolume } from '../../harness/kubernetes-volume.ts';
import { type FileWatch, touchesWatched, watchFiles } from '../../src/config/watch-files.ts';
import { createLogger } from '../../src/logger.ts';

/** The directory watch under the configuration reload, on real files changed as tools change them. */
describe('watching files for a reload', () => {
  let dir: string;
  let watch: FileWatch | undefined;
  let reports: string[][];
  let waiters: Array<() => void>;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'watch-files-'));
    reports = [];
    waiters = [];
  });
  afterEach(async () => {
    watch?.close();
    watch = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  async function start(files: string[]): Promise<void> {
    watch = watchFiles({
      files,
      // Short, so the tests do not wait half a second per change; the daemon keeps the default.
      debounce: 50,
      logger: createLogger({ level: 'silent', destination: new LogSink() }),
      onChange: (changed) => {
        reports.push([...changed]);
        for (const wake of waiters.splice(0)) wake();
      },
    });
    await watch.ready;
  }

  /** Resolves once `count` reports have come. */
  async function reported(count: number): Promise<string[][]> {
    while (reports.length < count) await new Promise<void>((resolve) => waiters.push(resolve));
    return reports;
  }

  it('reports a file rewritten in place, and not one rewritten with the same bytes', async () => {
    const config = join(dir, 'gateway.yaml');
    const key = join(dir, 'api-key');
    await writeFile(config, 'a: 1\n');
    await writeFile(key, 'key-1\n');
    await start([config, key]);

    // The key file is written (events) but holds the same bytes; the configuration changes.
    await writeFile(key, 'key-1\n');
    await writeFile(config, 'a: 2\n');
    expect((await reported(1)).flat()).toEqual([config]);
  });

  it('reports a file replaced by rename, and keeps seeing it after the inode changed', async () => {
    const config = join(dir, 'gateway.yaml');
    await writeFile(config, 'a: 1\n');
    await start([config]);

    for (const version of [2, 3]) {
      const temporary = join(dir, `.gateway.yaml.${version}.tmp`);
      await writeFile(temporary, `a: ${version}\n`);
      await rename(temporary, config);
      await reported(version - 1);
    }
    expect(reports).toEqual([[config], [config]]);
  });

  it('reports a Kubernetes volume whose ..data symlink is swapped, each time', async () => {
    const volume = await kubernetesVolume(join(dir, 'config'), { 'gateway.yaml': 'a: 1\n' });
    const config = volume.path('gateway.yaml');
    await start([config]);

    for (const version of [2, 3]) {
      await volume.update({ 'gateway.yaml': `a: ${version}\n` });
      await reported(version - 1);
    }
    expect(reports).toEqual([[config], [config]]);
  });

  it('reports a file reached through a symlink into another directory, edited there in place', async () => {
    const elsewhere = join(dir, 'elsewhere');
    const mounted = join(dir, 'etc');
    await mkdir(elsewhere);
    await mkdir(mounted);
    await writeFile(join(elsewhere, 'real.yaml'), 'a: 1\n');
    const config = join(mounted, 'gateway.yaml');
    await symlink(join(elsewhere, 'real.yaml'), config);
    await start([config]);

    await writeFile(join(elsewhere, 'real.yaml'), 'a: 2\n');
    expect(await reported(1)).toEqual([[config]]);
  });

  it('watches a directory again after it was removed and made anew', async () => {
    const volume = join(dir, 'volume');
    await mkdir(volume);
    const config = join(volume, 'gateway.yaml');
    await writeFile(config, 'a: 1\n');
    await start([config]);

    await rm(volume, { recursive: true });
    // The file is gone: reported (the reload that follows fails and keeps the running one).
    await reported(1);
    await mkdir(volume);
    await writeFile(config, 'a: 2\n');
    await reported(2);
    // And the new directory is watched, not just read once.
    await writeFile(config, 'a: 3\n');
    expect(await reported(3)).toEqual([[config], [config], [config]]);
  });

  it('holds no watch once closed', async () => {
    const watches = () => process.getActiveResourcesInfo().filter((kind) => kind === 'FSEventWrap').length;
    const before = watches();
    const config = join(dir, 'gateway.yaml');
    await writeFile(config, 'a: 1\n');
    await start([config, join(dir, 'api-key')]);
    expect(watches()).toBe(before + 1);
    watch?.close();
    watch?.close();
    await until(
      'the directory watch to be released',
      async () => watches(),
      (count) => count === before,
    );
  });
});

describe('which directory entries may change a watched file', () => {
  const names = new Set(['gateway.yaml', 'api-key']);
  it.each([
    ['gateway.yaml', true],
    ['api-key', true],
    // A Kubernetes volume's swap: the new symlink, its rename over ..data, the timestamped dirs.
    ['..data_tmp', true],
    ['..data', true],
    ['..2026_11_28_08_00_00.123', true],
    // A platform that does not name the entry.
    [null, true],
    ['.gateway.yaml.swp', false],
    ['other.yaml', false],
  ])('%s → %s', (entry, expected) => {
    expect(touchesWatched(entry, names)).toBe(expected);
  });
});
