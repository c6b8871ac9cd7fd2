import { lstat, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A directory laid out as the kubelet lays out a ConfigMap or Secret volume: the files live in
 * a timestamped directory `..2026_…`, the symlink `..data` points at it, and each file's name is
 * a symlink to `..data/<name>`. An update writes a new timestamped directory, points a new
 * symlink at it and renames that over `..data` (one atomic step), then removes the old one.
 */
export interface KubernetesVolume {
  readonly dir: string;
  /** The path a container is given for the file: the symlink `<dir>/<name>`. */
  path(name: string): string;
  /** Replaces the volume's content with `files`, as the kubelet applies an update. */
  update(files: Readonly<Record<string, string | Buffer>>): Promise<void>;
}

export async function kubernetesVolume(
  dir: string,
  files: Readonly<Record<string, string | Buffer>>,
): Promise<KubernetesVolume> {
  await mkdir(dir, { recursive: true });
  let generation = 0;
  let current: string | undefined;
  const volume: KubernetesVolume = {
    dir,
    path: (name) => join(dir, name),
    async update(next) {
      generation += 1;
      const timestamped = `..2026_11_28_08_00_0${generation}.${generation}`;
      await mkdir(join(dir, timestamped));
      for (const [name, content] of Object.entries(next))
        await writeFile(join(dir, timestamped, name), content);
      await symlink(timestamped, join(dir, '..data_tmp'));
      await rename(join(dir, '..data_tmp'), join(dir, '..data'));
      for (const name of Object.keys(next)) {
        const linked = await lstat(join(dir, name)).then(
          () => true,
          () => false,
        );
        if (!linked) await symlink(join('..data', name), join(dir, name));
      }
      if (current !== undefined) await rm(join(dir, current), { recursive: true });
      current = timestamped;
    },
  };
  await volume.update(files);
  return volume;
}
