import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What the contract tests (test/contract/) compare: the version package.json pins for a
 * package whose internals the gateway overrides or deep-imports (docs/overrides.md), and the
 * version npm installed. An exact pin is what keeps an upgrade from changing those internals
 * unnoticed; the installed version matching it says the lockfile agrees.
 */

const root = join(import.meta.dirname, '..');

interface PackageJson {
  version?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  exports?: unknown;
}

function readPackageJson(path: string): PackageJson {
  return JSON.parse(readFileSync(path, 'utf8')) as PackageJson;
}

/** The version range the project's package.json declares for `name`. */
export function declaredVersion(name: string): string | undefined {
  const manifest = readPackageJson(join(root, 'package.json'));
  return manifest.dependencies?.[name] ?? manifest.devDependencies?.[name];
}

/** The installed package's own package.json. */
export function installedManifest(name: string): PackageJson {
  return readPackageJson(join(root, 'node_modules', name, 'package.json'));
}

/** Where a file of an installed package lies: for the lib/ files the gateway imports or patches. */
export function installedFile(name: string, path: string): string {
  return join(root, 'node_modules', name, path);
}

/** An exact version: no range, tag or URL. */
export const EXACT_VERSION = /^\d+\.\d+\.\d+$/;

/** A file of this project, by its path from the repository root. */
export function projectFile(path: string): string {
  return join(root, path);
}
