import { stat } from 'node:fs/promises';
import type { Env } from '../../config/interpolate-env.ts';
import { ConfigError, loadConfig } from '../../config/load-config.ts';
import type { GatewayConfig } from '../../config/schema.ts';

/**
 * Which parsing service the `workspace` commands manage, and with which key: the gateway's
 * configuration file, with PARSER_API_URL and PARSER_API_KEY winning over it as they do for
 * the daemon (load-config.ts applies them). Without a file, the two variables alone will do
 * for get and update. Mock mode has no service to manage and is refused: changing the
 * in-process mock's workspaces from another process would change nothing anyone keeps.
 */

export interface ServiceTarget {
  baseUrl: string;
  apiKey: string;
  allowInsecureHttp: boolean;
  /** Milliseconds per request (api.timeout). */
  timeoutMs: number;
}

export interface ResolveServiceOptions {
  configPath: string;
  /** Whether --config was given: then the file must exist. */
  configGiven: boolean;
  /** sync compares the configured workspaces, so it needs the file. */
  needConfig: boolean;
  env: Env;
}

export type ResolvedService =
  | { ok: true; target: ServiceTarget; config: GatewayConfig | undefined }
  | { ok: false; problems: string[] };

/** api.timeout's default, for the case without a file. */
const DEFAULT_TIMEOUT_MS = 60_000;

export async function resolveService(options: ResolveServiceOptions): Promise<ResolvedService> {
  const { configPath, env } = options;
  const url = nonEmpty(env.PARSER_API_URL);
  const key = nonEmpty(env.PARSER_API_KEY);
  if (!options.configGiven && !options.needConfig && url && key && !(await exists(configPath))) {
    return {
      ok: true,
      target: { baseUrl: url, apiKey: key, allowInsecureHttp: false, timeoutMs: DEFAULT_TIMEOUT_MS },
      config: undefined,
    };
  }
  let config: GatewayConfig;
  try {
    config = await loadConfig({ path: configPath, env });
  } catch (caught) {
    if (!(caught instanceof ConfigError)) throw caught;
    return { ok: false, problems: caught.problems.map((problem) => `${configPath}: ${problem}`) };
  }
  if (config.api.mock && !url) {
    return {
      ok: false,
      problems: [
        `${configPath} sets api.mock: true, so documents go to the built-in mock and there is no ` +
          'parsing service to manage. Set PARSER_API_URL and PARSER_API_KEY, or give --config a ' +
          'configuration of the real service.',
      ],
    };
  }
  const { baseUrl, apiKey } = config.api;
  if (!baseUrl || !apiKey) {
    const missing = !baseUrl ? 'api.baseUrl (or PARSER_API_URL)' : 'api.apiKey (or PARSER_API_KEY)';
    return { ok: false, problems: [`${configPath}: ${missing} is needed to reach the service`] };
  }
  return {
    ok: true,
    target: {
      baseUrl,
      apiKey,
      allowInsecureHttp: config.api.allowInsecureHttp,
      timeoutMs: config.api.timeout,
    },
    config,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  // As for the overrides, an empty variable counts as unset (compose writes `X=`).
  return value === undefined || value === '' ? undefined : value;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    // Any failure to stat (absent, unreadable) means the file cannot be the source.
    return false;
  }
}
