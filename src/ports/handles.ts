// Server-minted handles (crawl ids, render ids, …) bound to the account that started the work (implemented in
// src/storage/handles.ts).

export interface HandleRecord {
  handle: string;
  owner: string;
  kind: string;
  ref: string;
  data: Record<string, unknown>;
  created_at: number;
}

export interface HandleStore {
  /** Mints a new handle for `owner` pointing at an upstream (or local) reference. */
  mint(owner: string, kind: string, ref: string, data?: Record<string, unknown>): Promise<string>;
  /** The handle's record if it exists *and belongs to owner*; another account's handle is not found. */
  resolve(owner: string, kind: string, handle: string): Promise<HandleRecord | undefined>;
  update(handle: string, data: Record<string, unknown>): Promise<void>;
  /** The newest handle of `owner` and `kind` pointing at `ref` (e.g. a validated composition's fingerprint). */
  findByRef(owner: string, kind: string, ref: string): Promise<HandleRecord | undefined>;
  /** The handle's record whoever owns it: for bearer polls of accountless (x402) callers and refund routing. */
  lookup(handle: string): Promise<HandleRecord | undefined>;
}
