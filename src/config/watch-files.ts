import { createHash } from 'node:crypto';
import { type FSWatcher, statSync, watch } from 'node:fs';
import { readFile, realpath } from 'node:fs/promises';
import { basename, dirname, relative, resolve, sep } from 'node:path';
import { asError } from '../errors.ts';
import type { Logger } from '../logger.ts';

/**
 * Watches a few files (the configuration, the API key file, the STARTTLS key and certificate)
 * and says which of them now hold different bytes (docs/architecture.md, "Reload").
 *
 * A watch on the file itself goes stale the first time the file is replaced rather than
 * rewritten, and that is how files change in practice: an editor writes a temporary file and
 * renames it over the original (a new inode), and a Kubernetes ConfigMap or Secret volume
 * swaps the symlink `..data` to a new timestamped directory while `gateway.yaml` stays a
 * symlink to `..data/gateway.yaml`. So each file's directory is watched instead (node's
 * fs.watch, inotify on Linux), events are kept when they name a watched file or a `..`
 * entry of the volume's layout, and after a quiet spell the files are read again: only a
 * file whose content hash differs counts, so a touch, a chmod or a swap that changes
 * nothing reloads nothing. A file reached through a symlink into another directory has that
 * directory watched too. A directory watch that fails (its directory was removed, say) is
 * set up again.
 */
export interface FileWatchOptions {
  /** The files to watch; relative paths are taken from the working directory. */
  readonly files: readonly string[];
  /** Told, after each quiet spell, the files whose content changed (as given in `files`). */
  readonly onChange: (changed: readonly string[]) => void;
  readonly logger: Logger;
  /** Milliseconds without events before the files are read again; default 500. */
  readonly debounce?: number;
}

export interface FileWatch {
  /** Resolves once the files were read and their directories watched: later changes count. */
  readonly ready: Promise<void>;
  /** Stops every directory watch and timer. Idempotent. */
  close(): void;
}

/**
 * Milliseconds without a new event before the files are read: long enough for a writer's
 * burst (a Kubernetes update is a handful of renames and an unlink; an editor a write and a
 * rename), short enough that a change shows within a second.
 */
const DEFAULT_DEBOUNCE_MS = 500;
/** Milliseconds before a directory that could not be watched (or is gone) is tried again. */
const REARM_DELAY_MS = 2000;

/** Whether a directory entry's name may change what one of `names` reads. */
export function touchesWatched(entry: string | null, names: ReadonlySet<string>): boolean {
  // No name: some platforms do not say which entry changed.
  if (entry === null) return true;
  // `..data`, `..data_tmp`, `..2026_11_28_…`: the entries of a Kubernetes volume's swap.
  return names.has(entry) || entry.startsWith('..');
}

interface WatchedDir {
  /** The entries in it that matter. */
  names: Set<string>;
  watcher: FSWatcher | null;
  /** The inode watched: a directory removed and made again is a new one, watched anew. */
  ino: number | null;
  /** The next try to watch it, after a failure. */
  retry: NodeJS.Timeout | null;
  /** Whether the last try failed: said once in the log, not at every retry. */
  failing: boolean;
}

export function watchFiles(options: FileWatchOptions): FileWatch {
  const { logger, onChange } = options;
  const debounce = options.debounce ?? DEFAULT_DEBOUNCE_MS;
  const files = [...new Set(options.files)];
  const log = logger.child({ component: 'file-watch' });
  /** The content hash of each file as last read; null when it could not be read. */
  const seen = new Map<string, string | null>();
  const dirs = new Map<string, WatchedDir>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  function arm(dir: string, entry: WatchedDir): void {
    if (closed || entry.watcher !== null) return;
    try {
      entry.ino = statSync(dir).ino;
      // Persistent, as a handle the process holds: the lifecycle closes it, and one left open
      // would show as a process that does not exit.
      const watcher = watch(dir, (_event, name) => {
        const entryName = name === null ? null : String(name);
        // Its own name: the directory itself was removed or replaced (follow() finds which).
        if (entryName === basename(dir) || touchesWatched(entryName, entry.names)) schedule();
      });
      watcher.on('error', (err) => {
        log.warn({ dir, err: asError(err) }, 'watching a directory failed; watching it again');
        disarm(entry);
        rearmLater(dir, entry);
      });
      entry.watcher = watcher;
      if (entry.failing) log.info({ dir }, 'watching the directory again');
      entry.failing = false;
    } catch (err) {
      if (!entry.failing) log.warn({ dir, err: asError(err) }, 'cannot watch a directory; trying again');
      entry.failing = true;
      rearmLater(dir, entry);
    }
  }

  function disarm(entry: WatchedDir): void {
    entry.watcher?.close();
    entry.watcher = null;
    entry.ino = null;
  }

  function rearmLater(dir: string, entry: WatchedDir): void {
    if (closed || entry.retry !== null) return;
    entry.retry = setTimeout(() => {
      entry.retry = null;
      arm(dir, entry);
      // What changed while the watch was down is found by reading the files.
      schedule();
    }, REARM_DELAY_MS);
    entry.retry.unref();
  }

  function schedule(): void {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(() => void check(), debounce);
    timer.unref();
  }

  /** The directories to watch now: each file's own, and its target's when that lies elsewhere. */
  async function wanted(): Promise<Map<string, Set<string>>> {
    const result = new Map<string, Set<string>>();
    const add = (dir: string, name: string) => {
      const names = result.get(dir) ?? new Set<string>();
      names.add(name);
      result.set(dir, names);
    };
    for (const file of files) {
      const path = resolve(file);
      add(dirname(path), basename(path));
      const target = await realpath(path).catch(() => null);
      // A target inside the file's own directory (`..2026_x/gateway.yaml`) changes by swaps
      // seen there; one elsewhere may be rewritten in place, seen only in its own directory.
      if (target !== null && target !== path && !isBelow(dirname(path), target)) {
        add(dirname(target), basename(target));
      }
    }
    return result;
  }

  /**
   * Watches what `wanted` names and no longer what it does not; watches anew a directory
   * that was removed or replaced since it was armed.
   */
  async function follow(): Promise<void> {
    const next = await wanted();
    if (closed) return;
    for (const [dir, entry] of dirs) {
      if (next.has(dir)) continue;
      disarm(entry);
      if (entry.retry !== null) clearTimeout(entry.retry);
      dirs.delete(dir);
    }
    for (const [dir, names] of next) {
      let entry = dirs.get(dir);
      if (entry === undefined) {
        entry = { names, watcher: null, ino: null, retry: null, failing: false };
        dirs.set(dir, entry);
      }
      entry.names = names;
      if (entry.watcher !== null && entry.ino !== inode(dir)) disarm(entry);
      if (entry.retry === null) arm(dir, entry);
    }
  }

  async function check(): Promise<void> {
    if (closed) return;
    const changed: string[] = [];
    for (const file of files) {
      const hash = await contentHash(file);
      if (seen.get(file) === hash) continue;
      seen.set(file, hash);
      changed.push(file);
    }
    await follow();
    if (closed || changed.length === 0) return;
    onChange(changed);
  }

  const ready = (async () => {
    for (const file of files) seen.set(file, await contentHash(file));
    await follow();
  })().catch((err: unknown) => log.warn({ err: asError(err) }, 'cannot start watching the files'));

  return {
    ready,
    close() {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      for (const entry of dirs.values()) {
        disarm(entry);
        if (entry.retry !== null) clearTimeout(entry.retry);
      }
      dirs.clear();
    },
  };
}

function inode(dir: string): number | null {
  try {
    return statSync(dir).ino;
  } catch {
    // Removed: not the directory that was watched.
    return null;
  }
}

/** Whether `path` lies inside `dir` (a Kubernetes volume's `..2026_x/gateway.yaml`). */
function isBelow(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`);
}

/** The SHA-256 of the file's bytes (following symlinks), or null when it cannot be read. */
async function contentHash(path: string): Promise<string | null> {
  try {
    return createHash('sha256')
      .update(await readFile(path))
      .digest('hex');
  } catch {
    return null;
  }
}
