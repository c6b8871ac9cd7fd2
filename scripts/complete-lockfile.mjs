#!/usr/bin/env node
// Adds lockfile entries for the platform builds the package registry of this project's
// machines does not serve (darwin, win32, android, musl, ...). `npm install` cannot read
// their manifests there, so it leaves them out of package-lock.json, and `npm ci` then
// refuses the lockfile as out of sync with the packages that list them as optional
// dependencies. An entry with the name's os/cpu/libc is all `npm ci` needs to skip them on
// this platform and to fetch them on one that wants them.
//
// Run after every `npm install` that changes dependencies: node scripts/complete-lockfile.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;
const systems = new Set([
  'linux',
  'darwin',
  'win32',
  'android',
  'freebsd',
  'openbsd',
  'netbsd',
  'sunos',
  'aix',
]);
let added = 0;

for (const [path, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (packages[key]) continue;
    const parts = name.split('/').at(-1).split('-');
    const at = parts.findIndex((part) => systems.has(part));
    if (at < 0 || !parts[at + 1]) {
      console.error(`${path}: cannot tell the platform of optional dependency ${name}; add it by hand`);
      process.exitCode = 1;
      continue;
    }
    const stub = { version, cpu: [parts[at + 1]], optional: true, os: [parts[at]] };
    if (parts[at + 2] === 'musl' || parts[at + 2] === 'gnu')
      stub.libc = [parts[at + 2] === 'gnu' ? 'glibc' : 'musl'];
    if (entry.dev) stub.dev = true;
    packages[key] = stub;
    added++;
  }
}

lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)),
);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: ${added} platform entr${added === 1 ? 'y' : 'ies'} added`);
