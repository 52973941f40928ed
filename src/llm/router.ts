import { GatewayError } from '../errors.js';
import type { PriceCatalog } from './pricing.js';
import type { ModelRoute, ModelRouter, PricedModel } from './types.js';
import type { LlmUpstream } from './upstream.js';

// Resolves what a caller asked for (an exact upstream slug, or a tier alias) into priced models to try in
// order. A tier is an ordered fallback list with a price ceiling: a model above the ceiling, unpriced, unknown
// to the upstream or generating media is left out, so a fallback can never land on it.

export const TIER_IDS = ['platform/cheap', 'platform/mid', 'platform/best'] as const;
export type TierId = (typeof TIER_IDS)[number];

export interface TierConfig {
  models: string[];
  /** micro-USD per million tokens; both prices of a model must be at or below these. */
  ceiling: { promptPerM: number; completionPerM: number };
}
export type TiersConfig = Record<TierId, TierConfig>;

export type Exclusion = 'unknown_model' | 'no_price' | 'above_ceiling' | 'generates_media';

export interface TierView {
  id: TierId;
  ceiling: TierConfig['ceiling'];
  eligible: PricedModel[];
  excluded: Array<{ id: string; reason: Exclusion }>;
}

export function isTier(model: string): model is TierId {
  return (TIER_IDS as readonly string[]).includes(model);
}

export function tierView(id: TierId, tier: TierConfig, catalog: PriceCatalog): TierView {
  const view: TierView = { id, ceiling: tier.ceiling, eligible: [], excluded: [] };
  for (const slug of tier.models) {
    const m = catalog.lookup(slug);
    let reason: Exclusion | undefined;
    if (!m) reason = 'unknown_model';
    else if (m.generatesMedia) reason = 'generates_media';
    else if (!m.price) reason = 'no_price';
    else if (
      m.price.promptPerM > tier.ceiling.promptPerM ||
      m.price.completionPerM > tier.ceiling.completionPerM
    ) {
      reason = 'above_ceiling';
    }
    if (reason || !m?.price) view.excluded.push({ id: slug, reason: reason ?? 'no_price' });
    else view.eligible.push({ id: slug, price: m.price, overridden: m.source === 'override' });
  }
  return view;
}

export class LlmRouter implements ModelRouter {
  constructor(
    private readonly upstream: LlmUpstream,
    readonly catalog: PriceCatalog,
    readonly tiers: TiersConfig,
  ) {}

  async resolve(model: string, _signal: AbortSignal): Promise<ModelRoute> {
    let loadError: GatewayError | undefined;
    try {
      await this.catalog.ensureLoaded();
    } catch (e) {
      // Overridden models stay servable while the listing is down; anything else waits for it.
      loadError = e as GatewayError;
    }
    if (isTier(model)) {
      const view = tierView(model, this.tiers[model], this.catalog);
      if (view.eligible.length > 0) return { requested: model, tier: model, candidates: view.eligible };
      throw (
        loadError ??
        new GatewayError(
          'upstream_unavailable',
          `No model of ${model} is available within its price ceiling right now; GET /api/llm/v1/pricing shows the tiers. Nothing was charged.`,
          { retryAfterSeconds: 60 },
        )
      );
    }
    if (model.startsWith('platform/')) {
      throw new GatewayError(
        'not_found',
        `Unknown tier "${model.slice(0, 64)}": the tiers are ${TIER_IDS.join(', ')}.`,
      );
    }
    const m = this.catalog.lookup(model);
    if (!m && loadError) throw loadError;
    if (!m) {
      throw new GatewayError(
        'not_found',
        `Unknown model "${model.slice(0, 128)}": use an exact slug from GET /api/llm/v1/models, or a tier (${TIER_IDS.join(', ')}).`,
      );
    }
    if (m.generatesMedia) {
      throw new GatewayError(
        'invalid_input',
        `"${m.id}" generates images, audio or video, which the model router does not serve; it answers with text.`,
        { details: { issues: [{ path: 'model', message: 'media generation model' }] } },
      );
    }
    if (!m.price) {
      throw new GatewayError(
        'not_found',
        `"${m.id}" has no known price, so it is not served (never billed at a guess). GET /api/llm/v1/pricing lists the priced models.`,
      );
    }
    return {
      requested: model,
      tier: undefined,
      candidates: [{ id: m.id, price: m.price, overridden: m.source === 'override' }],
    };
  }

  complete: ModelRouter['complete'] = (model, body, opts) => this.upstream.complete(model, body, opts);
  stream: ModelRouter['stream'] = (model, body, opts) => this.upstream.stream(model, body, opts);
}
