import { afterEach, describe, expect, it, vi } from 'vitest';
import { fullCollection, startIdleTrim } from '../../src/lib/idle-trim.js';

describe('idle trim', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('collects once per quiet spell, never while calls keep starting', () => {
    vi.useFakeTimers();
    let calls = 0;
    const collect = vi.fn();
    const trim = startIdleTrim(() => calls, 1_000, collect);
    vi.advanceTimersByTime(1_000); // start-up counts as activity: the first interval only looks
    expect(collect).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1_000); // a whole quiet interval: one collection
    expect(collect).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(5_000); // still quiet: nothing more to give back
    expect(collect).toHaveBeenCalledTimes(1);
    for (let i = 0; i < 5; i++) {
      calls += 3; // busy: a call started in every interval
      vi.advanceTimersByTime(1_000);
    }
    expect(collect).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1_000); // quiet again after the burst
    expect(collect).toHaveBeenCalledTimes(2);
    trim.stop();
    vi.advanceTimersByTime(10_000);
    expect(collect).toHaveBeenCalledTimes(2);
  });

  it('the real collection collects (gc is exposed at run time, not by a command-line flag)', async () => {
    let target: object | undefined = { big: new Array(1_000).fill(1) };
    const ref = new WeakRef(target);
    target = undefined;
    await new Promise((r) => setTimeout(r, 0)); // WeakRef targets live until the end of the current job
    fullCollection();
    expect(ref.deref()).toBeUndefined();
  });
});
