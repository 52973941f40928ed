import type { PgPool } from '../pg/pool.js';
import type { FileListQuery, FileMetaStore, FileRecord } from '../ports/index.js';

// The file library's metadata in PostgreSQL (table `files`), shared by replicas: one statement per method, and
// markStored's conditional UPDATE (row-locked, re-checked after a concurrent update) happens at most once.

interface Row {
  file_id: string;
  owner: string;
  filename: string;
  size_bytes: number;
  mime: string | null;
  tags: string[];
  note: string | null;
  status: 'pending' | 'stored';
  source_url: string | null;
  created_at: number;
}

export class PgFileMetaStore implements FileMetaStore {
  constructor(private readonly pool: PgPool) {}

  async insert(f: FileRecord): Promise<void> {
    await this.pool.query({
      name: 'files_insert',
      text: `INSERT INTO files (file_id, owner, filename, size_bytes, mime, tags, note, status, source_url, created_at, stored_at)
             VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11)`,
      values: [
        f.file_id,
        f.owner,
        f.filename,
        f.size_bytes,
        f.mime,
        JSON.stringify(f.tags),
        f.note,
        f.status,
        f.source_url,
        f.created_at,
        f.status === 'stored' ? f.created_at : null,
      ],
    });
  }

  async get(fileId: string): Promise<FileRecord | undefined> {
    const r = await this.pool.query<Row>({
      name: 'files_get',
      text: 'SELECT * FROM files WHERE file_id = $1',
      values: [fileId],
    });
    return r.rows[0] ? toRecord(r.rows[0]) : undefined;
  }

  async list(owner: string, q: FileListQuery): Promise<{ files: FileRecord[]; total: number }> {
    // NULL filters match everything, so the statement is the same for every query (and can be prepared).
    const r = await this.pool.query<Row & { total: number }>({
      name: 'files_list',
      text: `SELECT *, count(*) OVER ()::bigint AS total FROM files
             WHERE owner = $1 AND ($2::text IS NULL OR filename = $2) AND ($3::text IS NULL OR tags ? $3)
             ORDER BY created_at DESC, file_id DESC LIMIT $4 OFFSET $5`,
      values: [owner, q.filename ?? null, q.tag ?? null, q.limit, q.offset],
    });
    let total = r.rows[0]?.total;
    if (total === undefined) {
      // A page past the end has no rows to carry the count.
      const c = await this.pool.query<{ n: number }>({
        name: 'files_count',
        text: `SELECT count(*)::bigint AS n FROM files
               WHERE owner = $1 AND ($2::text IS NULL OR filename = $2) AND ($3::text IS NULL OR tags ? $3)`,
        values: [owner, q.filename ?? null, q.tag ?? null],
      });
      total = c.rows[0]?.n ?? 0;
    }
    return { files: r.rows.map(toRecord), total };
  }

  async markStored(
    fileId: string,
    s: { size_bytes: number; mime: string | null; stored_at: number },
  ): Promise<boolean> {
    const r = await this.pool.query({
      name: 'files_mark_stored',
      text: `UPDATE files SET status = 'stored', size_bytes = $1, mime = $2, stored_at = $3
             WHERE file_id = $4 AND status = 'pending'`,
      values: [s.size_bytes, s.mime, s.stored_at, fileId],
    });
    return r.rowCount === 1;
  }
}

function toRecord(r: Row): FileRecord {
  return {
    file_id: r.file_id,
    owner: r.owner,
    filename: r.filename,
    size_bytes: r.size_bytes,
    mime: r.mime,
    tags: r.tags,
    note: r.note,
    status: r.status,
    created_at: r.created_at,
    source_url: r.source_url,
  };
}
