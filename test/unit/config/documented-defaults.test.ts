import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import * as z from 'zod/mini';
import { gatewayConfigSchema } from '../../../src/config/schema.ts';

/**
 * The schema is the one source of every key and default: config/gateway.example.yaml and the
 * README's configuration table restate them for readers, and this test holds them to it.
 */

const repo = (path: string) =>
  readFileSync(fileURLToPath(new URL(`../../../${path}`, import.meta.url)), 'utf8');

interface SchemaKey {
  /** Dotted path; `[]` marks the items of a list (`workspaces[].identifier`). */
  path: string;
  /** The schema's default, when it has one. */
  default?: { value: unknown };
  /** Whether the key holds a mapping whose keys are listed too. */
  mapping: boolean;
}

/**
 * Values documented as a whole (their members go to the service as JSON text), so their
 * members need no entry of their own.
 */
const wholeValues = ['workspaces[].upload.regionBias', 'workspaces[].upload.warningMessages'];

/**
 * Every key of the schema, with its default: wrappers unwrapped, refused (never) keys left out.
 * Read through zod's core classes, which the classic and the mini API's schemas both are.
 */
function schemaKeys(schema: z.core.$ZodType, path = '', found: SchemaKey[] = []): SchemaKey[] {
  let type = schema;
  let fallback: SchemaKey['default'];
  for (;;) {
    if (type instanceof z.core.$ZodDefault) {
      fallback ??= { value: type._zod.def.defaultValue };
      type = type._zod.def.innerType;
    } else if (
      type instanceof z.core.$ZodPrefault ||
      type instanceof z.core.$ZodOptional ||
      type instanceof z.core.$ZodNullable
    ) {
      type = type._zod.def.innerType;
    } else if (type instanceof z.core.$ZodPipe) {
      // A transform after a parse (ingestEmail) or before one (trackCompletion's preprocess).
      const { in: input, out } = type._zod.def;
      type = out instanceof z.core.$ZodTransform ? input : out;
    } else break;
  }
  if (type instanceof z.core.$ZodNever) return found;
  const element = type instanceof z.core.$ZodArray ? type._zod.def.element : undefined;
  const mapping = type instanceof z.core.$ZodObject || element instanceof z.core.$ZodObject;
  if (path !== '') found.push({ path, mapping, ...(fallback ? { default: fallback } : {}) });
  if (type instanceof z.core.$ZodObject) {
    for (const [key, field] of Object.entries(type._zod.def.shape)) {
      schemaKeys(field, path === '' ? key : `${path}.${key}`, found);
    }
  } else if (element instanceof z.core.$ZodObject) {
    schemaKeys(element, `${path}[]`, found);
  }
  return found;
}

const keys = schemaKeys(gatewayConfigSchema);
const byPath = new Map(keys.map((key) => [key.path, key]));
/** The keys a reader must find: not the members of a value documented whole. */
const documentable = keys.filter(
  (key) => !wholeValues.some((whole) => key.path !== whole && key.path.startsWith(whole)),
);
const withDefault = keys.filter((key) => key.default !== undefined);

/** The value a "default X" or `X` states, read as YAML, or undefined when it states none. */
function statedValue(text: string): unknown {
  const flow = text.match(/^\s*(\[[^\]]*\]|\{[^}]*\})/);
  const literal = flow?.[1] ?? text.split(/[;,]|\s\(|:\s|:$/)[0]?.trim() ?? '';
  return literal === '' ? undefined : parse(literal);
}

interface ExampleKey {
  path: string;
  line: number;
  comment: string;
}

/**
 * The keys of the example file with their line comments, commented-out keys included
 * (`# tls:` documents a key without setting it). Nesting follows the indentation.
 */
function exampleKeys(text: string): ExampleKey[] {
  const found: ExampleKey[] = [];
  const stack: Array<{ column: number; key: string }> = [];
  text.split('\n').forEach((source, index) => {
    const match = source.match(
      /^(?<indent> *)(?<item>- )?(?<hash># ?)?(?<inner> *)(?<key>[A-Za-z_]+):(?<rest>.*)$/,
    );
    const groups = match?.groups;
    if (!groups) return;
    const { indent = '', item = '', inner = '', key = '', rest = '' } = groups;
    // `  - key:` nests like `    key:`; `  #   key:` like `    key:`.
    const column = indent.length + item.length + inner.length;
    while ((stack.at(-1)?.column ?? -1) >= column) stack.pop();
    stack.push({ column, key });
    const comment = rest.match(/(?:^|\s)#\s(.*)$/)?.[1] ?? '';
    found.push({ path: stack.map((entry) => entry.key).join('.'), line: index + 1, comment });
  });
  return found;
}

interface ReadmeRow {
  keys: string[];
  defaults: string;
  row: string;
}

/** The rows of the README's configuration table: the keys of the first cell and the default cell. */
function readmeRows(text: string): ReadmeRow[] {
  const section = text.slice(text.indexOf('## Configuration'));
  const table = section.slice(0, section.indexOf('\n## '));
  return table
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((row) => {
      const [keyCell = '', , defaults = ''] = row.slice(1, -1).split('|');
      return { keys: [...keyCell.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? ''), defaults, row };
    });
}

/** `workspaces[].upload` and `workspaces.upload` name one key. */
const plain = (path: string) => path.replaceAll('[]', '');

describe('the documented configuration agrees with the schema', () => {
  const example = exampleKeys(repo('config/gateway.example.yaml'));
  const rows = readmeRows(repo('README.md'));

  it('finds the keys of all three (the parsers read something)', () => {
    expect(keys.length).toBeGreaterThan(80);
    expect(example.length).toBeGreaterThan(80);
    expect(rows.length).toBeGreaterThan(60);
  });

  it('config/gateway.example.yaml shows every key of the schema, and no other', () => {
    const shown = new Set(example.map((entry) => entry.path));
    expect(documentable.map((key) => plain(key.path)).filter((path) => !shown.has(path))).toEqual([]);
    const known = new Set(keys.map((key) => plain(key.path)));
    expect(example.filter((entry) => !known.has(entry.path)).map((e) => `${e.line}: ${e.path}`)).toEqual([]);
  });

  it('config/gateway.example.yaml states each default as the schema has it', () => {
    const problems: string[] = [];
    for (const key of withDefault) {
      const entries = example.filter((entry) => entry.path === plain(key.path));
      const stated = entries.flatMap((entry) => {
        const text = entry.comment.match(/\bdefault (.*)$/)?.[1];
        return text === undefined ? [] : [{ line: entry.line, value: statedValue(text) }];
      });
      if (stated.length === 0) problems.push(`${key.path}: no "default ..." in its comment`);
      for (const { line, value } of stated) {
        if (!isDeepEqual(value, key.default?.value)) {
          problems.push(
            `${key.path} (line ${line}): says ${JSON.stringify(value)}, the schema ${JSON.stringify(key.default?.value)}`,
          );
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("the README's table lists every key of the schema, and no other", () => {
    const listed = new Set(rows.flatMap((row) => row.keys.map(plain)));
    // Mappings need no row of their own: their keys have one.
    const missing = documentable.filter((key) => {
      if (key.mapping) return false;
      if (listed.has(plain(key.path))) return false;
      // A key without a default may be named in the row of the mapping that holds it.
      const parent = key.path.slice(0, key.path.lastIndexOf('.'));
      const name = key.path.slice(key.path.lastIndexOf('.') + 1);
      const parentRow = rows.find((row) => row.keys.map(plain).includes(plain(parent)));
      return key.default !== undefined || !parentRow?.row.includes(`\`${name}\``);
    });
    expect(missing.map((key) => key.path)).toEqual([]);
    const known = new Set(keys.map((key) => plain(key.path)));
    expect(rows.flatMap((row) => row.keys).filter((key) => !known.has(plain(key)))).toEqual([]);
  });

  it("the README's table states each default as the schema has it", () => {
    const problems: string[] = [];
    for (const row of rows) {
      // `dns.timeout` / `dns.tries` with `5000` / `2`: one default per key.
      const parts = row.defaults.split(' / ');
      row.keys.forEach((path, index) => {
        const key = byPath.get(path);
        if (key?.default === undefined) return;
        const part = parts.length === row.keys.length ? (parts[index] ?? '') : row.defaults;
        const literal = part.match(/`([^`]+)`/)?.[1];
        const value = literal === undefined ? undefined : statedValue(literal);
        if (literal === undefined || !isDeepEqual(value, key.default.value)) {
          problems.push(
            `${path}: says ${part.trim() || 'nothing'}, the schema ${JSON.stringify(key.default.value)}`,
          );
        }
      });
    }
    expect(problems).toEqual([]);
    const rowKeys = new Set(rows.flatMap((row) => row.keys));
    expect(withDefault.filter((key) => !rowKeys.has(key.path)).map((key) => key.path)).toEqual([]);
  });
});

function isDeepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
