import { defineConfig } from 'vitest/config';

// The package's tests alone (`npm test` here); the repository's root configuration runs
// them with the gateway's.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    teardownTimeout: 10_000,
  },
});
