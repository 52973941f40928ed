import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { PgPool } from '../pg/pool.js';
import type { HandleRecord, HandleStore } from '../ports/index.js';
import { type HandleRow, toRecord } from './handle-rows.js';

// Server-minted handles in PostgreSQL (table `handles`, src/pg/migrations/stores.ts): a handle minted by one
// replica resolves on every other, for its owner only. Same statements as the SQLite store.

export class PgHandleStore implements HandleStore {
  constructor(
    private readonly pool: PgPool,
    private readonly clock: Clock,
  ) {}

  async mint(owner: string, kind: string, ref: string, data: Record<string, unknown> = {}): Promise<string> {
    const now = this.clock.now();
    const handle = newId(kind, now);
    await this.pool.query({
      name: 'handles_mint',
      text: 'INSERT INTO handles (handle, owner, kind, ref, data, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
      values: [handle, owner, kind, ref, JSON.stringify(data), now],
    });
    return handle;
  }

  async resolve(owner: string, kind: string, handle: string): Promise<HandleRecord | undefined> {
    const r = await this.pool.query<HandleRow>({
      name: 'handles_resolve',
      text: 'SELECT * FROM handles WHERE handle = $1 AND owner = $2 AND kind = $3',
      values: [handle, owner, kind],
    });
    return toRecord(r.rows[0]);
  }

  async findByRef(owner: string, kind: string, ref: string): Promise<HandleRecord | undefined> {
    const r = await this.pool.query<HandleRow>({
      name: 'handles_by_ref',
      text: 'SELECT * FROM handles WHERE owner = $1 AND kind = $2 AND ref = $3 ORDER BY created_at DESC LIMIT 1',
      values: [owner, kind, ref],
    });
    return toRecord(r.rows[0]);
  }

  async lookup(handle: string): Promise<HandleRecord | undefined> {
    const r = await this.pool.query<HandleRow>({
      name: 'handles_lookup',
      text: 'SELECT * FROM handles WHERE handle = $1',
      values: [handle],
    });
    return toRecord(r.rows[0]);
  }

  async update(handle: string, data: Record<string, unknown>): Promise<void> {
    await this.pool.query({
      name: 'handles_update',
      text: 'UPDATE handles SET data = $1 WHERE handle = $2',
      values: [JSON.stringify(data), handle],
    });
  }
}
