import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The workspaces' own suites run here too (each also runs alone: npm test -w <name>).
    include: ['test/**/*.test.ts', 'bench/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    reporters: ['default', './harness/summary-reporter.ts'],
    // Integration suites each start their own redis-server, mock API and gateway;
    // two workers match the two cores CI has.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // A suite that leaves a socket or timer open must fail loudly, not hang CI.
    teardownTimeout: 10_000,
  },
});
