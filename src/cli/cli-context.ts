import type { Writable } from 'node:stream';
import type { Env } from '../config/interpolate-env.ts';
import type { Role } from '../gateway.ts';

/**
 * What the commands get from the process, handed in by src/cli.ts (the composition root):
 * the command modules read no process.env or argv and never exit, so each command reads
 * as a function of its options and this context.
 */
export interface CliContext {
  /** The package's version, for --version. */
  readonly version: string;
  readonly env: Env;
  readonly stdout: Writable;
  readonly stderr: Writable;
  /** Whether stderr is a terminal: long operations show their progress there only then. */
  readonly stderrIsTerminal: boolean;
  /** Starts the daemon (src/main.ts), which then runs until a signal stops it. */
  runDaemon(configPath: string, role: Role): Promise<void>;
  /** Resolves on the first SIGTERM or SIGINT after the call. */
  untilStopped(): Promise<void>;
}

/** A CliContext with where a command reports the exit code it ends with. */
export interface CommandContext extends CliContext {
  finish(exitCode: number): void;
}

/** The configuration file when --config is not given (README, "Commands"). */
export const DEFAULT_CONFIG = 'config/gateway.yaml';

/** Exit codes, as for the workspace commands (command-io.ts): 0 done, 1 refused or failed. */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
/** A usage error: nothing was done. */
export const EXIT_USAGE = 2;

/** For commander's command.error(): a usage error ends with exit code 2 (EXIT_USAGE). */
export const USAGE_ERROR = { exitCode: 2, code: 'ingest-gateway.usage' } as const;
