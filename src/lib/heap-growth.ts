import { setFlagsFromString } from 'node:v8';

// How far V8 lets the old generation grow past what survived the last full collection before the next one
// (TOLLGATE_HEAP_GROWTH_PERCENT; docs/decisions.md "Modules loaded when used, pools sized for the calls in
// flight"). V8's own rule, on a machine with gigabytes of memory, lets it grow to up to 4× the live set: with
// 1,000 calls in flight (~30 KB live each) the gateway then peaked at 360–430 MiB where 1.5× keeps it near
// 240 MiB, for a few percent more CPU in collections. The flag is read at each collection, so setting it once
// the process runs takes effect (V8 documents no stability promise for late flags; this one is a number read
// where the next limit is computed).

/** Applies the growth limit; 0 leaves V8's own rule. */
export function limitHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${Math.round(percent)}`);
}
