import type { Command } from 'commander';
import { type CommandContext, USAGE_ERROR } from './cli-context.ts';

/** Where the gateway's HTTP API listens by default (http.host, http.port). */
export const defaultHttpUrl = 'http://127.0.0.1:8025';

/** The running gateway's HTTP API, as a command reaches it. */
export interface GatewayHttp {
  httpUrl: string;
  /** The bearer token: http.token of --config, else HTTP_TOKEN. */
  token: string | undefined;
}

/**
 * --http, else the http section of --config (its publicUrl, else host and port), else the
 * default; a bad configuration is a usage error.
 */
export async function gatewayHttp(
  options: { http?: string; config?: string },
  command: Command,
  context: CommandContext,
): Promise<GatewayHttp> {
  const envToken = context.env.HTTP_TOKEN || undefined;
  if (options.http !== undefined || options.config === undefined) {
    return { httpUrl: options.http ?? defaultHttpUrl, token: envToken };
  }
  const { ConfigError, loadConfig } = await import('../config/load-config.ts');
  try {
    const { http } = await loadConfig({ path: options.config, env: context.env });
    // A wildcard listen address is reached on loopback from this machine.
    const host = http.host === '0.0.0.0' ? '127.0.0.1' : http.host === '::' ? '::1' : http.host;
    const listening = `http://${host.includes(':') ? `[${host}]` : host}:${http.port}`;
    return { httpUrl: (http.publicUrl ?? listening).replace(/\/$/, ''), token: http.token ?? envToken };
  } catch (caught) {
    if (!(caught instanceof ConfigError)) throw caught;
    return command.error(`error: ${options.config}: ${caught.problems.join('; ')}`, USAGE_ERROR);
  }
}
