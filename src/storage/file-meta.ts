import type { StateDb } from '../backend.js';
import { jsonArrayHas } from '../db/open.js';
import type { Database, StoreDb } from '../db/schema.js';
import type { FileListQuery, FileMetaStore, FileRecord } from '../ports/index.js';

// The file library's metadata (table `files`), shared by replicas on PostgreSQL: one statement per method, and
// markStored's conditional UPDATE (row-locked and re-checked on PostgreSQL, one writer on SQLite) happens at
// most once.

export function openFileMetaStore(state: StateDb): FileMetaStore {
  return new SqlFileMetaStore(state.stores);
}

function toRecord(r: Database['files']): FileRecord {
  return {
    file_id: r.file_id,
    owner: r.owner,
    filename: r.filename,
    size_bytes: r.size_bytes,
    mime: r.mime,
    // jsonb comes back parsed; SQLite's JSON text does not.
    tags: typeof r.tags === 'string' ? (JSON.parse(r.tags) as string[]) : r.tags,
    note: r.note,
    status: r.status,
    created_at: r.created_at,
    source_url: r.source_url,
  };
}

class SqlFileMetaStore implements FileMetaStore {
  constructor(private readonly db: StoreDb) {}

  async insert(f: FileRecord): Promise<void> {
    await this.db
      .insertInto('files')
      .values({
        file_id: f.file_id,
        owner: f.owner,
        filename: f.filename,
        size_bytes: f.size_bytes,
        mime: f.mime,
        tags: JSON.stringify(f.tags),
        note: f.note,
        status: f.status,
        source_url: f.source_url,
        created_at: f.created_at,
        stored_at: f.status === 'stored' ? f.created_at : null,
      })
      .execute();
  }

  async get(fileId: string): Promise<FileRecord | undefined> {
    const r = await this.db.selectFrom('files').selectAll().where('file_id', '=', fileId).executeTakeFirst();
    return r ? toRecord(r) : undefined;
  }

  async list(owner: string, q: FileListQuery): Promise<{ files: FileRecord[]; total: number }> {
    let match = this.db.selectFrom('files').where('owner', '=', owner);
    if (q.filename !== undefined) match = match.where('filename', '=', q.filename);
    if (q.tag !== undefined) match = match.where(jsonArrayHas(this.db, 'files.tags', q.tag));
    const { total } = await match
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .executeTakeFirstOrThrow();
    const rows = await match
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('file_id', 'desc')
      .limit(q.limit)
      .offset(q.offset)
      .execute();
    return { files: rows.map(toRecord), total: Number(total) };
  }

  async markStored(
    fileId: string,
    s: { size_bytes: number; mime: string | null; stored_at: number },
  ): Promise<boolean> {
    const r = await this.db
      .updateTable('files')
      .set({ status: 'stored', ...s })
      .where('file_id', '=', fileId)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}
