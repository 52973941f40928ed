import { formatUsd } from '../src/lib/money.js';
import { searchCatalog } from './catalog-search.js';
import { planCalls } from './consult-plan.js';
import { supersearch, supersearchPrecheck } from './supersearch.js';
import type { ServiceHandlers } from './types.js';

export const platformHandlers: ServiceHandlers<'platform'> = {
  'platform/consult': async (input) => {
    const calls = planCalls(input.intent);
    return { calls, total_price_cents: calls.reduce((s, c) => s + c.price_cents, 0) };
  },

  'platform/supersearch': {
    precheck: supersearchPrecheck,
    provider: (input, s) =>
      input.urls?.length
        ? 'builtin'
        : [s.vendors.firecrawl && 'firecrawl', s.vendors.fastcrw && 'fastcrw'].filter(Boolean).join('+'),
    run: supersearch,
  },

  'platform/discover': async (input) => ({
    results: searchCatalog(input.query, input.limit).map(({ action, score }) => ({
      id: action.id,
      tool_name: action.toolName,
      title: action.title,
      description: action.description,
      price_cents: action.priceCents,
      score: Math.round(score * 100) / 100,
    })),
  }),

  'platform/balance': async (_input, ctx) => {
    const b = await ctx.account.balance();
    return {
      balance_usd: formatUsd(b.balance_micros),
      available_usd: formatUsd(b.available_micros),
      ...b,
    };
  },

  'platform/transactions': async (input, ctx) => ({
    transactions: await ctx.account.transactions(input.limit),
  }),
};
