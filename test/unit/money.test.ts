import { describe, expect, it } from 'vitest';
import {
  centsPhrase,
  centsToMicros,
  formatUsd,
  microsToCents,
  parseUsdToMicros,
} from '../../src/lib/money.js';

describe('money', () => {
  it('converts between cents and micro-USD exactly', () => {
    expect(centsToMicros(35)).toBe(350_000);
    expect(microsToCents(350_000)).toBe(35);
    expect(microsToCents(1)).toBe(1); // a sub-cent charge is never shown as 0
    expect(microsToCents(0)).toBe(0);
    expect(() => centsToMicros(1.5)).toThrow();
    expect(() => centsToMicros(-1)).toThrow();
  });

  it('parses USD strings without floats', () => {
    expect(parseUsdToMicros('2')).toBe(2_000_000);
    expect(parseUsdToMicros('0.35')).toBe(350_000);
    expect(parseUsdToMicros('10.000001')).toBe(10_000_001);
    expect(parseUsdToMicros('0.1')).toBe(100_000);
    for (const bad of ['-1', '1.2345678', 'abc', '1e3', '']) expect(() => parseUsdToMicros(bad)).toThrow();
  });

  it('formats', () => {
    expect(formatUsd(990_000)).toBe('$0.99');
    expect(formatUsd(1_234_567)).toBe('$1.234567');
    expect(formatUsd(-10_000)).toBe('-$0.01');
  });

  it('says "1 cent", not "1 cents"', () => {
    expect(centsPhrase(1)).toBe('1 cent');
    expect(centsPhrase(5)).toBe('5 cents');
    expect(centsPhrase(0)).toBe('0 cents');
  });
});
