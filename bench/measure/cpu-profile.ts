/**
 * Reads a V8 CPU profile (`node --cpu-prof`, the .cpuprofile JSON) and tells where the time
 * went between two instants: self time per function and per owner (an npm package, a file of
 * the gateway, node's own modules, the garbage collector). Pure: the profile in, the tally out.
 */

export interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
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
    const name = `${frame.functionName || '(anonymous)'}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;
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
