// The file library (files/*) as handlers see it, and the metadata store behind it. Implemented in src/storage:
// file-library.ts (the library), file-meta.ts (metadata), objects-local.ts / objects-s3.ts (bytes).

export interface StoredFile {
  file_id: string;
  filename: string;
  /** Declared size while pending; the stored size once the bytes arrived. */
  size_bytes: number;
  mime: string | null;
  tags: string[];
  note: string | null;
  /** pending: created by files/upload, bytes not PUT yet; stored: the bytes are in the object store. */
  status: 'pending' | 'stored';
  created_at: number;
  source_url: string | null;
}

export interface NewFileMeta {
  filename: string;
  mime?: string | undefined;
  tags?: string[] | undefined;
  note?: string | undefined;
}

export interface SignedLink {
  url: string;
  expires_at: number;
}

export interface FileListQuery {
  tag?: string | undefined;
  filename?: string | undefined;
  limit: number;
  offset: number;
}

/** Files belong to one owner (an account); another owner's file_id is simply not found. */
export interface FileStore {
  /** files/upload: a pending file of exactly `size_bytes`, whose bytes arrive through its PUT link. */
  create(owner: string, meta: NewFileMeta & { size_bytes: number }): Promise<StoredFile>;
  /**
   * Streams bytes into a new stored file; more than `maxBytes` → payload_too_large and nothing is kept.
   * `length`: the size the source declared, when it did (lets a remote store take the body in one request).
   */
  ingest(
    owner: string,
    meta: NewFileMeta & { source_url?: string },
    body: AsyncIterable<Uint8Array>,
    opts: { maxBytes: number; signal: AbortSignal; length?: number | undefined },
  ): Promise<StoredFile>;
  get(owner: string, fileId: string): Promise<StoredFile | undefined>;
  list(owner: string, q: FileListQuery): Promise<{ files: StoredFile[]; total: number }>;
  /**
   * A link that downloads (GET) or uploads (PUT, pending files only) the file's bytes without an API key:
   * a signed link through the gateway (local storage) or a presigned URL of the object store (S3).
   */
  link(file: StoredFile, method: 'GET' | 'PUT'): Promise<SignedLink>;
}

/** A file's metadata as the metadata store keeps it: the handler's view plus its owner. */
export interface FileRecord extends StoredFile {
  owner: string;
}

/**
 * Where the file library keeps its metadata: the `files` table of the gateway's database (src/storage/file-meta.ts),
 * shared by the replicas on PostgreSQL. Each method is one
 * statement (no transaction spans an await); ordering and paging are the store's, ownership checks the
 * library's.
 */
export interface FileMetaStore {
  /** Adds a new file; its file_id is fresh (time-ordered and random), so it never collides. */
  insert(file: FileRecord): Promise<void>;
  /** The file with this id, whoever owns it (signed links carry no owner); undefined when there is none. */
  get(fileId: string): Promise<FileRecord | undefined>;
  /**
   * The owner's files matching the filters (`filename` exact; `tag` one of the file's tags), newest first
   * (created_at DESC, then file_id DESC), `limit` from `offset`; `total` counts every match.
   */
  list(owner: string, q: FileListQuery): Promise<{ files: FileRecord[]; total: number }>;
  /**
   * pending → stored, at most once across every replica: sets size_bytes, mime and the time it was stored,
   * only where the file is still pending. True when this call made the change.
   */
  markStored(
    fileId: string,
    stored: { size_bytes: number; mime: string | null; stored_at: number },
  ): Promise<boolean>;
}
