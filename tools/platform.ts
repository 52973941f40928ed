import type { Action } from '../catalog/index.js';
import { GatewayError } from '../src/errors.js';
import { formatUsd } from '../src/lib/money.js';
import { catalogAvailability } from './availability.js';
import { refineWithModel } from './consult-llm.js';
import { planCalls } from './consult-plan.js';
import type { Services } from './context.js';
import { rankGoal } from './discover.js';
import { supersearch, supersearchPrecheck } from './supersearch.js';
import type { ServiceHandlers } from './types.js';

/** Only what this gateway can run now is suggested or found (tools/availability.ts). */
function runnableOn(services: Services): (a: Action) => boolean {
  const avail = catalogAvailability(services);
  return (a) => avail.get(a.id)?.available !== false;
}

export const platformHandlers: ServiceHandlers<'platform'> = {
  'platform/consult': async (input, ctx) => {
    const runnable = runnableOn(ctx.services);
    const plan = planCalls(input.intent, runnable);
    if (plan.calls.length === 0) {
      // A plan it cannot stand behind is not sold: the call fails, uncharged, and says where to look instead.
      throw new GatewayError(
        'resource_not_found',
        'No action this gateway can run fits this goal. Try platform/discover (free) with a few keywords, or ' +
          'say what you want in other words. Nothing was charged.',
      );
    }
    return { ...(await refineWithModel(input.intent, plan, ctx, runnable)) };
  },

  'platform/supersearch': {
    precheck: supersearchPrecheck,
    provider: (input, s) =>
      input.urls?.length
        ? 'builtin'
        : [s.vendors.firecrawl && 'firecrawl', s.vendors.fastcrw && 'fastcrw'].filter(Boolean).join('+'),
    run: supersearch,
  },

  'platform/discover': async (input, ctx) => ({
    results: rankGoal(input.query, input.limit, runnableOn(ctx.services)).map(({ action, score }) => ({
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
