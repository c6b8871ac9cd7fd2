/**
 * `npm run bench [-- NAME...]`: the benchmarks, all of them (about ten minutes) or the ones
 * named. Each prints its figures with the load average beside them; none asserts anything.
 * bench/README.md says what each measures and holds the baseline.
 */
import { budgetBenchmark } from './budget.ts';
import { footprintBenchmark } from './footprint.ts';
import { hostileStallsBenchmark } from './hostile-stalls.ts';
import { intakeBenchmark } from './intake.ts';
import { memoryBenchmark } from './memory.ts';
import { profileBenchmark } from './profile.ts';
import { recoveryBenchmark } from './recovery.ts';
import { scaleOutBenchmark } from './scale-out.ts';
import { scanningBenchmark } from './scanning.ts';
import { uploadRateBenchmark } from './upload-rate.ts';

const benchmarks: Record<string, (env: NodeJS.ProcessEnv) => Promise<void>> = {
  intake: intakeBenchmark,
  memory: memoryBenchmark,
  upload: uploadRateBenchmark,
  scaleout: scaleOutBenchmark,
  scanning: scanningBenchmark,
  hostile: hostileStallsBenchmark,
  profile: profileBenchmark,
  budget: budgetBenchmark,
  footprint: footprintBenchmark,
  recovery: recoveryBenchmark,
};

const names = process.argv.slice(2);
const unknown = names.filter((name) => !(name in benchmarks));
if (unknown.length > 0) {
  console.error(`unknown benchmark ${unknown.join(', ')}; choose from ${Object.keys(benchmarks).join(', ')}`);
  process.exitCode = 2;
} else {
  for (const name of names.length > 0 ? names : Object.keys(benchmarks)) {
    const started = performance.now();
    console.log(`\n=== ${name} ===`);
    await benchmarks[name]?.(process.env);
    console.log(`(${name}: ${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
}
