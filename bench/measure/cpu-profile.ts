/**
 * Reads a V8 CPU profile (`node --cpu-prof`, the .cpuprofile JSON) and tells where the time
 * went between two instants: self time per function and per owner (an npm package, a file of
 * the gateway, node's own modules, the garbage collector). The tally is pure: the profile in,
 * the tally out.
 *
 * The gateway runs as a bundle (dist/, scripts/build.ts), where every frame is in one of its
 * chunks; `originalFrames` first moves each frame to the source it was built from, through the
 * chunk's source map (`sourceMapsOnDisk` reads them from disk), so the owners are packages and
 * the gateway's source files again.
 */
import { readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';

/** Where a function starts: V8's `url`, and 0-based line and column. */
export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber?: number;
}

export interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: CallFrame;
    children?: number[];
  }>;
  /** µs on the monotonic clock (CLOCK_MONOTONIC on Linux, as process.hrtime). */
  startTime: number;
  samples: number[];
  /** µs since the previous sample (the first: since startTime). */
  timeDeltas: number[];
}

export interface SelfTime {
  name: string;
  owner: string;
  /**
   * The owner of the nearest caller that is a package or a gateway file: where node's own
   * modules and native code (a socket write, a RegExp) were called from. GC has no caller.
   */
  onBehalfOf: string;
  ms: number;
}

export interface ProfileTally {
  /** Sampled time in the window, idle excluded, ms. */
  busyMs: number;
  idleMs: number;
  functions: SelfTime[];
  /** Self time per owner, node's own modules and native code counted to their caller. */
  owners: Array<{ owner: string; ms: number }>;
}

/** A position in the code that was built: the source's URL, 0-based line and column. */
export interface OriginalPosition {
  url: string;
  lineNumber: number;
  columnNumber: number;
  /** The name the map gives at that position, if any. */
  name?: string;
}

/** A 0-based position in a script, through its source map; undefined when it has none there. */
export type SourceMapLookup = (
  url: string,
  lineNumber: number,
  columnNumber: number,
) => OriginalPosition | undefined;

/**
 * The profile with each frame of built code moved to the source it came from: url, line and
 * column of the original file. A frame the lookup does not know (node's modules, native code, a
 * script without a map, esbuild's own helpers) stays as it is. V8's function name is kept,
 * unless it is the map's name with a number esbuild appended to keep the bundle's names
 * distinct (`spin2` for `spin`).
 */
export function originalFrames(profile: CpuProfile, lookup: SourceMapLookup): CpuProfile {
  const nodes = profile.nodes.map((node) => {
    const frame = node.callFrame;
    if (frame.url === '' || frame.url.startsWith('node:')) return node;
    const original = lookup(frame.url, frame.lineNumber, frame.columnNumber ?? 0);
    if (original === undefined) return node;
    const renamed =
      original.name !== undefined &&
      frame.functionName.startsWith(original.name) &&
      /^\d+$/.test(frame.functionName.slice(original.name.length));
    const callFrame: CallFrame = {
      functionName: renamed && original.name !== undefined ? original.name : frame.functionName,
      url: original.url,
      lineNumber: original.lineNumber,
      columnNumber: original.columnNumber,
    };
    return { ...node, callFrame };
  });
  return { ...profile, nodes };
}

/**
 * Looks positions up in the source maps of the scripts on disk (`file:` URLs): the map each
 * script names in its `//# sourceMappingURL=` comment, read once, its sources resolved against
 * its own URL.
 */
export function sourceMapsOnDisk(): SourceMapLookup {
  const maps = new Map<string, { map: SourceMap; sources: Map<string, string> } | null>();
  const mapOf = (url: string) => {
    let entry = maps.get(url);
    if (entry === undefined) {
      entry = readSourceMap(url);
      maps.set(url, entry);
    }
    return entry;
  };
  return (url, lineNumber, columnNumber) => {
    if (!url.startsWith('file:')) return undefined;
    const entry = mapOf(url);
    const found = entry?.map.findEntry(lineNumber, columnNumber);
    if (entry == null || found === undefined || !('originalSource' in found)) return undefined;
    const name = (found as { name?: string }).name;
    return {
      url: entry.sources.get(found.originalSource) ?? found.originalSource,
      lineNumber: found.originalLine,
      columnNumber: found.originalColumn,
      ...(name === undefined ? {} : { name }),
    };
  };
}

function readSourceMap(url: string): { map: SourceMap; sources: Map<string, string> } | null {
  let script: string;
  try {
    script = readFileSync(new URL(url), 'utf8');
  } catch {
    return null;
  }
  const comment = /\/\/[#@] sourceMappingURL=([^\s'"]+)\s*$/.exec(script)?.[1];
  if (comment === undefined || comment.startsWith('data:')) return null;
  const mapUrl = new URL(comment, url);
  let payload: SourceMapPayload;
  try {
    payload = JSON.parse(readFileSync(mapUrl, 'utf8')) as SourceMapPayload;
  } catch {
    return null;
  }
  const base = new URL(payload.sourceRoot ?? '', mapUrl);
  const sources = new Map(payload.sources.map((source) => [source, new URL(source, base).href]));
  return { map: new SourceMap(payload), sources };
}

/** Who a frame belongs to: `ioredis`, `@zone-eu/mailsplit`, `gateway src/intake/…`, `GC`, `node`. */
export function ownerOf(url: string, functionName: string, sourceRoot: string): string {
  if (url === '') {
    if (functionName === '(garbage collector)') return 'GC';
    if (functionName === '(program)') return '(program: native, outside JS)';
    return 'native';
  }
  if (url.startsWith('node:')) return 'node (built-in modules)';
  const path = url.startsWith('file://') ? decodeURIComponent(new URL(url).pathname) : url;
  const at = path.lastIndexOf('/node_modules/');
  if (at >= 0) {
    const [scope = '', name = ''] = path.slice(at + '/node_modules/'.length).split('/');
    return scope.startsWith('@') ? `${scope}/${name}` : scope;
  }
  if (path.startsWith(sourceRoot)) return `gateway ${path.slice(sourceRoot.length)}`;
  return path;
}

/**
 * The file a frame is in, as its function's name shows it beside its owner: the path inside
 * its package (`lib/message-splitter.js`), in the gateway (`src/mail/collect-leaf.ts`), or the
 * URL (`node:net`).
 */
export function fileOf(url: string, sourceRoot: string): string {
  const path = url.startsWith('file://') ? decodeURIComponent(new URL(url).pathname) : url;
  const at = path.lastIndexOf('/node_modules/');
  if (at >= 0) {
    const parts = path.slice(at + '/node_modules/'.length).split('/');
    return parts.slice(parts[0]?.startsWith('@') ? 2 : 1).join('/');
  }
  return path.startsWith(sourceRoot) ? path.slice(sourceRoot.length) : path;
}

/**
 * Self time per function and per owner over the samples taken in [fromUs, toUs] (monotonic
 * µs; the whole profile when absent). Each sample counts the time since the one before it.
 */
export function tallyProfile(
  profile: CpuProfile,
  sourceRoot: string,
  window: { fromUs?: number; toUs?: number } = {},
): ProfileTally {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const callerOwner = (id: number): string => {
    for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
      const frame = frames.get(at);
      if (frame && frame.url !== '' && !frame.url.startsWith('node:')) {
        return ownerOf(frame.url, frame.functionName, sourceRoot);
      }
    }
    const own = frames.get(id);
    return own ? ownerOf(own.url, own.functionName, sourceRoot) : '?';
  };
  const functions = new Map<string, SelfTime>();
  const owners = new Map<string, number>();
  let at = profile.startTime;
  let busyUs = 0;
  let idleUs = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    at += delta;
    if (window.fromUs !== undefined && at < window.fromUs) return;
    if (window.toUs !== undefined && at > window.toUs) return;
    const frame = frames.get(id);
    if (!frame) return;
    if (frame.functionName === '(idle)') {
      idleUs += delta;
      return;
    }
    busyUs += delta;
    const owner = ownerOf(frame.url, frame.functionName, sourceRoot);
    const name = `${frame.functionName || '(anonymous)'}${frame.url ? ` (${fileOf(frame.url, sourceRoot)}:${frame.lineNumber + 1})` : ''}`;
    const onBehalfOf = callerOwner(id);
    const key = `${owner}|${name}|${onBehalfOf}`;
    const entry = functions.get(key) ?? { name, owner, onBehalfOf, ms: 0 };
    entry.ms += delta / 1000;
    functions.set(key, entry);
    owners.set(onBehalfOf, (owners.get(onBehalfOf) ?? 0) + delta / 1000);
  });
  return {
    busyMs: busyUs / 1000,
    idleMs: idleUs / 1000,
    functions: [...functions.values()].sort((a, b) => b.ms - a.ms),
    owners: [...owners].map(([owner, ms]) => ({ owner, ms })).sort((a, b) => b.ms - a.ms),
  };
}
