import { readFile } from 'node:fs/promises';
import { parseDocument, type YAMLError } from 'yaml';
import { asError } from '../errors.ts';
import { applyEnvOverrides } from './env-overrides.ts';
import { configErrorMap, formatIssue, formatPath } from './format-issue.ts';
import { type Env, interpolateTree } from './interpolate-env.ts';
import { type GatewayConfig, gatewayConfigSchema } from './schema.ts';

/**
 * The configuration cannot be used. Carries every problem found, so `check-config` and a
 * failed start show the whole list at once instead of one fix-and-retry round per mistake.
 */
export class ConfigError extends Error {
  /** One line each, `path: message` (or `line L, column C: message` for YAML syntax). */
  readonly problems: readonly string[];
  /** Where the configuration came from: a file path, or a name the caller chose. */
  readonly source: string;

  constructor(source: string, problems: readonly string[]) {
    const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
    super(
      `invalid configuration ${source} (${count}):\n${problems.map((problem) => `  - ${problem}`).join('\n')}`,
    );
    this.name = 'ConfigError';
    this.source = source;
    this.problems = Object.freeze([...problems]);
  }
}

export interface LoadConfigOptions {
  /** The YAML file. */
  readonly path: string;
  /** Variables for `${VAR}` and the overrides; the composition root passes process.env. */
  readonly env: Env;
}

export interface ParseConfigOptions {
  readonly text: string;
  readonly env: Env;
  /** Names the configuration in the error message: the file path, or `inline` in tests. */
  readonly source: string;
}

/** Read, resolve and validate the configuration file; throws ConfigError listing every problem. */
export async function loadConfig({ path, env }: LoadConfigOptions): Promise<GatewayConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError(path, [`cannot read the file: ${asError(error).message}`]);
  }
  return parseConfig({ text, env, source: path });
}

/**
 * YAML text to a frozen GatewayConfig, in order: parse, interpolate `${VAR}`, apply the
 * environment overrides, validate. Every problem of every step that could run is collected
 * and thrown at once as one ConfigError. A YAML syntax error ends it there: what follows
 * would be read from a tree the parser had to guess at.
 */
export function parseConfig({ text, env, source }: ParseConfigOptions): GatewayConfig {
  const document = parseDocument(text, { prettyErrors: true });
  if (document.errors.length > 0) {
    throw new ConfigError(source, document.errors.map(describeYamlError));
  }

  const unresolved = interpolateTree(document.contents, env);
  // An empty file is an empty mapping, so the schema reports the keys it needs.
  const { raw, applied, problems: overrideProblems } = applyEnvOverrides(document.toJS() ?? {}, env);

  // A value the environment overrides no longer depends on the variable it referenced.
  const interpolationProblems = unresolved.filter(({ path }) => !applied.includes(formatPath(path)));
  const problems = [
    ...interpolationProblems.map(({ path, message }) => `${formatPath(path)}: ${message}`),
    ...overrideProblems,
  ];

  const result = gatewayConfigSchema.safeParse(raw, { error: configErrorMap });
  if (!result.success) {
    // A key whose ${VAR} is unset is reported as that, not again as whatever it failed to be.
    const unresolvedPaths = interpolationProblems.map(({ path }) => formatPath(path));
    const dependsOnUnset = (path: string) =>
      unresolvedPaths.some(
        (prefix) => path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`),
      );
    for (const issue of result.error.issues) {
      if (!dependsOnUnset(formatPath(issue.path))) {
        problems.push(...formatIssue(issue));
      }
    }
  }
  if (problems.length > 0 || !result.success) {
    throw new ConfigError(source, problems);
  }

  return deepFreeze(result.data);
}

/** `line 3, column 5: Map keys must be unique`, without the excerpt prettyErrors appends. */
function describeYamlError(error: YAMLError): string {
  const [first = error.message] = error.message.split('\n');
  const message = first.replace(/ at line \d+, column \d+:?$/, '');
  const position = error.linePos?.[0];
  return position ? `line ${position.line}, column ${position.col}: ${message}` : message;
}

/**
 * Freeze a value and everything it holds, so no component can change the configuration
 * another one relies on (a write throws in strict mode, which ES modules always are).
 */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Reflect.ownKeys(value)) {
      deepFreeze(Reflect.get(value, key));
    }
  }
  return value;
}
