import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StateDb } from '../../src/backend.js';
import { openSqlite } from '../../src/lib/sqlite.js';
import { migrate } from '../../src/pg/migrate.js';
import { openPgPool } from '../../src/pg/pool.js';
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
    const db = openSqlite(join(dataDir, 'tollgate.db'));
    return {
      db: { kind: 'sqlite', db, dataDir },
      async close() {
        db.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  },
  async share(state) {
    if (state.db.kind !== 'sqlite') throw new Error('not sqlite');
    const db = openSqlite(join(state.db.dataDir, 'tollgate.db'));
    return {
      db: { kind: 'sqlite', db, dataDir: state.db.dataDir },
      async close() {
        db.close();
      },
    };
  },
};

const urls = new WeakMap<OpenedState, string>();

const postgres: BackendCase = {
  name: 'postgres',
  async open(opts) {
    const test = await createTestDatabase('tg_state');
    const pool = openPgPool(test.url, { max: 10 });
    await migrate(pool);
    const dataDir = mkdtempSync(join(tmpdir(), 'tg-state-'));
    const state: OpenedState = {
      db: { kind: 'postgres', pool, replicaId: opts?.replicaId ?? 'r_test_1', dataDir },
      async close() {
        await pool.end();
        await test.drop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
    urls.set(state, test.url);
    return state;
  },
  async share(state, opts) {
    const url = urls.get(state);
    if (!url) throw new Error('not a postgres state opened here');
    const pool = openPgPool(url, { max: 10 });
    const dataDir = mkdtempSync(join(tmpdir(), 'tg-state-'));
    return {
      db: { kind: 'postgres', pool, replicaId: opts?.replicaId ?? 'r_test_2', dataDir },
      async close() {
        await pool.end();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  },
};

export const BACKENDS: readonly BackendCase[] = [sqlite, postgres];
