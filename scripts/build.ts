// Builds dist/: the gateway compiled to JavaScript (tsconfig.build.json: each src/*.ts to a
// .js, its relative imports rewritten to .js) and the files it reads beside its modules (the
// console's script and style). The image and the benchmarks run dist/cli.js: node then loads
// no type stripper, which holds about 20 MiB of an idle daemon. Tests and development run the
// sources directly.
//
// Run: node scripts/build.ts (npm run build).
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin/tsc');

rmSync(`${root}dist`, { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', `${root}tsconfig.build.json`], { stdio: 'inherit' });
cpSync(`${root}src/http/console/assets`, `${root}dist/http/console/assets`, { recursive: true });
