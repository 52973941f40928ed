// The file library (files/*) as handlers see it (implemented in src/storage/local-files.ts).

export interface StoredFile {
  file_id: string;
  filename: string;
  /** Declared size while pending; the stored size once the bytes arrived. */
  size_bytes: number;
  mime: string | null;
  tags: string[];
  note: string | null;
  /** pending: created by files/upload, bytes not PUT yet; stored: the bytes are on disk. */
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

/** Files belong to one owner (an account); another owner's file_id is simply not found. */
export interface FileStore {
  /** files/upload: a pending file of exactly `size_bytes`, whose bytes arrive through its PUT link. */
  create(owner: string, meta: NewFileMeta & { size_bytes: number }): Promise<StoredFile>;
  /** Streams bytes into a new stored file; more than `maxBytes` → payload_too_large and nothing is kept. */
  ingest(
    owner: string,
    meta: NewFileMeta & { source_url?: string },
    body: AsyncIterable<Uint8Array>,
    opts: { maxBytes: number; signal: AbortSignal },
  ): Promise<StoredFile>;
  get(owner: string, fileId: string): Promise<StoredFile | undefined>;
  list(
    owner: string,
    q: { tag?: string | undefined; filename?: string | undefined; limit: number; offset: number },
  ): Promise<{ files: StoredFile[]; total: number }>;
  /** A signed link on the public URL: GET downloads the bytes, PUT uploads them (pending files only). */
  link(fileId: string, method: 'GET' | 'PUT'): SignedLink;
}
