import type { StateDb } from '../backend.js';
import { prepare } from '../db/prepared.js';
import type { Database, StoreDb } from '../db/schema.js';
import type { Clock } from '../lib/clock.js';
import { newId } from '../lib/ids.js';
import type { HandleRecord, HandleStore } from '../ports/index.js';

// Server-minted handles (SEP-2567): a crawl id or render id given to a caller is ours, not the vendor's, and
// resolves only for the account that minted it; another account's handle is simply not found. On PostgreSQL a
// handle minted by one replica resolves on every other. Polls resolve one per call: compiled once.

type Row = Database['handles'];

function toRecord(r: Row | undefined): HandleRecord | undefined {
  return r ? { ...r, data: JSON.parse(r.data) as Record<string, unknown> } : undefined;
}

export function openHandleStore(state: StateDb, clock: Clock): HandleStore {
  return new SqlHandleStore(state.stores, clock);
}

class SqlHandleStore implements HandleStore {
  private readonly q;

  constructor(
    private readonly db: StoreDb,
    private readonly clock: Clock,
  ) {
    const all = db.selectFrom('handles').selectAll();
    this.q = {
      mint: prepare(db, (p: Row) =>
        db.insertInto('handles').values({
          handle: p.handle,
          owner: p.owner,
          kind: p.kind,
          ref: p.ref,
          data: p.data,
          created_at: p.created_at,
        }),
      ),
      resolve: prepare(db, (p: { handle: string; owner: string; kind: string }) =>
        all.where('handle', '=', p.handle).where('owner', '=', p.owner).where('kind', '=', p.kind),
      ),
      lookup: prepare(db, (p: { handle: string }) => all.where('handle', '=', p.handle)),
    };
  }

  async mint(owner: string, kind: string, ref: string, data: Record<string, unknown> = {}): Promise<string> {
    const now = this.clock.now();
    const handle = newId(kind, now);
    await this.q.mint.run({ handle, owner, kind, ref, data: JSON.stringify(data), created_at: now });
    return handle;
  }

  async resolve(owner: string, kind: string, handle: string): Promise<HandleRecord | undefined> {
    return toRecord(await this.q.resolve.first({ handle, owner, kind }));
  }

  async findByRef(owner: string, kind: string, ref: string): Promise<HandleRecord | undefined> {
    const row = await this.db
      .selectFrom('handles')
      .selectAll()
      .where('owner', '=', owner)
      .where('kind', '=', kind)
      .where('ref', '=', ref)
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return toRecord(row);
  }

  async lookup(handle: string): Promise<HandleRecord | undefined> {
    return toRecord(await this.q.lookup.first({ handle }));
  }

  async update(handle: string, data: Record<string, unknown>): Promise<void> {
    await this.db
      .updateTable('handles')
      .set({ data: JSON.stringify(data) })
      .where('handle', '=', handle)
      .execute();
  }
}
