import { afterEach, describe, expect, it, vi } from 'vitest';
import { createStageRecorder } from '../../src/ops/timing.js';

// TOLLGATE_TIMING's recorder (docs/benchmarks.md "Where the time of a paid call goes"): per stage, the median,
// the mean, and the mean over the slowest 1 % of calls by total, so the table says what the p99 is made of.

afterEach(() => vi.restoreAllMocks());

describe('the stage recorder', () => {
  it('splits each call by stage; the slowest 1 % column shows the stage that made the tail', () => {
    let now = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    const rec = createStageRecorder();
    for (let i = 0; i < 200; i++) {
      rec.timer.start();
      now += 0.1;
      rec.timer.mark('auth');
      now += i === 7 || i === 150 ? 5 : 0.3; // two calls (1 %) wait 5 ms upstream
      rec.timer.mark('upstream');
      now += 0.2;
      rec.timer.finish('capture');
    }
    const r = rec.report();
    expect(r.calls).toBe(200);
    expect(r.rows.map((x) => x.stage)).toEqual(['auth', 'upstream', 'capture']);
    const by = Object.fromEntries(r.rows.map((x) => [x.stage, x]));
    expect(by.upstream?.wallP50).toBeCloseTo(0.3, 6);
    expect(by.upstream?.wallTail).toBeCloseTo(5, 6);
    expect(by.auth?.wallTail).toBeCloseTo(0.1, 6);
    expect(r.total.wallP50).toBeCloseTo(0.6, 6);
    expect(r.total.wallTail).toBeCloseTo(5.3, 6);
    expect(rec.table()).toContain('| upstream | 0.300 | 0.347 | 5.000 |');
  });

  it('leaves out a call that overlaps another, and an abandoned one', () => {
    const rec = createStageRecorder();
    rec.timer.start();
    rec.timer.start(); // a second call while the first is open: neither is recorded
    rec.timer.finish('x');
    rec.timer.start();
    rec.timer.abandon();
    rec.timer.finish('x');
    expect(rec.report()).toMatchObject({ calls: 0, overlapped: 1 });
  });
});
