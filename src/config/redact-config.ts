import type { GatewayConfig } from './schema.ts';

/**
 * A copy of the configuration that is safe to print or log: what `check-config` shows and
 * what the start-up log line holds. Same shape as GatewayConfig, but never hand it to a
 * component: its secrets are placeholders.
 */
export type RedactedConfig = GatewayConfig;

const REDACTED = '[redacted]';

/**
 * Replace `api.apiKey`, `http.token` and the password in `redis.url`; every other value is
 * copied as is.
 */
export function redactConfig(config: GatewayConfig): RedactedConfig {
  return {
    ...structuredClone(config),
    redis: { ...config.redis, url: redactUrlPassword(config.redis.url) },
    api: { ...config.api, ...(config.api.apiKey === undefined ? {} : { apiKey: REDACTED }) },
    http: { ...config.http, ...(config.http.token === undefined ? {} : { token: REDACTED }) },
  };
}

/** `redis://user:secret@host` → `redis://user:***@host`; a URL without a password is unchanged. */
function redactUrlPassword(text: string): string {
  const url = URL.parse(text);
  if (url === null || url.password === '') {
    return text;
  }
  url.password = '***';
  return url.href;
}
