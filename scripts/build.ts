// Builds dist/: the gateway bundled to JavaScript by esbuild, as the image and the benchmarks
// run it (dist/cli.js). Tests and development run the sources directly.
//
// What an idle daemon holds is mostly the code it has loaded, so the bundle is built for that:
// - node loads no type stripper (about 20 MiB of an idle daemon);
// - one file per lazily loaded part instead of a module per source file: each role, the mock
//   API and each command keep their own chunks, loaded by the import() that loads them in src/;
// - BullMQ's ES modules, whose index re-exports every backend (the PostgreSQL one's SQL, the
//   Bun and node-redis clients): declared free of side effects, only what the gateway uses of
//   them is kept;
// - whitespace and comments removed (names kept: stack traces and logged error types read as
//   in the sources), about 5 MiB of an idle daemon: V8 holds each module's source, and what
//   compiling a large file takes stays with the process. The source maps beside the chunks
//   give the sources' lines under `node --enable-source-maps`;
// - node's builtins taken with process.getBuiltinModule(), never `import`ed: node's ES module
//   view of a builtin reads every export once, getters too, so `import 'node:http'` loads
//   node's own fetch (undici), `node:tls` its root certificates, `node:process` stdin.
//
// The packages that read files beside their own modules stay in node_modules and are imported
// from there: Bull Board (its UI), msgpackr (its native addon), with hono, which Bull Board
// shares with the gateway, and mailauth, loaded on the first message to authenticate.
//
// Run: node scripts/build.ts (npm run build).
import { cpSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions as BundleOptions, build, type Metafile, type Plugin } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * The bundle's entry points, as `name: source`. Beside the command line, the process a
 * container is opened in: src/mail/containers/container-process.ts starts it from the file beside its own
 * chunk, dist/container-worker.js.
 */
export const ENTRY_POINTS: Readonly<Record<string, string>> = {
  cli: 'src/cli.ts',
  'container-worker': 'src/mail/containers/container-worker.ts',
};

/**
 * How the chunks are made (see the top of this file); the profile benchmark's test bundles its
 * sample with the same settings, so that its source maps are read as the gateway's are.
 */
export const CHUNK_SETTINGS = {
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  minifyWhitespace: true,
  sourcemap: 'linked',
  sourcesContent: false,
} as const satisfies BundleOptions;

/** Imported from node_modules at run time (see the top of this file). */
const EXTERNAL = ['@bull-board/*', 'hono', '@hono/*', 'mailauth', 'msgpackr'];

export interface BuildOptions {
  /** Where the bundle goes; default dist/ (the files the code reads go there too). */
  outdir?: string;
  /** More entry points, as `name: source` (the footprint benchmark's steps). */
  entryPoints?: Readonly<Record<string, string>>;
}

/** Builds the bundle; resolves with esbuild's account of which sources went into which file. */
export async function buildGateway(options: BuildOptions = {}): Promise<Metafile> {
  const outdir = options.outdir ?? join(root, 'dist');
  rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: { ...ENTRY_POINTS, ...options.entryPoints },
    outdir,
    ...CHUNK_SETTINGS,
    external: EXTERNAL,
    // CommonJS packages bundled into ES modules: their own folder is the chunk's, which none of
    // them reads in the gateway's use (ioredis filters stack traces by it, BullMQ finds its
    // sandbox's worker by it, pino its transports' workers).
    define: { __dirname: 'import.meta.dirname', __filename: 'import.meta.filename' },
    plugins: [bullmqModules, builtinsByValue],
    metafile: true,
    logLevel: 'warning',
  });
  // The console's script and style, read beside the chunk that serves them.
  cpSync(join(root, 'src/http/console/assets'), join(outdir, 'assets'), { recursive: true });
  return result.metafile;
}

/** BullMQ from its ES modules (its package names only the CommonJS ones), side-effect free. */
const bullmqModules: Plugin = {
  name: 'bullmq-modules',
  setup(build) {
    const esm = join(root, 'node_modules/bullmq/dist/esm/');
    build.onResolve({ filter: /^bullmq$/ }, () => ({ path: join(esm, 'index.js'), sideEffects: false }));
    build.onResolve({ filter: /^\./ }, async (args) => {
      if (!args.importer.startsWith(esm) || args.pluginData === bullmqModules) return undefined;
      const resolved = await build.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: bullmqModules,
      });
      return resolved.errors.length > 0 ? undefined : { path: resolved.path, sideEffects: false };
    });
  },
};

const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));

/**
 * Every import and require() of a builtin becomes `process.getBuiltinModule(name)`, through a
 * module of its own for each file that imports it (one shared by several chunks would be a
 * chunk of its own).
 */
const builtinsByValue: Plugin = {
  name: 'builtins-by-value',
  setup(build) {
    build.onResolve({ filter: /^[\w:/]+$/ }, (args) => {
      if (!builtins.has(args.path)) return undefined;
      const name = args.path.startsWith('node:') ? args.path : `node:${args.path}`;
      return { path: `${name}?${args.importer}`, namespace: 'builtin' };
    });
    build.onLoad({ filter: /./, namespace: 'builtin' }, (args) => ({
      contents: `module.exports = process.getBuiltinModule(${JSON.stringify(args.path.split('?')[0])});`,
      loader: 'js',
    }));
  },
};

if (import.meta.main) await buildGateway();
