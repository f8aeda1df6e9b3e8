import { defineConfig } from 'vitest/config';

// Files that assert a latency or a takeover bound, or load the machine on purpose: they run
// alone, after the others, so that another file's node cannot eat their margin.
const alone = [
  'test/integration/fairness.test.ts',
  'test/integration/websocket.test.ts',
  'test/integration/cluster-failover.test.ts',
  'test/integration/cluster-elections.test.ts',
  'test/integration/cluster-disk-full.test.ts',
  'test/integration/preconf-10ms.test.ts',
  'test/integration/hostile-requests.test.ts',
  'test/integration/runtime.test.ts',
];

export default defineConfig({
  test: {
    // Fetches (or finds) nats-server once per run and exports NATS_SERVER_BIN to the tests.
    globalSetup: ['test/setup/nats-server.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      {
        // Most files wait on timers and child processes more than they compute: three at a
        // time keep two cores busy (docs/testing.md has the timings).
        extends: true,
        test: { name: 'together', include: ['test/**/*.test.ts'], exclude: alone, maxWorkers: 3, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'alone', include: alone, fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
