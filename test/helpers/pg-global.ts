import type { TestProject } from 'vitest/node';
import { answers, startCluster } from './pg-cluster.js';

// Vitest global set-up: a PostgreSQL server the PostgreSQL suites can create databases on. The one named by
// TOLLGATE_TEST_DATABASE_URL, else the machine's own at 127.0.0.1:5432 (user postgres), else a throw-away
// cluster started here from Debian's `postgresql` package (scripts/ensure-postgres.sh installs it) and
// removed afterwards. No server and no package: the set-up fails, so those suites fail rather than skip.

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
  }
}

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/test';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.TOLLGATE_TEST_DATABASE_URL;
  if (given) {
    if (!(await answers(given))) throw new Error(`TOLLGATE_TEST_DATABASE_URL (${given}) does not answer`);
    project.provide('pgAdminUrl', given);
    return async () => {};
  }
  if (await answers(DEFAULT_URL)) {
    project.provide('pgAdminUrl', DEFAULT_URL);
    return async () => {};
  }
  // No server: a throw-away cluster of the tests' own, removed afterwards.
  const cluster = await startCluster({ settings: { fsync: 'off' } });
  project.provide('pgAdminUrl', cluster.url);
  return () => cluster.destroy();
}
