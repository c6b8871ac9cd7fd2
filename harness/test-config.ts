import { stringify } from 'yaml';
import type { z } from 'zod';
import { parseConfig } from '../src/config/load-config.ts';
import {
  fileRoutes,
  type GatewayConfig,
  type gatewayConfigSchema,
  type WorkspaceConfig,
} from '../src/config/schema.ts';

/** The configuration as an operator writes it, before defaults and normalisation. */
export type ConfigInput = z.input<typeof gatewayConfigSchema>;
export type WorkspaceInput = NonNullable<ConfigInput['workspaces']>[number];

/**
 * What a test sets; each section is merged over the test defaults key by key, except `api`
 * and `workspaces`, which replace theirs.
 */
export interface TestConfigInput {
  smtp?: ConfigInput['smtp'];
  redis?: ConfigInput['redis'];
  retention?: ConfigInput['retention'];
  /** Default `{ mock: true }`; a test with its own mock API passes `{ baseUrl, apiKey }`. */
  api?: ConfigInput['api'];
  upload?: ConfigInput['upload'];
  http?: ConfigInput['http'];
  log?: ConfigInput['log'];
  auth?: ConfigInput['auth'];
  dns?: ConfigInput['dns'];
  /** Default none: nothing is scanned. */
  scan?: ConfigInput['scan'];
  /** Default none: no webhooks. */
  events?: ConfigInput['events'];
  /** Default none: no notices to senders. */
  notices?: ConfigInput['notices'];
  /** Default none: the workspaces are the whole route table. */
  discovery?: ConfigInput['discovery'];
  /** Default `defaultWorkspaces`. */
  workspaces?: WorkspaceInput[];
}

/** One open workspace and one with an allow-list, upload settings and a mixed-case address. */
export const defaultWorkspaces: readonly WorkspaceInput[] = [
  { identifier: 'ws-open', ingestEmail: 'documents@ingest.test' },
  {
    identifier: 'ws-acme',
    ingestEmail: 'Invoices@Ingest.Test',
    whitelistIngestAddresses: ['*@acme.example', 'ap@partner.example'],
    collection: 'col-invoices',
    documentType: 'doc-invoice',
    upload: { rejectDuplicates: true, language: 'en' },
  },
];

let configsMade = 0;

/**
 * The configuration object a test means, with the defaults every test wants: loopback
 * interfaces, ports picked by the kernel, a Redis key prefix no other configuration of this
 * process shares, and the mock API. Plain data, so a test can also write it to a file.
 */
function testConfigInput(input: TestConfigInput = {}): ConfigInput {
  configsMade += 1;
  return {
    smtp: {
      host: '127.0.0.1',
      port: 0,
      hostname: 'gateway.test',
      closeTimeout: 5000,
      greetingDelay: 0,
      ...input.smtp,
    },
    redis: { prefix: `test${process.pid}-${configsMade}`, ...input.redis },
    api: input.api ?? { mock: true },
    http: { host: '127.0.0.1', port: 0, ...input.http },
    workspaces: [...(input.workspaces ?? defaultWorkspaces)],
    ...(input.retention ? { retention: input.retention } : {}),
    ...(input.upload ? { upload: input.upload } : {}),
    ...(input.log ? { log: input.log } : {}),
    ...(input.auth ? { auth: input.auth } : {}),
    ...(input.dns ? { dns: input.dns } : {}),
    ...(input.scan ? { scan: input.scan } : {}),
    ...(input.events ? { events: input.events } : {}),
    ...(input.notices ? { notices: input.notices } : {}),
    ...(input.discovery ? { discovery: input.discovery } : {}),
  };
}

/**
 * The validated, frozen configuration, made by the gateway's own loader (parseConfig), so a
 * mistake in a test's settings fails as a ConfigError listing every problem, as it would for
 * an operator. No environment: the test's settings are all there is.
 */
export function testConfig(input: TestConfigInput = {}): GatewayConfig {
  return testConfigFile(input).config;
}

/**
 * The configuration as the YAML file a process reads (the daemon, the CLI), with the
 * configuration that file gives, validated before any process is started on it.
 */
export function testConfigFile(input: TestConfigInput = {}): { text: string; config: GatewayConfig } {
  const text = stringify(testConfigInput(input));
  return { text, config: parseConfig({ text, env: {}, source: 'testConfig' }) };
}

/** One validated workspace (`ws-1`, in@ingest.example unless given), for code that takes one. */
export function testWorkspace(settings: Partial<WorkspaceInput> = {}): WorkspaceConfig {
  const [workspace] = fileRoutes(
    testConfig({ workspaces: [{ identifier: 'ws-1', ingestEmail: 'in@ingest.example', ...settings }] }),
  );
  if (!workspace) throw new Error('the configuration has no workspace');
  return workspace;
}

/**
 * A workspace with every upload setting the configuration has, as the contract tests of the
 * upload form send it: to a multipart parser the project did not write, and to the mock.
 */
export const everyUploadField: WorkspaceConfig = testWorkspace({
  identifier: 'ws-contract',
  ingestEmail: 'contract@ingest.test',
  upload: {
    collection: 'col-1',
    documentType: 'doc-type-1',
    wait: true,
    customIdentifier: '{queueId}-{attachmentIndex}',
    expiryTime: '12h',
    language: 'de',
    rejectDuplicates: true,
    regionBias: {
      country: 'vn',
      countries: ['vn', 'la'],
      squareCoordinates: [1.5, 2, 3, 4.25],
      strict: false,
    },
    lowPriority: false,
    compact: true,
    deleteAfterParse: true,
    enableValidationTool: false,
    useOcr: false,
    llmHint: 'Amounts in EUR; dates are DD.MM.YYYY',
    limitToExamples: ['ex-a', 'ex-b', 'ex-c'],
    warningMessages: [{ warningCode: 'check_total', warningDetail: 'Totals differ' }],
    snake_case: true,
  },
});
