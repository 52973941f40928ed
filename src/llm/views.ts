import { type ModelPrice, millionthsToDecimal } from './cost.js';
import type { PriceCatalog } from './pricing.js';
import { DEFAULT_MAX_TOKENS, MAX_TOKENS_CAP } from './request.js';
import { TIER_IDS, type TiersConfig, tierView } from './router.js';

// The free, public views of the model router: GET /pricing (tiers and per-model prices, USD per million tokens,
// as exact decimal strings) and GET /models (OpenAI's list format). Rendered once per price-list load.

interface PriceRow {
  id: string;
  prompt_usd_per_m: string;
  completion_usd_per_m: string;
  request_usd?: string;
  image_usd?: string;
}

function row(id: string, p: ModelPrice): PriceRow {
  const r: PriceRow = {
    id,
    prompt_usd_per_m: millionthsToDecimal(p.promptPerM),
    completion_usd_per_m: millionthsToDecimal(p.completionPerM),
  };
  if (p.requestMicros > 0) r.request_usd = millionthsToDecimal(p.requestMicros);
  if (p.imageMicros > 0) r.image_usd = millionthsToDecimal(p.imageMicros);
  return r;
}

function servable(catalog: PriceCatalog) {
  return catalog
    .all()
    .filter((m) => m.price !== undefined && !m.generatesMedia)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export function pricingView(catalog: PriceCatalog, tiers: TiersConfig, dailyCapMicros: number): unknown {
  const at = catalog.updatedAt;
  return {
    object: 'pricing',
    currency: 'USD',
    unit: 'USD per million tokens',
    updated_at: at === undefined ? null : new Date(at).toISOString(),
    daily_cap_usd: millionthsToDecimal(dailyCapMicros),
    max_tokens: { default: DEFAULT_MAX_TOKENS, cap: MAX_TOKENS_CAP },
    tiers: TIER_IDS.map((id) => {
      const v = tierView(id, tiers[id], catalog);
      return {
        id,
        ceiling: {
          prompt_usd_per_m: millionthsToDecimal(v.ceiling.promptPerM),
          completion_usd_per_m: millionthsToDecimal(v.ceiling.completionPerM),
        },
        models: v.eligible.map((m) => row(m.id, m.price)),
        excluded: v.excluded,
      };
    }),
    models: servable(catalog).map((m) => ({
      ...row(m.id, m.price as NonNullable<typeof m.price>),
      ...(m.source === 'override' ? { source: 'override' } : {}),
    })),
  };
}

export function modelsView(catalog: PriceCatalog): unknown {
  return {
    object: 'list',
    data: [
      ...TIER_IDS.map((id) => ({ id, object: 'model', created: 0, owned_by: 'tollgate' })),
      ...servable(catalog).map((m) => ({
        id: m.id,
        object: 'model',
        created: m.created ?? 0,
        owned_by: m.id.split('/')[0] ?? 'unknown',
      })),
    ],
  };
}

/** Memoizes a view per price-list load (the full listing is 300+ models). */
export function memoByLoad<T>(catalog: PriceCatalog, render: () => T): () => T {
  let at: number | undefined | null = null;
  let value: T | undefined;
  return () => {
    if (value === undefined || at !== catalog.updatedAt) {
      value = render();
      at = catalog.updatedAt;
    }
    return value;
  };
}
