// The import guard rail (docs/architecture.md, "Layers"): no cycle between files or between folders of
// src/, and a folder imports only from folders in lower layers. Type-only imports count: a
// type that crosses a layer upwards ties the two folders as much as a value does.
//
// Between the repository's own folders, each imports only what BOUNDARIES allows: the gateway
// and the mock's package nothing outside themselves, tests and benchmarks share harness/
// instead of importing each other.
//
// Run: node scripts/check-layers.ts [SRC_DIR]. Prints every violation and exits 1 if any.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/**
 * The layers, lowest first. A unit is a folder of src/, or a file directly in src/. A unit may
 * import its own files and the units of lower layers, never a unit of its own layer or above.
 */
export const LAYERS: readonly (readonly string[])[] = [
  [
    'errors.ts',
    'logger.ts',
    'metrics.ts',
    'config-fields.ts',
    'english-issues.ts',
    'lifecycle.ts',
    'live-settings.ts',
    'listen-host.ts',
  ],
  ['mail', 'sender', 'parsing-api', 'redis', 'scan'],
  ['record'],
  ['store'],
  ['queue'],
  ['intake', 'uploader', 'webhooks', 'notices'],
  ['smtp', 'http'],
  ['config'],
  ['gateway.ts', 'main.ts', 'cli.ts', 'cli', 'roles', 'testing'],
];

/** Files of one layer that are one unit for the rules: they may import each other. */
const SHARED_LAYERS = new Set([0, LAYERS.length - 1]);

/**
 * The repository's folders that hold TypeScript, and which of them each may import by a
 * relative path (packages are imported by name). test/fixtures is data, read by the harness.
 */
export const BOUNDARIES: Readonly<Record<string, readonly string[]>> = {
  src: [],
  'packages/mock-parsing-api': [],
  scripts: ['src'],
  harness: ['src', 'scripts', 'test/fixtures', 'examples'],
  test: ['src', 'harness', 'scripts', 'test/fixtures', 'examples'],
  bench: ['src', 'harness', 'scripts'],
  examples: [],
};

export interface ImportEdge {
  from: string;
  to: string;
}

/** Every relative import (static, type-only, re-export, dynamic) of the .ts files below `root`. */
export function readImports(root: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.\.?\/[^'"]+)\1/g;
  for (const file of listFiles(root)) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const match of text.matchAll(pattern)) {
      const spec = match[2];
      if (spec === undefined) continue;
      edges.push({ from: file, to: normalize(join(dirname(file), spec)) });
    }
  }
  return edges;
}

function listFiles(root: string, dir = ''): string[] {
  const files: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    if (name === 'node_modules') continue;
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) files.push(...listFiles(root, path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) files.push(path);
  }
  return files;
}

/** The unit a file belongs to: its top folder under src/, or the file itself. */
export function unitOf(file: string): string {
  const [first] = file.split('/');
  return first ?? file;
}

function layerOf(unit: string): number {
  return LAYERS.findIndex((layer) => layer.includes(unit));
}

/** Cycles of a directed graph: its strongly connected components of more than one node (Tarjan). */
export function findCycles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    if (from === to) continue;
    if (!next.has(from)) next.set(from, new Set());
    next.get(from)?.add(to);
    if (!next.has(to)) next.set(to, new Set());
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const target of next.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(target) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (;;) {
      const member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
      if (member === node) break;
    }
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const node of next.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

/** Every violation of the rules, as lines an engineer reads. */
export function checkLayers(edges: readonly ImportEdge[]): string[] {
  const problems: string[] = [];
  for (const cycle of findCycles(edges)) problems.push(`file cycle: ${cycle.join(' <-> ')}`);
  const unitEdges = edges
    .map(({ from, to }) => ({ from: unitOf(from), to: unitOf(to) }))
    .filter(({ from, to }) => from !== to);
  for (const cycle of findCycles(unitEdges)) problems.push(`folder cycle: ${cycle.join(' <-> ')}`);
  const reported = new Set<string>();
  for (const { from, to } of edges) {
    const fromUnit = unitOf(from);
    const toUnit = unitOf(to);
    if (fromUnit === toUnit) continue;
    const fromLayer = layerOf(fromUnit);
    const toLayer = layerOf(toUnit);
    if (fromLayer < 0 || toLayer < 0) {
      const unknown = fromLayer < 0 ? fromUnit : toUnit;
      if (!reported.has(unknown)) problems.push(`${unknown} is in no layer: add it to LAYERS`);
      reported.add(unknown);
      continue;
    }
    if (toLayer < fromLayer || (toLayer === fromLayer && SHARED_LAYERS.has(fromLayer))) continue;
    problems.push(
      `${from} imports ${to}: ${fromUnit} (layer ${fromLayer}) may not import ${toUnit} (layer ${toLayer})`,
    );
  }
  return problems;
}

/** The folder of BOUNDARIES a path of the repository is in (the longest that holds it), or null. */
function boundaryOf(path: string): string | null {
  const holding = Object.keys(BOUNDARIES)
    .concat('test/fixtures')
    .filter((folder) => path === folder || path.startsWith(`${folder}/`));
  return holding.sort((a, b) => b.length - a.length)[0] ?? null;
}

/** Every relative import of the repository's folders (paths from the repository's root). */
export function readRepositoryImports(repository: string): ImportEdge[] {
  return Object.keys(BOUNDARIES).flatMap((folder) =>
    readImports(join(repository, folder)).map(({ from, to }) => ({
      from: join(folder, from),
      to: normalize(join(folder, to)),
    })),
  );
}

/** Imports that cross from one folder of the repository into one it may not import. */
export function checkBoundaries(edges: readonly ImportEdge[]): string[] {
  const problems: string[] = [];
  for (const { from, to } of edges) {
    const fromFolder = boundaryOf(from);
    const toFolder = boundaryOf(to);
    if (fromFolder === null || fromFolder === toFolder) continue;
    if (toFolder !== null && BOUNDARIES[fromFolder]?.includes(toFolder)) continue;
    problems.push(`${from} imports ${to}: ${fromFolder}/ may not import ${toFolder ?? to}`);
  }
  return problems;
}

if (import.meta.main) {
  const root = process.argv[2] ?? join(import.meta.dirname, '..', 'src');
  const edges = readImports(root);
  const repositoryEdges = readRepositoryImports(join(root, '..'));
  const problems = [...checkLayers(edges), ...checkBoundaries(repositoryEdges)];
  for (const problem of problems) process.stdout.write(`${problem}\n`);
  const units = new Set(edges.map(({ from }) => unitOf(from)));
  process.stdout.write(
    `${relative(process.cwd(), root) || '.'}: ${edges.length} imports between ${units.size} units; ` +
      `repository: ${repositoryEdges.length} imports between ${Object.keys(BOUNDARIES).length} folders; ` +
      `${problems.length} problem(s)\n`,
  );
  process.exitCode = problems.length > 0 ? 1 : 0;
}
