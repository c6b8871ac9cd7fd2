import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  type Pair,
  parseDocument,
  type Range,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import { ruleKey } from './workspace-diff.ts';

/**
 * `workspace sync --write`: puts the service's `ingestEmail` and `whitelistIngestAddresses`
 * into the configuration file's text. yaml's Document API finds the nodes and their source
 * ranges; the edit itself splices only those ranges, so every other byte of the file (its
 * comments, blank lines, quoting, key order, `${VAR}` references) stays as the operator wrote
 * it. Re-serialising the whole Document would move comments that follow a key onto the next
 * line. Pure: the caller reads, re-validates and writes the file.
 */

export interface WorkspaceEdit {
  /** Position in the file's `workspaces` list (the configuration keeps the file's order). */
  readonly index: number;
  readonly identifier: string;
  readonly ingestEmail?: string;
  /** null: any sender. */
  readonly whitelistIngestAddresses?: readonly string[] | null;
}

export interface Rewrite {
  readonly text: string;
  /** Things the operator should know: a `${VAR}` that became a literal value. */
  readonly notes: readonly string[];
}

/** The file has a shape the splice cannot edit safely; nothing was changed. */
export class ConfigRewriteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigRewriteError';
  }
}

interface Splice {
  start: number;
  end: number;
  text: string;
}

export function rewriteWorkspaces(text: string, edits: readonly WorkspaceEdit[]): Rewrite {
  const document = parseDocument(text);
  if (document.errors.length > 0) {
    throw new ConfigRewriteError(`the file no longer parses: ${document.errors[0]?.message ?? ''}`);
  }
  const list = document.get('workspaces', true);
  if (!isSeq(list)) throw new ConfigRewriteError('the file has no workspaces list');
  const splices: Splice[] = [];
  const notes: string[] = [];

  for (const edit of edits) {
    const where = `workspaces[${edit.index}]`;
    const map = list.items[edit.index];
    if (!isMap(map) || map.flow) {
      throw new ConfigRewriteError(`${where} is not a block mapping; change it by hand`);
    }
    const identifier = map.get('identifier', true);
    if (isScalar(identifier) && typeof identifier.value === 'string') {
      const written = identifier.value;
      if (!written.includes('${') && written !== edit.identifier) {
        throw new ConfigRewriteError(
          `${where} is ${written} in the file, not ${edit.identifier}: the file changed since it was read`,
        );
      }
    }
    if (edit.ingestEmail !== undefined) {
      const pair = findPair(map, 'ingestEmail', where);
      if (!pair || !isScalar(pair.value) || !pair.value.range) {
        throw new ConfigRewriteError(`${where}.ingestEmail is not a plain value; change it by hand`);
      }
      noteInterpolation(text, pair.value.range, `${where}.ingestEmail`, notes);
      const [start, end] = pair.value.range;
      splices.push({ start, end, text: scalarLike(pair.value, edit.ingestEmail) });
    }
    if (edit.whitelistIngestAddresses !== undefined) {
      splices.push(...whitelistSplices(text, map, edit.whitelistIngestAddresses, where, notes));
    }
  }

  // From the end backwards, so each splice's offsets are still those of the original text.
  splices.sort((a, b) => b.start - a.start || b.end - a.end);
  let result = text;
  for (const splice of splices) {
    result = result.slice(0, splice.start) + splice.text + result.slice(splice.end);
  }
  return { text: result, notes };
}

function whitelistSplices(
  text: string,
  map: YAMLMap,
  rules: readonly string[] | null,
  where: string,
  notes: string[],
): Splice[] {
  const key = 'whitelistIngestAddresses';
  const pair = findPair(map, key, where);
  const flow = rules === null ? 'null' : flowList(rules);
  if (!pair) {
    // Absent already means any sender, so only a list needs writing: a new line after ingestEmail.
    if (rules === null || rules.length === 0) return [];
    const anchor = findPair(map, 'ingestEmail', where);
    const keyNode = anchor?.key;
    const valueNode = anchor?.value;
    if (!isScalar(keyNode) || !keyNode.range || !isScalar(valueNode) || !valueNode.range) {
      throw new ConfigRewriteError(`${where} has no ingestEmail line to add ${key} after; change it by hand`);
    }
    const lineStart = text.lastIndexOf('\n', keyNode.range[0]) + 1;
    const indent = text.slice(lineStart, keyNode.range[0]);
    // Spaces, or `  - ` when ingestEmail is the item's first key.
    if (!/^ *(- )?$/.test(indent)) {
      throw new ConfigRewriteError(`${where} is laid out in a way this cannot extend; change it by hand`);
    }
    const lineEnd = endOfLine(text, valueNode.range[1]);
    return [{ start: lineEnd, end: lineEnd, text: `\n${' '.repeat(indent.length)}${key}: ${flow}` }];
  }
  const value = pair.value;
  if (isScalar(value) && value.range) {
    // null, or a value that is not a list (the schema would have refused it): a flow list.
    noteInterpolation(text, value.range, `${where}.${key}`, notes);
    return [{ start: value.range[0], end: value.range[1], text: flow }];
  }
  if (isSeq(value) && value.range && value.flow) {
    return [{ start: value.range[0], end: value.range[1], text: flow }];
  }
  if (isSeq(value) && value.range && isScalar(pair.key) && pair.key.range) {
    return blockListSplices(text, pair.key.range[1], value, value.range, rules);
  }
  throw new ConfigRewriteError(`${where}.${key} is not a plain list; change it by hand`);
}

/**
 * A block list (`- rule` lines) edited line by line: rules the service also has keep their
 * line and its comment, lines of rules it lacks go, new rules are appended in the list's
 * indentation. When no rule remains, the whole list becomes `[]` or `null` on the key's line.
 */
function blockListSplices(
  text: string,
  keyEnd: number,
  list: YAMLSeq,
  range: Range,
  rules: readonly string[] | null,
): Splice[] {
  const wanted = rules ?? [];
  if (wanted.length === 0) {
    const between = text.slice(keyEnd, range[0]);
    const comment = /#[^\n]*/.exec(between)?.[0];
    const value = rules === null ? 'null' : '[]';
    const tail = text.slice(range[0], range[1]).endsWith('\n') ? '\n' : '';
    return [{ start: keyEnd, end: range[1], text: `: ${value}${comment ? ` ${comment}` : ''}${tail}` }];
  }
  const splices: Splice[] = [];
  // By the allow-list's own equivalence, so `*@ACME.example` keeps the line of `*@acme.example`.
  const wantedKeys = new Set(wanted.map(ruleKey));
  const kept = new Set<string>();
  for (const item of list.items) {
    if (!isScalar(item) || !item.range || typeof item.value !== 'string') {
      throw new ConfigRewriteError(
        'the allow-list has an entry that is not a plain string; change it by hand',
      );
    }
    const key = ruleKey(item.value);
    if (wantedKeys.has(key) && !kept.has(key)) {
      kept.add(key);
      continue;
    }
    const lineStart = text.lastIndexOf('\n', item.range[0]) + 1;
    const lineEnd = endOfLine(text, item.range[1]);
    splices.push({ start: lineStart, end: Math.min(text.length, lineEnd + 1), text: '' });
  }
  const first = range[0];
  const indent = ' '.repeat(first - (text.lastIndexOf('\n', first) + 1));
  const added = wanted.filter((rule) => !kept.has(ruleKey(rule)));
  if (added.length > 0) {
    const end = range[1];
    const needsBreak = end > 0 && text[end - 1] !== '\n';
    const lines = added.map((rule) => `${indent}- ${yamlScalar(rule)}\n`).join('');
    splices.push({ start: end, end, text: needsBreak ? `\n${lines}` : lines });
  }
  return splices;
}

function findPair(map: YAMLMap, key: string, where: string): Pair | undefined {
  const pair = map.items.find((item) => isScalar(item.key) && item.key.value === key);
  if (pair && (isAlias(pair.value) || isAlias(pair.key))) {
    throw new ConfigRewriteError(`${where}.${key} is an alias; change it by hand`);
  }
  return pair;
}

function endOfLine(text: string, from: number): number {
  const newline = text.indexOf('\n', from);
  return newline < 0 ? text.length : newline;
}

/** A new value written the way the old one was quoted, so the file keeps its style. */
function scalarLike(old: { type?: string | undefined }, value: string): string {
  if (old.type === 'QUOTE_SINGLE') return `'${value.replaceAll("'", "''")}'`;
  if (old.type === 'QUOTE_DOUBLE') return JSON.stringify(value);
  return yamlScalar(value);
}

/**
 * Plain when the text cannot be read as anything else (an address starting with a letter or
 * digit); otherwise double-quoted, in JSON's escaping, which YAML shares. `*@x` must be
 * quoted: a leading `*` is an alias.
 */
export function yamlScalar(value: string): string {
  return /^[A-Za-z0-9][A-Za-z0-9._%+@-]*$/.test(value) && !/^(null|true|false|~)$/i.test(value)
    ? value
    : JSON.stringify(value);
}

function flowList(rules: readonly string[]): string {
  return `[${rules.map(yamlScalar).join(', ')}]`;
}

function noteInterpolation(text: string, range: Range, path: string, notes: string[]): void {
  const source = text.slice(range[0], range[1]);
  if (source.includes('${')) notes.push(`${path} was ${source}; it now holds the service's value`);
}
