import type { DaemonProcess } from './daemon-process.ts';

/** The fields of a daemon's JSON log line that tests read. */
export interface DaemonLogEntry {
  msg?: string;
  trigger?: string;
  files?: string[];
  problems?: string[];
  [field: string]: unknown;
}

function parse(line: string): DaemonLogEntry {
  try {
    return JSON.parse(line) as DaemonLogEntry;
  } catch {
    // stderr, or a line that is not pino's: no fields.
    return {};
  }
}

/**
 * The next log entry `holds` accepts, after those the daemon has already written: for an
 * effect the test is about to cause, when an earlier one of the same kind is in the log.
 * Ask before causing it.
 */
export async function nextLogEntry(
  daemon: DaemonProcess,
  holds: (entry: DaemonLogEntry) => boolean,
): Promise<DaemonLogEntry> {
  const matches = (line: string) => holds(parse(line));
  const before = daemon.lines.filter(matches).length;
  const line = await daemon.waitFor(
    (candidate) => matches(candidate) && daemon.lines.filter(matches).length > before,
  );
  return parse(line);
}
