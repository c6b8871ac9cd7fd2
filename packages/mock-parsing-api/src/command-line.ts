import { parseArgs } from 'node:util';
import type { MockApiOptions } from './create-mock-api.ts';
import { MAX_PROCESSING_MS } from './document-side.ts';

/**
 * The options of the `mock-parsing-api` command, read from its arguments and environment.
 * Pure: argv and env in; the settings to start the mock with, the help, or every problem
 * found, out. cli.ts does the reading, the starting and the exiting.
 */

export interface CommandSettings {
  host: string;
  port: number;
  /** A YAML or JSON fixture of workspaces (README.md, "Workspaces"). */
  workspacesFile: string | undefined;
  logLevel: string;
  mock: Omit<MockApiOptions, 'logger' | 'workspaces'>;
}

export type CommandLine =
  | { kind: 'run'; settings: CommandSettings }
  | { kind: 'help'; text: string }
  | { kind: 'usage-error'; problems: string[] };

export const HELP = `Usage: mock-parsing-api [options]

Runs the fake parsing API until SIGTERM or SIGINT.

Options:
  --host <H>                      interface to listen on (default: 127.0.0.1)
  --port <N>                      TCP port; 0 picks a free one (default: 8026)
  --api-key <KEY>                 the key clients must send (default: PARSER_API_KEY)
  --workspaces <FILE>             seed the workspaces and document types from this
                                  fixture (YAML or JSON)
  --organization <ID>             the workspaces' organization identifier and name
  --resthook-signature-key <KEY>  key that signs resthook deliveries
                                  (default: MOCK_RESTHOOK_SIGNATURE_KEY, else random)
  --processing-ms <N>             milliseconds a document takes to become ready, up to
                                  60000 (default: 0)
  --list-items <SHAPE>            each result of GET /v3/documents: document or meta
                                  (default: document)
  --list-page-size <N>            results per page of GET /v3/documents, 1 to 1000
                                  (default: all on one page)
  -h, --help                      this help

Logs JSON lines to stdout at LOG_LEVEL (default: info); the first names the URL.
PATCH /_mock/settings changes the list settings while it runs.
`;

/** The default port: the gateway's HTTP port (8025) plus one. */
const DEFAULT_PORT = 8026;
/** Bounds of a page of `GET /v3/documents` (document-list-settings.ts). */
const MAX_PAGE_SIZE = 1000;

export function readCommandLine(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): CommandLine {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: false,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        'api-key': { type: 'string' },
        workspaces: { type: 'string' },
        organization: { type: 'string' },
        'resthook-signature-key': { type: 'string' },
        'processing-ms': { type: 'string' },
        'list-items': { type: 'string' },
        'list-page-size': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (caught) {
    return { kind: 'usage-error', problems: [caught instanceof Error ? caught.message : String(caught)] };
  }
  if (values.help === true) return { kind: 'help', text: HELP };
  const text = (name: string) => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };

  const problems: string[] = [];
  const whole = (name: string, min: number, max: number): number | undefined => {
    const value = text(name);
    if (value === undefined) return undefined;
    const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!(number >= min && number <= max)) {
      problems.push(`--${name} must be a whole number from ${min} to ${max}, not "${value}"`);
      return undefined;
    }
    return number;
  };
  const port = whole('port', 0, 65_535) ?? DEFAULT_PORT;
  const processingMs = whole('processing-ms', 0, MAX_PROCESSING_MS) ?? 0;
  const pageSize = whole('list-page-size', 1, MAX_PAGE_SIZE) ?? null;
  const items = text('list-items') ?? 'document';
  if (items !== 'document' && items !== 'meta') {
    problems.push(`--list-items must be document or meta, not "${items}"`);
  }
  const apiKey = text('api-key') ?? env.PARSER_API_KEY;
  if (!apiKey) problems.push('give the key clients must send: --api-key KEY or PARSER_API_KEY');
  if (problems.length > 0 || !apiKey) return { kind: 'usage-error', problems };

  const organization = text('organization');
  const resthookSignatureKey = text('resthook-signature-key') ?? env.MOCK_RESTHOOK_SIGNATURE_KEY;
  return {
    kind: 'run',
    settings: {
      host: text('host') ?? '127.0.0.1',
      port,
      workspacesFile: text('workspaces'),
      logLevel: env.LOG_LEVEL ?? 'info',
      mock: {
        apiKey,
        // A long-running mock keeps each upload's metadata, not its bytes.
        retainFileBytes: false,
        processingMs,
        documentList: { items: items === 'meta' ? 'meta' : 'document', pageSize },
        ...(resthookSignatureKey ? { resthookSignatureKey } : {}),
        ...(organization ? { organization: { identifier: organization, name: organization } } : {}),
      },
    },
  };
}
