import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Fetches (or finds) nats-server once per run and exports NATS_SERVER_BIN to the tests.
    globalSetup: ['test/setup/nats-server.ts'],
    // Each file starts its own node; two cores are better used one file at a time.
    fileParallelism: false,
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
