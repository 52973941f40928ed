import { describe, expect, it } from 'vitest';
import { ConfigError, LLM_DEFAULT_TIERS, loadConfig } from '../../src/config/index.js';

// The model router's TOLLGATE_LLM_* variables: defaults from the spec, prices as exact decimal text.

const load = (env: Record<string, string> = {}) => loadConfig({ TOLLGATE_DATA_DIR: '/tmp/x', ...env }).llm;

function problems(env: Record<string, string>): string[] {
  try {
    load(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('[llm:daily-cap-429] [llm:fallback-within-ceiling] model router configuration', () => {
  it('defaults: 10 USD daily cap, the built-in tiers and ceilings, OpenRouter, no key', () => {
    const c = load();
    expect(c).toMatchObject({
      apiKey: undefined,
      baseUrl: 'https://openrouter.ai/api/v1',
      dailyCapUsd: '10',
      priceOverrides: {},
      firstByteTimeoutMs: 30_000,
      timeoutMs: 600_000,
    });
    expect(c.tiers['platform/mid']).toEqual({
      models: LLM_DEFAULT_TIERS['platform/mid'].models,
      ceiling: { promptUsdPerM: '1.50', completionUsdPerM: '6.00' },
    });
  });

  it('[llm:price-override] reads tiers, ceilings and overrides', () => {
    const c = load({
      TOLLGATE_LLM_TIER_CHEAP: 'a/x, b/y',
      TOLLGATE_LLM_TIER_CHEAP_CEILING: '0.1/0.25',
      TOLLGATE_LLM_PRICE_OVERRIDES: 'a/x=0.05/0.2, vendor/model:free=0/0',
      TOLLGATE_LLM_DAILY_CAP_USD: '2.5',
    });
    expect(c.tiers['platform/cheap']).toEqual({
      models: ['a/x', 'b/y'],
      ceiling: { promptUsdPerM: '0.1', completionUsdPerM: '0.25' },
    });
    expect(c.priceOverrides).toEqual({
      'a/x': { promptUsdPerM: '0.05', completionUsdPerM: '0.2' },
      'vendor/model:free': { promptUsdPerM: '0', completionUsdPerM: '0' },
    });
    expect(c.dailyCapUsd).toBe('2.5');
  });

  it('refuses malformed prices and a zero cap, naming the variable', () => {
    expect(problems({ TOLLGATE_LLM_TIER_BEST_CEILING: '5' }).join()).toMatch(
      /TOLLGATE_LLM_TIER_BEST_CEILING/,
    );
    expect(problems({ TOLLGATE_LLM_PRICE_OVERRIDES: 'a/x=1' }).join()).toMatch(
      /TOLLGATE_LLM_PRICE_OVERRIDES/,
    );
    expect(problems({ TOLLGATE_LLM_PRICE_OVERRIDES: 'a/x=-1/2' }).join()).toMatch(/expected slug=/);
    expect(problems({ TOLLGATE_LLM_DAILY_CAP_USD: '0' }).join()).toMatch(/TOLLGATE_LLM_DAILY_CAP_USD/);
    expect(problems({ TOLLGATE_LLM_FIRST_BYTE_TIMEOUT_MS: '5' }).join()).toMatch(/FIRST_BYTE/);
  });
});
