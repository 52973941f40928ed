import { describe, expect, it } from 'vitest';
import { linkSignals, linkWithin, untilAborted } from '../../src/lib/abort.js';
import { deadline } from '../../src/lib/deadlines.js';

// untilAborted must never leave the work unobserved: a caller that left before its handler ran used to leave
// the handler's promise rejecting with nobody listening, and Node ends the process on an unhandled rejection
// (found by the soak: `npm run bench -- soak`, random client disconnects).

describe('[ops:soak-disconnects] untilAborted', () => {
  it('with a signal already aborted, the work rejecting later is not an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const ac = new AbortController();
      ac.abort(new DOMException('gone', 'AbortError'));
      let fail: (e: unknown) => void = () => undefined;
      const work = new Promise<string>((_, reject) => {
        fail = reject;
      });
      await expect(untilAborted(work, ac.signal)).rejects.toMatchObject({ name: 'AbortError' });
      fail(new Error('the fetch saw the abort too'));
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('aborted while running: rejects at once with the reason; the result otherwise', async () => {
    const ac = new AbortController();
    const pending = untilAborted(new Promise<string>(() => undefined), ac.signal);
    ac.abort(new Error('left'));
    await expect(pending).rejects.toThrow('left');
    await expect(untilAborted(Promise.resolve('done'), new AbortController().signal)).resolves.toBe('done');
  });
});

describe('deadlines and borrowed signals', () => {
  it('one timer serves many deadlines of one length, in order; cancelled ones never fire', async () => {
    const fired: number[] = [];
    // 100 ms against 5 ms: a loaded machine's stall between the two lines must not reorder them.
    const ds = Array.from({ length: 5 }, (_, i) => deadline(100, () => fired.push(i)));
    ds[2]?.cancel();
    ds[2]?.cancel(); // twice is harmless
    deadline(5, () => fired.push(99));
    await new Promise((r) => setTimeout(r, 200));
    expect(fired).toEqual([99, 0, 1, 3, 4]);
  });

  it('a link inside a call whose deadline comes first uses the call’s own signal', () => {
    const call = linkSignals([undefined], 1_000);
    const inner = linkWithin(call.signal, 30_000);
    expect(inner.signal).toBe(call.signal);
    expect(() => inner.abort()).toThrow(/borrowed/);
    inner.dispose();
    // A shorter inner deadline needs a link of its own.
    const short = linkWithin(call.signal, 10);
    expect(short.signal).not.toBe(call.signal);
    short.dispose();
    call.dispose();
  });

  it('a borrowed signal reports the call’s timeout', async () => {
    const call = linkSignals([undefined], 10);
    const inner = linkWithin(call.signal, 30_000);
    await new Promise((r) => setTimeout(r, 40));
    expect(inner.signal.aborted).toBe(true);
    expect(inner.timedOut).toBe(true);
    call.dispose();
  });
});
