import type { OAuthStore } from './store.js';

// What an account has connected over OAuth, and revoking it: the operator's view of grants (`tollgate oauth`)
// and the dashboard's. A grant and every token issued under it share `grant_id`, and access tokens are looked
// up on every request, so deleting them cuts the host off at its next call.

export interface GrantView {
  grant_id: string;
  client_id: string;
  client_name: string | null;
  granted_at: string | null;
  daily_limit_micros: number | null;
}

export class OAuthGrants {
  constructor(private readonly store: OAuthStore) {}

  async of(accountId: string): Promise<GrantView[]> {
    const grants = await this.store.grantsOf(accountId);
    return Promise.all(
      grants.map(async ({ grantId, payload }) => {
        const g = payload as { clientId: string; iat?: number };
        const client = await this.store.find('Client', g.clientId);
        return {
          grant_id: grantId,
          client_id: g.clientId,
          client_name: (client as { client_name?: string } | undefined)?.client_name ?? null,
          granted_at: g.iat ? new Date(g.iat * 1000).toISOString() : null,
          daily_limit_micros: (await this.store.dailyLimit(accountId, g.clientId)) ?? null,
        };
      }),
    );
  }

  /** Revokes every grant (and token) of `clientId` for the account; returns how many grants went. */
  async revoke(accountId: string, clientId: string): Promise<number> {
    const grants = (await this.of(accountId)).filter((g) => g.client_id === clientId);
    for (const g of grants) await this.store.dropGrant(g.grant_id);
    return grants.length;
  }
}
