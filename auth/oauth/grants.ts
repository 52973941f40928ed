import { sha256Hex } from '../../src/lib/hash.js';
import type { SqliteDb } from '../../src/lib/sqlite.js';
import { OAuthStore } from './store.js';

// What an account has connected over OAuth, and revoking it: the operator's view of grants (`tollgate oauth`).
// A grant and every token issued under it share `grant_id`, and access tokens are looked up on every request,
// so deleting them cuts the host off at its next call.

export interface GrantView {
  grant_id: string;
  client_id: string;
  client_name: string | null;
  granted_at: string | null;
  daily_limit_micros: number | null;
}

export class OAuthGrants {
  private readonly list;
  private readonly client;
  private readonly drop;
  private readonly limit;

  constructor(db: SqliteDb) {
    new OAuthStore(db); // applies the OAuth schema if this database has not served OAuth yet
    this.list = db.prepare<[string], { grant_id: string; payload: string }>(
      "SELECT grant_id, payload FROM oauth_store WHERE model = 'Grant' AND json_extract(payload, '$.accountId') = ?",
    );
    this.client = db.prepare<[string], { payload: string }>(
      "SELECT payload FROM oauth_store WHERE model = 'Client' AND id_hash = ?",
    );
    this.drop = db.prepare('DELETE FROM oauth_store WHERE grant_id = ?');
    this.limit = db.prepare<[string, string], { daily_limit_micros: number | null }>(
      'SELECT daily_limit_micros FROM oauth_client_limits WHERE account_id = ? AND client_id = ?',
    );
  }

  of(accountId: string): GrantView[] {
    return this.list.all(accountId).map((row) => {
      const g = JSON.parse(row.payload) as { clientId: string; iat?: number };
      const client = this.client.get(sha256Hex(g.clientId));
      const name = client
        ? ((JSON.parse(client.payload) as { client_name?: string }).client_name ?? null)
        : null;
      return {
        grant_id: row.grant_id,
        client_id: g.clientId,
        client_name: name,
        granted_at: g.iat ? new Date(g.iat * 1000).toISOString() : null,
        daily_limit_micros: this.limit.get(accountId, g.clientId)?.daily_limit_micros ?? null,
      };
    });
  }

  /** Revokes every grant (and token) of `clientId` for the account; returns how many grants went. */
  revoke(accountId: string, clientId: string): number {
    const grants = this.of(accountId).filter((g) => g.client_id === clientId);
    for (const g of grants) this.drop.run(g.grant_id);
    return grants.length;
  }
}
