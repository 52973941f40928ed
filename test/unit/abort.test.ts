import { describe, expect, it } from 'vitest';
import { untilAborted } from '../../src/lib/abort.js';

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
