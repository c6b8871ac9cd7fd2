import type { Env } from './interpolate-env.ts';

/**
 * Environment variables that override one key of the file (README, "Configuration"), so
 * a container or a CI job changes a port or an address without its own copy of the file.
 */
interface Override {
  readonly variable: string;
  readonly section: string;
  readonly key: string;
  readonly type: 'port' | 'string';
}

export const ENV_OVERRIDES: readonly Override[] = [
  { variable: 'SMTP_PORT', section: 'smtp', key: 'port', type: 'port' },
  { variable: 'SMTP_HOSTNAME', section: 'smtp', key: 'hostname', type: 'string' },
  { variable: 'REDIS_URL', section: 'redis', key: 'url', type: 'string' },
  { variable: 'PARSER_API_URL', section: 'api', key: 'baseUrl', type: 'string' },
  { variable: 'PARSER_API_KEY', section: 'api', key: 'apiKey', type: 'string' },
  { variable: 'HTTP_PORT', section: 'http', key: 'port', type: 'port' },
  { variable: 'HTTP_TOKEN', section: 'http', key: 'token', type: 'string' },
  { variable: 'PUBLIC_URL', section: 'http', key: 'publicUrl', type: 'string' },
  { variable: 'LOG_LEVEL', section: 'log', key: 'level', type: 'string' },
];

export interface OverrideResult {
  /** The configuration with the overrides applied; the input is not changed. */
  readonly raw: unknown;
  /** Paths (`smtp.port`) now holding a value from the environment. */
  readonly applied: readonly string[];
  readonly problems: readonly string[];
}

/**
 * Apply the overrides that are set. An empty variable counts as unset, as compose files
 * write `SMTP_PORT=` to mean "no value". A port that is not a number is a problem; its
 * range is the schema's to check. A section that is not a mapping is left for the schema
 * to report.
 */
export function applyEnvOverrides(raw: unknown, env: Env): OverrideResult {
  if (!isRecord(raw)) {
    return { raw, applied: [], problems: [] };
  }
  const result: Record<string, unknown> = { ...raw };
  const applied: string[] = [];
  const problems: string[] = [];
  for (const { variable, section, key, type } of ENV_OVERRIDES) {
    const text = env[variable];
    if (text === undefined || text === '') {
      continue;
    }
    if (type === 'port' && !/^[0-9]{1,5}$/.test(text)) {
      problems.push(`${variable}: expected an integer from 0 to 65535, got ${JSON.stringify(text)}`);
      continue;
    }
    const current = result[section] ?? {};
    if (!isRecord(current)) {
      continue;
    }
    result[section] = { ...current, [key]: type === 'port' ? Number(text) : text };
    applied.push(`${section}.${key}`);
  }
  return { raw: result, applied, problems };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
