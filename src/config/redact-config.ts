import type { GatewayConfig } from './schema.ts';

/**
 * A copy of the configuration that is safe to print or log: what `check-config` shows and
 * what the start-up log line holds. Same shape as GatewayConfig, but never hand it to a
 * component: its secrets are placeholders.
 */
export type RedactedConfig = GatewayConfig;

const REDACTED = '[redacted]';

/**
 * Replace `api.apiKey`, `http.token`, `scan.rspamd.password`, each `events.webhooks[].secret` and
 * the passwords in `redis.url` and `notices.smtp`;
 * every other value is copied as is.
 */
export function redactConfig(config: GatewayConfig): RedactedConfig {
  return {
    ...structuredClone(config),
    redis: { ...config.redis, url: redactUrl(config.redis.url) },
    api: { ...config.api, ...(config.api.apiKey === undefined ? {} : { apiKey: REDACTED }) },
    http: { ...config.http, ...(config.http.token === undefined ? {} : { token: REDACTED }) },
    scan: {
      ...config.scan,
      ...(config.scan.rspamd?.password === undefined
        ? {}
        : { rspamd: { ...config.scan.rspamd, password: REDACTED } }),
    },
    events: {
      ...config.events,
      webhooks: config.events.webhooks.map((webhook) => ({ ...webhook, secret: REDACTED })),
    },
    notices: {
      ...config.notices,
      ...(config.notices.smtp === undefined ? {} : { smtp: redactUrl(config.notices.smtp) }),
    },
  };
}

/**
 * `redis://user:secret@host` → `redis://user:***@host`; a URL without a password is unchanged.
 * For every URL that reaches a log line or an error message, not only the configuration's.
 */
export function redactUrl(text: string): string {
  const url = URL.parse(text);
  if (url === null || url.password === '') {
    return text;
  }
  url.password = '***';
  return url.href;
}
