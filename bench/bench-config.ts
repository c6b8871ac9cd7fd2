import { type TestConfigInput, testConfigFile, type WorkspaceInput } from '../harness/test-config.ts';
import type { GatewayConfig } from '../src/config/schema.ts';

/**
 * The gateway configuration the benchmark runs: one workspace per recipient that
 * `smtp-source -N` writes to (`1documents@ingest.test`, `2documents@…`, …), so each message
 * of a run is a delivery of its own (the delivery hash covers the recipients) and none is
 * skipped as a repeat. Validated by the gateway's own loader before any process starts.
 */

/** The address the load writes to; `smtp-source -N` puts the message's number before it. */
export const BENCH_RECIPIENT = 'documents@ingest.test';

/** The recipient of the `sequence`th message (from 1), as `smtp-source -N` writes it. */
export function numberedRecipient(sequence: number): string {
  return `${sequence}${BENCH_RECIPIENT}`;
}

export interface BenchConfigOptions {
  redisUrl: string;
  /** Messages one run sends at most: a workspace for each numbered recipient. */
  recipients: number;
  /** Redis key prefix, distinct per gateway sharing a Redis only if they must not see each other. */
  prefix?: string;
  /** The parsing API; absent: a base URL nothing listens on (the smtp role never calls it). */
  api?: { baseUrl: string; apiKey: string };
  upload?: TestConfigInput['upload'];
  /** The file's log.level (default info); a daemon started by the harness runs at its LOG_LEVEL instead. */
  logLevel?: 'warn' | 'info';
  /** Scanners to ask about every message; each workspace then tags spam rather than refusing it. */
  scan?: TestConfigInput['scan'];
}

export function benchConfigInput(options: BenchConfigOptions): TestConfigInput {
  // With rspamd, random bytes must not be refused as spam mid-run: the verdict is recorded only.
  const tag: Partial<WorkspaceInput> = options.scan?.rspamd ? { spam: 'tag' } : {};
  const workspaces: WorkspaceInput[] = [{ identifier: 'ws-0', ingestEmail: BENCH_RECIPIENT, ...tag }];
  for (let sequence = 1; sequence <= options.recipients; sequence++) {
    workspaces.push({ identifier: `ws-${sequence}`, ingestEmail: numberedRecipient(sequence), ...tag });
  }
  return {
    // 20 MB attachments in base64 fit; the rates are off (the load is one client address).
    smtp: {
      maxMessageSize: 32 * 1024 * 1024,
      rateLimit: { connectionsPerIp: 0, messagesPerIp: 0, messagesPerSender: 0 },
    },
    redis: { url: options.redisUrl, prefix: options.prefix ?? 'bench' },
    api: options.api ?? { baseUrl: 'http://127.0.0.1:9', apiKey: 'bench-key-unused' },
    log: { level: options.logLevel ?? 'info' },
    ...(options.upload ? { upload: options.upload } : {}),
    ...(options.scan ? { scan: options.scan } : {}),
    workspaces,
  };
}

/** The YAML text of the configuration file, and the configuration it gives. */
export function benchConfigFile(options: BenchConfigOptions): { text: string; config: GatewayConfig } {
  return testConfigFile(benchConfigInput(options));
}
