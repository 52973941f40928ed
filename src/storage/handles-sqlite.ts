import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import { migrate, type SqliteDb } from '../lib/sqlite.js';
import type { HandleRecord, HandleStore } from '../ports/index.js';
import { type HandleRow, toRecord } from './handle-rows.js';

// Server-minted handles (SEP-2567): a crawl id or render id given to a caller is ours, not the vendor's, and
// resolves only for the account that minted it; another account's handle is simply not found.

const MIGRATIONS = [
  `CREATE TABLE handles (
     handle     TEXT PRIMARY KEY,
     owner      TEXT NOT NULL,
     kind       TEXT NOT NULL,
     ref        TEXT NOT NULL,
     data       TEXT NOT NULL DEFAULT '{}',
     created_at INTEGER NOT NULL
   );
   CREATE INDEX handles_owner ON handles(owner, kind);`,
];

export class SqliteHandleStore implements HandleStore {
  private readonly ins;
  private readonly get;
  private readonly upd;
  private readonly byRef;
  private readonly byHandle;

  constructor(
    db: SqliteDb,
    private readonly clock: Clock,
  ) {
    migrate(db, 'handles', MIGRATIONS);
    this.ins = db.prepare(
      'INSERT INTO handles (handle, owner, kind, ref, data, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.get = db.prepare<[string, string, string], HandleRow>(
      'SELECT * FROM handles WHERE handle = ? AND owner = ? AND kind = ?',
    );
    this.upd = db.prepare('UPDATE handles SET data = ? WHERE handle = ?');
    this.byRef = db.prepare<[string, string, string], HandleRow>(
      'SELECT * FROM handles WHERE owner = ? AND kind = ? AND ref = ? ORDER BY created_at DESC LIMIT 1',
    );
    this.byHandle = db.prepare<[string], HandleRow>('SELECT * FROM handles WHERE handle = ?');
  }

  mint(owner: string, kind: string, ref: string, data: Record<string, unknown> = {}): Promise<string> {
    const now = this.clock.now();
    const handle = newId(kind, now);
    this.ins.run(handle, owner, kind, ref, JSON.stringify(data), now);
    return Promise.resolve(handle);
  }

  resolve(owner: string, kind: string, handle: string): Promise<HandleRecord | undefined> {
    return Promise.resolve(toRecord(this.get.get(handle, owner, kind)));
  }

  findByRef(owner: string, kind: string, ref: string): Promise<HandleRecord | undefined> {
    return Promise.resolve(toRecord(this.byRef.get(owner, kind, ref)));
  }

  lookup(handle: string): Promise<HandleRecord | undefined> {
    return Promise.resolve(toRecord(this.byHandle.get(handle)));
  }

  update(handle: string, data: Record<string, unknown>): Promise<void> {
    this.upd.run(JSON.stringify(data), handle);
    return Promise.resolve();
  }
}
