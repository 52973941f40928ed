import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StateDb } from '../../src/backend.js';
import { openState } from '../../src/cli/state.js';
import { createTestDatabase } from './pg.js';

// One behaviour, two backends: a store suite runs, unchanged, once per backend with
// `describe.each(BACKENDS)('… ($name)', (backend) => { … })`, opening a fresh StateDb in its hooks.

export interface OpenedState {
  db: StateDb;
  close(): Promise<void>;
}

export interface BackendCase {
  name: 'sqlite' | 'postgres';
  /** A fresh, empty, migrated state (a new SQLite file; a new PostgreSQL database). */
  open(opts?: { replicaId?: string }): Promise<OpenedState>;
  /** A second handle on the same state (another replica; SQLite: the same file). */
  share(state: OpenedState, opts?: { replicaId?: string }): Promise<OpenedState>;
}

const sqlite: BackendCase = {
  name: 'sqlite',
  async open() {
    const dataDir = mkdtempSync(join(tmpdir(), 'tg-state-'));
    const opened = await openState({ dataDir, database: undefined });
    return {
      db: opened.state,
      async close() {
        await opened.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  },
  async share(state) {
    const opened = await openState({ dataDir: state.db.dataDir, database: undefined });
    return { db: opened.state, close: () => opened.close() };
  },
};

const urls = new WeakMap<OpenedState, string>();

async function openPg(url: string, replicaId: string, migrate: boolean) {
  const dataDir = mkdtempSync(join(tmpdir(), 'tg-state-'));
  const opened = await openState(
    { dataDir, database: { url, pool: 10, leaseMs: 30_000 } },
    { replicaId, migrate },
  );
  return {
    db: opened.state,
    async close() {
      await opened.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const postgres: BackendCase = {
  name: 'postgres',
  async open(opts) {
    const test = await createTestDatabase('tg_state');
    const opened = await openPg(test.url, opts?.replicaId ?? 'r_test_1', true);
    const state: OpenedState = {
      db: opened.db,
      async close() {
        await opened.close();
        await test.drop();
      },
    };
    urls.set(state, test.url);
    return state;
  },
  async share(state, opts) {
    const url = urls.get(state);
    if (!url) throw new Error('not a postgres state opened here');
    return openPg(url, opts?.replicaId ?? 'r_test_2', false);
  },
};

export const BACKENDS: readonly BackendCase[] = [sqlite, postgres];
