import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/live/**', 'node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests start real servers on 127.0.0.1:0; files run in parallel, tests within a file serially.
    pool: 'forks',
    // Most test time is waiting (servers, fsyncs, browsers, throw-away PostgreSQL clusters), not CPU: three files at
    // a time on a 2-core machine keep the suite within its 10 minutes (one at a time, vitest's default here, took 15).
    maxWorkers: 3,
    // A PostgreSQL server for the PostgreSQL suites (found or started once): test/helpers/pg-global.ts.
    globalSetup: ['test/helpers/pg-global.ts'],
    // Known-harmless warnings of Node 20 (oidc-provider, the AWS SDK) kept out of the test output.
    setupFiles: ['test/helpers/quiet-warnings.ts'],
    env: { TOLLGATE_LOG_LEVEL: 'silent' },
  },
});
