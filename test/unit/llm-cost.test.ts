import { describe, expect, it } from 'vitest';
import {
  decimalToUnits,
  type ModelPrice,
  millionthsToDecimal,
  readUsage,
  reportedCostToMicros,
  tokensCostMicros,
  usageCostMicros,
  usdPerTokenToPerM,
  usdToMicrosCeil,
  worstCaseMicros,
} from '../../src/llm/cost.js';

// Per-token money: decimal text in, integers out, one documented rounding rule (docs/decisions.md).

const price = (o: Partial<ModelPrice> = {}): ModelPrice => ({
  promptPerM: 3_000_000,
  completionPerM: 15_000_000,
  requestMicros: 0,
  imageMicros: 0,
  ...o,
});

describe('[llm:capture-actual] upstream USD decimals to integers', () => {
  it('reads listing prices (USD per token strings) as micro-USD per million tokens, exactly', () => {
    expect(usdPerTokenToPerM('0.000003')).toBe(3_000_000);
    expect(usdPerTokenToPerM('0.0000000375')).toBe(37_500);
    expect(usdPerTokenToPerM('3e-6')).toBe(3_000_000);
    expect(usdPerTokenToPerM(' 0.00000015 ')).toBe(150_000);
    expect(usdPerTokenToPerM('0')).toBe(0);
    expect(usdPerTokenToPerM(0.000001)).toBe(1_000_000);
  });

  it('rounds a price finer than a pico-USD per token up, never down', () => {
    expect(usdPerTokenToPerM('0.0000000000001')).toBe(1);
    expect(usdPerTokenToPerM('0.0000030000001')).toBe(3_000_001);
  });

  it('treats variable or malformed prices as unknown (never guessed)', () => {
    for (const bad of ['-1', '', 'abc', '1.2.3', '0x10', 'NaN', '.'])
      expect(usdPerTokenToPerM(bad)).toBeUndefined();
    expect(usdPerTokenToPerM(-0.5)).toBeUndefined();
    expect(usdPerTokenToPerM(Number.POSITIVE_INFINITY)).toBeUndefined();
  });

  it('reads fees as micro-USD rounded up', () => {
    expect(usdToMicrosCeil('0.001')).toBe(1000);
    expect(usdToMicrosCeil('0.0000001')).toBe(1);
  });

  it('reads usage.cost: float noise dropped at the pico-USD, then rounded up to the micro-USD once', () => {
    expect(reportedCostToMicros(0.1 + 0.2)).toBe(300_000);
    expect(reportedCostToMicros(0.0001234)).toBe(124);
    expect(reportedCostToMicros(1e-7)).toBe(1);
    expect(reportedCostToMicros(0.95)).toBe(950_000);
    expect(reportedCostToMicros(0)).toBe(0);
    expect(reportedCostToMicros('0.000002')).toBe(2);
  });

  it('decimalToUnits rounds half up in nearest mode and always up in ceil mode', () => {
    expect(decimalToUnits('0.25', 0, 'nearest')).toBe(0n);
    expect(decimalToUnits('0.5', 0, 'nearest')).toBe(1n);
    expect(decimalToUnits('0.25', 0, 'ceil')).toBe(1n);
    expect(decimalToUnits('12', 2, 'ceil')).toBe(1200n);
  });
});

describe('[llm:capture-actual] [llm:hold-worst-case] call costs', () => {
  it('tokens × price is exact and rounds up once per call', () => {
    // 1 prompt token at 3 USD/M = 3 micro-USD; 1 completion token at 15 USD/M = 15.
    expect(tokensCostMicros(price(), 1, 1)).toBe(18);
    // 1 token at 0.10 USD/M = 0.1 micro-USD → 1.
    expect(tokensCostMicros(price({ promptPerM: 100_000, completionPerM: 0 }), 1, 0)).toBe(1);
    // Large counts stay exact (BigInt): 10M tokens at 75 USD/M = 750 USD.
    expect(tokensCostMicros(price({ completionPerM: 75_000_000 }), 0, 10_000_000)).toBe(750_000_000);
  });

  it('adds the per-request fee and per-image fee', () => {
    expect(tokensCostMicros(price({ requestMicros: 1000, imageMicros: 500 }), 0, 0, 2)).toBe(2000);
  });

  it('the worst case holds prompt bytes, an allowance per image, and max_tokens', () => {
    expect(worstCaseMicros(price(), { bytes: 100, images: 0 }, 1000)).toBe(300 + 15_000);
    expect(worstCaseMicros(price({ imageMicros: 7 }), { bytes: 0, images: 1 }, 0)).toBe(2048 * 3 + 7);
  });

  it("the actual cost is the upstream's reported cost when given, else tokens × price", () => {
    expect(usageCostMicros(price(), { promptTokens: 10, completionTokens: 10, costMicros: 5 }, 0)).toEqual({
      micros: 5,
      source: 'upstream_cost',
    });
    expect(
      usageCostMicros(price(), { promptTokens: 10, completionTokens: 10, costMicros: undefined }, 0),
    ).toEqual({
      micros: 180,
      source: 'tokens_x_price',
    });
  });

  it('reads usage only when its token counts are sound', () => {
    expect(readUsage({ prompt_tokens: 3, completion_tokens: 4, cost: 0.00001 })).toEqual({
      promptTokens: 3,
      completionTokens: 4,
      costMicros: 10,
    });
    expect(readUsage({ prompt_tokens: 3 })).toBeUndefined();
    expect(readUsage({ prompt_tokens: -1, completion_tokens: 2 })).toBeUndefined();
    expect(readUsage({ prompt_tokens: 1.5, completion_tokens: 2 })).toBeUndefined();
    expect(readUsage({ prompt_tokens: 1, completion_tokens: 2, cost: 'x' })?.costMicros).toBeUndefined();
    expect(readUsage(null)).toBeUndefined();
  });

  it('prices render as exact decimal text', () => {
    expect(millionthsToDecimal(3_000_000)).toBe('3.00');
    expect(millionthsToDecimal(37_500)).toBe('0.0375');
    expect(millionthsToDecimal(100_000)).toBe('0.10');
    expect(millionthsToDecimal(1)).toBe('0.000001');
  });
});
