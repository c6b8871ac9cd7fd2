import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
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
