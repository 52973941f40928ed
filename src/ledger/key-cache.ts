import type { Clock } from '../lib/clock.js';
import type { ApiKeyRow } from './types.js';

/**
 * API keys as the ledger last read them, for `ttlMs`: every paid call presents a key, and reading it from the
 * database each time was the largest part of authentication. The rule for revocation (docs/decisions.md "API
 * keys are cached"): immediate in the process that revokes (it forgets the key at once), and within `ttlMs`
 * everywhere else (other replicas, the CLI writing the SQLite file of a running gateway), because an entry is
 * read again once it is that old. Unknown keys are never cached, so a key created elsewhere works at once.
 */
export class KeyCache {
  private readonly byHash = new Map<string, { row: ApiKeyRow; until: number }>();
  private readonly hashOfId = new Map<string, string>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
    /** Bounds memory whatever the number of keys in use: the oldest entries go first. */
    private readonly maxEntries = 100_000,
  ) {}

  /** The cached row of a key's hash, or undefined to read it (and `remember` it). */
  get(hash: string): ApiKeyRow | undefined {
    const e = this.byHash.get(hash);
    if (!e) return undefined;
    if (e.until > this.clock.now()) return e.row;
    this.drop(hash, e.row.id);
    return undefined;
  }

  remember(hash: string, row: ApiKeyRow): void {
    if (this.ttlMs <= 0) return;
    if (this.byHash.size >= this.maxEntries) {
      const oldest = this.byHash.keys().next();
      if (!oldest.done) this.drop(oldest.value, this.byHash.get(oldest.value)?.row.id);
    }
    this.byHash.set(hash, { row, until: this.clock.now() + this.ttlMs });
    this.hashOfId.set(row.id, hash);
  }

  /** A key revoked (or changed) by this process: the next call reads it afresh. */
  forget(keyId: string): void {
    const hash = this.hashOfId.get(keyId);
    if (hash !== undefined) this.drop(hash, keyId);
  }

  private drop(hash: string, keyId: string | undefined): void {
    this.byHash.delete(hash);
    if (keyId !== undefined) this.hashOfId.delete(keyId);
  }
}
