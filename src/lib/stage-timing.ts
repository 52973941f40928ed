// TOLLGATE_TIMING (docs/benchmarks.md "Where the time of a paid call goes"): marks at the stages of a call, so
// that the time of the bench's sequential paid calls can be split by stage. Off by default: then `stages()` is
// undefined and each mark costs one test. The doors start and finish a call, the execution path's trace steps
// and the web fetcher mark what lies between (src/ops/timing.ts records them). Calls are timed one at a time:
// the figures are meant for calls sent one after another, as the bench sends them.

export interface StageTimer {
  /** A call arrived at a door: its first stage starts now. */
  start(): void;
  /** The time since the previous mark (or the start) was spent in `stage`. */
  mark(stage: string): void;
  /** The response is written: the time since the previous mark was `stage`, and the call is recorded. */
  finish(stage: string): void;
  /** The call left the timed path (another route serves it): it is not recorded. */
  abandon(): void;
}

let current: StageTimer | undefined;

/** The stage timer, when TOLLGATE_TIMING is on. */
export function stages(): StageTimer | undefined {
  return current;
}

/** Set by the composition root when TOLLGATE_TIMING is on (and by tests). */
export function setStageTimer(timer: StageTimer | undefined): void {
  current = timer;
}
