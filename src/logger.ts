import { type DestinationStream, type Logger, pino } from 'pino';

export type { Logger } from 'pino';

export interface LoggerOptions {
  /** pino level; default pino's, `info`. */
  level?: string;
  /** Where the JSON lines go; default stdout. Tests pass an in-memory sink. */
  destination?: DestinationStream;
}

/**
 * Paths that may hold a secret anywhere a component logs a config, request or error.
 * pino replaces their values before the line is written.
 */
export const redactedPaths = [
  'apiKey',
  '*.apiKey',
  '*.*.apiKey',
  'authorization',
  '*.authorization',
  '*.headers.authorization',
  'headers.authorization',
  'password',
  '*.password',
];

/** The one root logger; components take children of it (`logger.child({ component })`). */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      ...(options.level === undefined ? {} : { level: options.level }),
      redact: { paths: redactedPaths, censor: '[redacted]' },
      base: { service: 'ingest-gateway' },
    },
    options.destination,
  );
}
