import { copyFile, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildGateway } from '../scripts/build.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * The gateway bundled as the image runs it (scripts/build.ts), in a folder of its own laid out
 * as the image's /app: dist/, package.json, and node_modules (a link to the project's).
 */
export interface BuiltGateway {
  /** dist/cli.js, to start with startDaemon. */
  readonly cli: string;
  /**
   * The modules a loaded URL stands for: the sources bundled into it when it is one of the
   * bundle's files (as file URLs under the project, src/… and node_modules/…), else the URL.
   */
  sourcesOf(url: string): string[];
  close(): Promise<void>;
}

export async function buildGatewayCopy(): Promise<BuiltGateway> {
  const dir = await mkdtemp(join(tmpdir(), 'built-gateway-'));
  try {
    const outdir = join(dir, 'dist');
    const metafile = await buildGateway({ outdir });
    await copyFile(join(root, 'package.json'), join(dir, 'package.json'));
    await symlink(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const outputs = new Map<string, string[]>();
    for (const [output, { inputs }] of Object.entries(metafile.outputs)) {
      outputs.set(
        pathToFileURL(resolve(root, output)).href,
        Object.keys(inputs).map((input) => pathToFileURL(resolve(root, input)).href),
      );
    }
    return {
      cli: join(outdir, 'cli.js'),
      sourcesOf: (url) => outputs.get(url) ?? [url],
      close: () => rm(dir, { recursive: true, force: true }),
    };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
