import type { Logger } from 'pino';
import type { LlmConfig, LlmPricePair } from '../config/index.js';
import type { Clock } from '../lib/clock.js';
import { parseUsdToMicros } from '../lib/money.js';
import { runChatCompletion } from './chat.js';
import { PriceCatalog, type PriceOverride } from './pricing.js';
import { LlmRouter, TIER_IDS, type TiersConfig } from './router.js';
import { createLlmService } from './service.js';
import { LlmUpstream } from './upstream.js';

/** Configured USD per million tokens → integer micro-USD per million tokens (exact: at most 6 decimals). */
function perM(p: LlmPricePair): PriceOverride {
  return {
    promptPerM: parseUsdToMicros(p.promptUsdPerM),
    completionPerM: parseUsdToMicros(p.completionUsdPerM),
  };
}

/** The model router's upstream side: client, price list, tiers, and the internal LlmService built on them. */
export function createModelRouter(
  config: LlmConfig & { apiKey: string },
  o: {
    clock: Clock;
    log: Logger;
    /** Wraps the upstream client (the composition root measures it as vendor `llm`). */
    wrapUpstream?: (upstream: LlmUpstream) => LlmUpstream;
  },
) {
  const client = new LlmUpstream({
    baseUrl: config.baseUrl,
    apiKey: config.apiKey,
    log: o.log,
    connections: config.connections,
  });
  const upstream = o.wrapUpstream ? o.wrapUpstream(client) : client;
  const catalog = new PriceCatalog({
    listModels: (signal) => upstream.listModels(signal),
    overrides: Object.fromEntries(Object.entries(config.priceOverrides).map(([slug, p]) => [slug, perM(p)])),
    refreshMs: config.pricesRefreshMs,
    clock: o.clock,
    log: o.log,
  });
  const tiers = Object.fromEntries(
    TIER_IDS.map((id) => [id, { models: config.tiers[id].models, ceiling: perM(config.tiers[id].ceiling) }]),
  ) as TiersConfig;
  const router = new LlmRouter(upstream, catalog, tiers);
  return {
    router,
    service: createLlmService(router, { timeoutMs: config.timeoutMs }),
    dailyCapMicros: parseUsdToMicros(config.dailyCapUsd),
    /** The metered path (./chat.ts), for the door: loaded with the router, only when one is configured. */
    run: runChatCompletion,
    /** Loads the price list in the background (requests wait for it) and refreshes it on an interval. */
    start(): void {
      catalog.refresh().catch(() => undefined);
      catalog.start();
    },
    async close(): Promise<void> {
      catalog.stop();
      await upstream.close();
    },
  };
}
