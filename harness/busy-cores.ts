import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { availableParallelism } from 'node:os';

/**
 * Every core kept busy by processes that spin, as other work on a CI machine keeps them: a
 * stall test that must hold on a loaded machine runs its case between start and stop. Each
 * spinner prints one line once it runs, so start() resolves with every core taken.
 */
export interface BusyCores {
  /** Kills the spinners and waits for them to exit. Idempotent. */
  stop(): Promise<void>;
}

const SPIN = "process.stdout.write('spinning\\n'); for (;;) {}";

export async function busyCores(count = availableParallelism()): Promise<BusyCores> {
  const spinners: ChildProcess[] = Array.from({ length: count }, () =>
    spawn(process.execPath, ['-e', SPIN], { stdio: ['ignore', 'pipe', 'ignore'] }),
  );
  const exited = spinners.map((spinner) => once(spinner, 'exit'));
  await Promise.all(spinners.map((spinner) => (spinner.stdout ? once(spinner.stdout, 'data') : null)));
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        for (const spinner of spinners) spinner.kill('SIGKILL');
        await Promise.all(exited);
      })();
      return stopping;
    },
  };
}
