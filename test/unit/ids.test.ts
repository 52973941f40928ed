import { describe, expect, it } from 'vitest';
import { newId, randomToken } from '../../src/lib/ids.js';

describe('ids', () => {
  it('are prefixed, time-ordered and unique', () => {
    const a = newId('txn', 1_000);
    const b = newId('txn', 2_000);
    expect(a).toMatch(/^txn_[0-9a-z]{9}[0-9a-z]{16}$/);
    expect(a < b).toBe(true);
    const many = new Set(Array.from({ length: 20_000 }, () => newId('txn', 5)));
    expect(many.size).toBe(20_000); // across several refills of the 4 KiB pool
  });

  it('draw every base36 character equally often (no modulo bias)', () => {
    const counts = new Map<string, number>();
    const n = 360_000;
    for (const ch of randomToken(n)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(36);
    // Expected 10,000 each; a bias of 256 % 36 would put the first four characters ~12 % above the rest.
    for (const c of counts.values()) expect(Math.abs(c - 10_000)).toBeLessThan(600);
  });
});
