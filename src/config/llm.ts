import { z } from 'zod';
import { list } from './fields.js';
import type { Env, VendorConfig } from './index.js';

// The model router section of the configuration (TOLLGATE_LLM_*): tiers, ceilings, price overrides.

export type LlmTierId = 'platform/cheap' | 'platform/mid' | 'platform/best';
/** Decimal USD per million tokens, as configured (converted to integer micro-USD by src/llm). */
export interface LlmPricePair {
  promptUsdPerM: string;
  completionUsdPerM: string;
}

export interface LlmConfig {
  apiKey: string | undefined;
  baseUrl: string;
  dailyCapUsd: string;
  tiers: Record<LlmTierId, { models: string[]; ceiling: LlmPricePair }>;
  priceOverrides: Record<string, LlmPricePair>;
  pricesRefreshMs: number;
  firstByteTimeoutMs: number;
  timeoutMs: number;
  maxBodyBytes: number;
  /** Connections to the upstream (TOLLGATE_UPSTREAM_CONNECTIONS): one per stream in flight. */
  connections: number;
}

/**
 * Default tiers (OpenRouter slugs, mid-2026 market) with their ceilings in USD per million tokens,
 * prompt/completion. docs/spec.md §4.9's guidance per typical call: cheap well under 0.1 cent, mid 0.1-1 cent, best
 * 1-3 cents. A listed model whose price rises above its tier's ceiling drops out of the tier by itself.
 */
export const LLM_DEFAULT_TIERS: Record<LlmTierId, { models: string[]; ceiling: string }> = {
  'platform/cheap': {
    models: ['google/gemini-2.5-flash-lite', 'openai/gpt-5-nano', 'meta-llama/llama-3.3-70b-instruct'],
    ceiling: '0.30/1.20',
  },
  'platform/mid': {
    models: ['openai/gpt-5-mini', 'google/gemini-2.5-flash', 'anthropic/claude-haiku-4.5'],
    ceiling: '1.50/6.00',
  },
  'platform/best': {
    models: ['anthropic/claude-sonnet-4.6', 'openai/gpt-5', 'google/gemini-2.5-pro'],
    ceiling: '5.00/25.00',
  },
};

const PRICE_PAIR = /^(\d{1,6}(?:\.\d{1,6})?)\/(\d{1,6}(?:\.\d{1,6})?)$/;

export function parsePricePair(s: string): LlmPricePair | undefined {
  const m = PRICE_PAIR.exec(s.trim());
  return m ? { promptUsdPerM: m[1] as string, completionUsdPerM: m[2] as string } : undefined;
}

// Function declarations (hoisted): envSchema above uses them while the module initializes.
export function llmCeiling() {
  return z.string().transform((s, ctx) => {
    const p = parsePricePair(s);
    if (p) return p;
    ctx.issues.push({
      code: 'custom',
      input: s,
      message: 'a ceiling "prompt/completion" in USD per million tokens, e.g. 1.50/6',
    });
    return z.NEVER;
  });
}

export function llmOverrides() {
  return list.transform((entries, ctx) => {
    const out: Record<string, LlmPricePair> = {};
    for (const entry of entries) {
      const eq = entry.lastIndexOf('=');
      const slug = entry.slice(0, eq).trim();
      const pair = eq > 0 ? parsePricePair(entry.slice(eq + 1)) : undefined;
      if (!slug || !pair) {
        ctx.issues.push({
          code: 'custom',
          input: entries,
          message: `"${entry}": expected slug=prompt/completion in USD per million tokens, e.g. openai/gpt-5-mini=0.25/2`,
        });
        return z.NEVER;
      }
      out[slug] = pair;
    }
    return out;
  });
}

export function llmConfig(env: Env, upstream: VendorConfig): LlmConfig {
  const tier = (id: LlmTierId, models: string[] | undefined, ceiling: LlmPricePair | undefined) => ({
    models: models && models.length > 0 ? models : LLM_DEFAULT_TIERS[id].models,
    ceiling: ceiling ?? (parsePricePair(LLM_DEFAULT_TIERS[id].ceiling) as LlmPricePair),
  });
  return {
    apiKey: upstream.apiKey,
    baseUrl: upstream.baseUrl,
    dailyCapUsd: env.TOLLGATE_LLM_DAILY_CAP_USD,
    tiers: {
      'platform/cheap': tier(
        'platform/cheap',
        env.TOLLGATE_LLM_TIER_CHEAP,
        env.TOLLGATE_LLM_TIER_CHEAP_CEILING,
      ),
      'platform/mid': tier('platform/mid', env.TOLLGATE_LLM_TIER_MID, env.TOLLGATE_LLM_TIER_MID_CEILING),
      'platform/best': tier('platform/best', env.TOLLGATE_LLM_TIER_BEST, env.TOLLGATE_LLM_TIER_BEST_CEILING),
    },
    priceOverrides: env.TOLLGATE_LLM_PRICE_OVERRIDES ?? {},
    pricesRefreshMs: env.TOLLGATE_LLM_PRICES_REFRESH_SECONDS * 1000,
    firstByteTimeoutMs: env.TOLLGATE_LLM_FIRST_BYTE_TIMEOUT_MS,
    timeoutMs: env.TOLLGATE_LLM_TIMEOUT_SECONDS * 1000,
    maxBodyBytes: env.TOLLGATE_LLM_MAX_BODY_BYTES,
    connections: env.TOLLGATE_UPSTREAM_CONNECTIONS,
  };
}
