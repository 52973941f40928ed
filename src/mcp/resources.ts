import {
  ProtocolError,
  ProtocolErrorCode,
  type ReadResourceResult,
  type Resource,
  ResourceNotFoundError,
} from '@modelcontextprotocol/server';
import type { Principal } from '../../auth/principal.js';
import { actions } from '../../catalog/index.js';
import { execute, type RunDeps } from '../run/execute.js';

// Two read-only resources: the price list (the same for everyone, built once) and the caller's own account.
// The account view goes through `execute` (platform/balance and platform/transactions), so the door never
// reads the ledger itself.

export const CATALOG_URI = 'tollgate://catalog';
export const ACCOUNT_URI = 'tollgate://account';
const RECENT_TRANSACTIONS = 20;

export const RESOURCES: readonly Resource[] = [
  {
    uri: CATALOG_URI,
    name: 'catalog',
    title: 'Price list',
    description: 'Every tool with its price in cents (USD), charged only when a call succeeds.',
    mimeType: 'application/json',
  },
  {
    uri: ACCOUNT_URI,
    name: 'account',
    title: 'My account',
    description: `Your balance and your ${RECENT_TRANSACTIONS} most recent calls with what each was charged.`,
    mimeType: 'application/json',
  },
];

const CATALOG_TEXT = JSON.stringify({
  currency: 'USD',
  note: 'Prices are per successful call; a failed call is not charged.',
  count: actions.length,
  tools: actions.map((a) => ({
    tool: a.toolName,
    id: a.id,
    title: a.title,
    price_cents: a.priceCents,
    price_usd: (a.priceCents / 100).toFixed(2),
    access: a.access,
    poll_with: a.pollWith ?? null,
  })),
});

export async function readResource(
  run: RunDeps,
  uri: string,
  principal: Principal,
  signal: AbortSignal,
): Promise<ReadResourceResult> {
  if (uri === CATALOG_URI) {
    return { contents: [{ uri, mimeType: 'application/json', text: CATALOG_TEXT }] };
  }
  if (uri === ACCOUNT_URI) {
    const [balance, recent] = await Promise.all([
      execute(run, 'platform/balance', {}, principal, { signal }),
      execute(run, 'platform/transactions', { limit: RECENT_TRANSACTIONS }, principal, { signal }),
    ]);
    // Resource reads have no isError form; our message travels as the JSON-RPC error.
    if (!balance.ok) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, balance.error.message);
    if (!recent.ok) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, recent.error.message);
    const body = {
      account_id: principal.kind === 'anonymous' ? null : principal.accountId,
      ...(balance.data as Record<string, unknown>),
      ...(recent.data as Record<string, unknown>),
    };
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(body) }] };
  }
  throw new ResourceNotFoundError(uri, `Unknown resource "${uri}". resources/list lists them.`);
}
