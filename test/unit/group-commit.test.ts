import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/ledger/sqlite/group-commit.js';
import { openSqlite, type SqliteDb } from '../../src/lib/sqlite.js';

// A write that fails leaves nothing behind, whether it committed alone or in a batch with others: its savepoint
// is rolled back, and the others commit.

let dir: string;
let db: SqliteDb;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tg-group-commit-'));
  const path = join(dir, 'ledger.db');
  db = openSqlite(path);
  db.exec('CREATE TABLE t (x INTEGER NOT NULL CHECK (x >= 0))');
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const rows = () => (db.prepare('SELECT x FROM t ORDER BY x').all() as Array<{ x: number }>).map((r) => r.x);

/** A write that inserts `first`, then `second` (a negative one breaks the CHECK after the first went in). */
function pair(first: number, second: number, seen: string[]) {
  return {
    durable: true,
    run: () => {
      db.prepare('INSERT INTO t VALUES (?)').run(first);
      db.prepare('INSERT INTO t VALUES (?)').run(second);
      return first;
    },
    committed: () => seen.push(`committed ${first}`),
    failed: () => seen.push(`failed ${first}`),
  };
}

describe('[billing:one-durable-commit] group commit: a failed write leaves nothing', () => {
  it('a lone write that throws halfway: its first statement is undone, it is rejected, the next one commits', async () => {
    const commits = new GroupCommit(db, { kind: 'group', walPath: join(dir, 'ledger.db-wal') });
    const seen: string[] = [];
    try {
      await expect(commits.write(pair(1, -1, seen))).rejects.toThrow(/CHECK/);
      expect(rows()).toEqual([]);
      expect(db.inTransaction).toBe(false);
      await expect(commits.write(pair(2, 3, seen))).resolves.toBe(2);
      expect(rows()).toEqual([2, 3]);
      expect(seen).toEqual(['failed 1', 'committed 2']);
    } finally {
      await commits.close();
    }
  });

  it('in a batch, the failed write is undone alone and the others commit', async () => {
    // The first sync is held so that the next writes queue behind it and commit together as one batch.
    let release: (() => void) | undefined;
    const commits = new GroupCommit(db, {
      kind: 'group',
      walPath: join(dir, 'ledger.db-wal'),
      sync: (_fd, done) => {
        if (release === undefined) release = () => done(null);
        else setImmediate(() => done(null));
      },
    });
    const seen: string[] = [];
    try {
      const first = commits.write(pair(1, 2, seen)); // commits at once, then waits for the held sync
      const batch = [
        commits.write(pair(10, 11, seen)),
        commits.write(pair(20, -1, seen)),
        commits.write(pair(30, 31, seen)),
      ];
      expect(rows()).toEqual([1, 2]); // the three are queued behind the sync in flight
      release?.();
      await first;
      const settled = await Promise.allSettled(batch);
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(rows()).toEqual([1, 2, 10, 11, 30, 31]);
      expect(seen).toEqual(['committed 1', 'committed 10', 'failed 20', 'committed 30']);
    } finally {
      await commits.close();
    }
  });
});
