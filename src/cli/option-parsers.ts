import { statSync } from 'node:fs';
import { InvalidArgumentError } from 'commander';

/**
 * Parsers for option values, given to commander's argParser: a value they refuse is a usage
 * error that names the option (exit 2), found before anything is read or sent.
 */

/** A file that exists: --config and --attach name files the command must read. */
export function existingFile(path: string): string {
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch {
    throw new InvalidArgumentError(`no such file: ${path}`);
  }
  if (!isFile) throw new InvalidArgumentError(`not a file: ${path}`);
  return path;
}

/** Each use of a repeatable option adds its value (`--to a --to b`). */
export function collect<T>(
  parse: (text: string) => T,
): (text: string, previous: readonly T[] | undefined) => T[] {
  return (text, previous) => [...(previous ?? []), parse(text)];
}

export function portNumber(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535)
    throw new InvalidArgumentError('must be a port number, 0 to 65535');
  return port;
}

export function wholeNumber(text: string): number {
  if (!/^\d+$/.test(text)) throw new InvalidArgumentError('must be a whole number');
  return Number(text);
}

export function positiveSeconds(text: string): number {
  const seconds = Number(text);
  if (text.trim() === '' || !Number.isFinite(seconds) || seconds <= 0) {
    throw new InvalidArgumentError('must be a number of seconds above 0');
  }
  return seconds;
}

export function httpUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidArgumentError('must be a URL such as http://127.0.0.1:8025');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidArgumentError('must be an http: or https: URL');
  }
  return url.toString().replace(/\/$/, '');
}

/** HOST:PORT, with an IPv6 host in brackets ([::1]:2525). */
export function serverAddress(text: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d+)$/.exec(text);
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (host === undefined || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new InvalidArgumentError('must be HOST:PORT, such as 127.0.0.1:2525 or [::1]:2525');
  }
  return { host, port };
}
