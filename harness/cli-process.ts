import { execFile } from 'node:child_process';

/**
 * The command line as a user runs it: `node src/cli.ts ARGS` in a child process, with the
 * project's Node (process.execPath). `terminal: true` runs it under script(1), which gives it
 * a pseudo-terminal for stdout and stderr (both then arrive in `stdout`, with CRLF line ends).
 */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliRunOptions {
  env?: Record<string, string>;
  terminal?: boolean;
}

export function runCli(args: readonly string[], options: CliRunOptions = {}): Promise<CliRun> {
  const node = [process.execPath, 'src/cli.ts', ...args];
  const [file, argv] = options.terminal
    ? ['script', ['--quiet', '--return', '--command', node.map(shellQuote).join(' '), '/dev/null']]
    : [process.execPath, node.slice(1)];
  return new Promise((resolve) => {
    execFile(file, argv, { env: { ...process.env, ...options.env } }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      resolve({ code, stdout, stderr });
    });
  });
}

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
