import { migrate, type SqliteDb } from '../lib/sqlite.js';
import type { FileListQuery, FileMetaStore, FileRecord } from '../ports/index.js';

// The file library's metadata in the embedded gateway's SQLite database (the `files` table). Each method is
// one statement; SQLite's single writer makes markStored's conditional update happen at most once.

const MIGRATIONS = [
  `CREATE TABLE files (
     file_id    TEXT PRIMARY KEY,
     owner      TEXT NOT NULL,
     filename   TEXT NOT NULL,
     size_bytes INTEGER NOT NULL,
     mime       TEXT,
     tags       TEXT NOT NULL DEFAULT '[]',
     note       TEXT,
     status     TEXT NOT NULL CHECK (status IN ('pending', 'stored')),
     source_url TEXT,
     created_at INTEGER NOT NULL,
     stored_at  INTEGER
   );
   CREATE INDEX files_owner ON files(owner, created_at);`,
];

interface Row {
  file_id: string;
  owner: string;
  filename: string;
  size_bytes: number;
  mime: string | null;
  tags: string;
  note: string | null;
  status: 'pending' | 'stored';
  source_url: string | null;
  created_at: number;
}

export class SqliteFileMetaStore implements FileMetaStore {
  constructor(private readonly db: SqliteDb) {
    migrate(db, 'files', MIGRATIONS);
  }

  insert(f: FileRecord): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO files (file_id, owner, filename, size_bytes, mime, tags, note, status, source_url, created_at, stored_at)
         VALUES (@file_id, @owner, @filename, @size_bytes, @mime, @tags, @note, @status, @source_url, @created_at, @stored_at)`,
      )
      .run({
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
      });
    return Promise.resolve();
  }

  get(fileId: string): Promise<FileRecord | undefined> {
    const r = this.db.prepare<[string], Row>('SELECT * FROM files WHERE file_id = ?').get(fileId);
    return Promise.resolve(r ? toRecord(r) : undefined);
  }

  list(owner: string, q: FileListQuery): Promise<{ files: FileRecord[]; total: number }> {
    let where = 'owner = ?';
    const args: unknown[] = [owner];
    if (q.filename !== undefined) {
      where += ' AND filename = ?';
      args.push(q.filename);
    }
    if (q.tag !== undefined) {
      where += ' AND EXISTS (SELECT 1 FROM json_each(files.tags) WHERE json_each.value = ?)';
      args.push(q.tag);
    }
    const total = (
      this.db.prepare(`SELECT count(*) AS n FROM files WHERE ${where}`).get(...args) as { n: number }
    ).n;
    const rows = this.db
      .prepare(`SELECT * FROM files WHERE ${where} ORDER BY created_at DESC, file_id DESC LIMIT ? OFFSET ?`)
      .all(...args, q.limit, q.offset) as Row[];
    return Promise.resolve({ files: rows.map(toRecord), total });
  }

  markStored(
    fileId: string,
    s: { size_bytes: number; mime: string | null; stored_at: number },
  ): Promise<boolean> {
    const r = this.db
      .prepare(
        "UPDATE files SET status = 'stored', size_bytes = ?, mime = ?, stored_at = ? WHERE file_id = ? AND status = 'pending'",
      )
      .run(s.size_bytes, s.mime, s.stored_at, fileId);
    return Promise.resolve(r.changes === 1);
  }
}

function toRecord(r: Row): FileRecord {
  return {
    file_id: r.file_id,
    owner: r.owner,
    filename: r.filename,
    size_bytes: r.size_bytes,
    mime: r.mime,
    tags: JSON.parse(r.tags) as string[],
    note: r.note,
    status: r.status,
    created_at: r.created_at,
    source_url: r.source_url,
  };
}
