import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// Memory given back when the gateway has nothing to do. V8's memory reducer is meant to collect once a process
// goes idle, but it judges idleness by heuristics that a gateway's housekeeping timers and a busy machine defeat:
// the same idle gateway settled at 87 MiB in one run and stayed at 120 MiB in the next (issue 19: idle RSS). So
// the gateway decides itself: once no call has started for one whole interval after some did (or since start-up),
// it runs one full collection, which returns start-up's and the last burst's garbage to the system. One collection
// of a ~30 MiB heap costs tens of milliseconds, once per quiet spell, never while calls run.

let collect: (() => void) | undefined;

/** A full collection. `--expose-gc` set at run time and `gc` read from a new context: the pattern V8 documents. */
export function fullCollection(): void {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  }
  collect();
}

/**
 * Collects once per quiet spell: `activity` is a counter that moves whenever a call starts; a spell is an
 * `intervalMs` in which it did not move, after one in which it did (start-up counts as activity).
 */
export function startIdleTrim(
  activity: () => number,
  intervalMs = 5_000,
  collectNow: () => void = fullCollection,
): { stop(): void } {
  let seen = Number.NaN;
  let trimmed = Number.NaN;
  const timer = setInterval(() => {
    const n = activity();
    if (n !== seen) {
      seen = n;
      return;
    }
    if (n === trimmed) return;
    trimmed = n;
    collectNow();
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
