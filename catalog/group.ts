import type { Action } from './define.js';

/** Builds a service's id → action record with literal keys, so handler tables can be checked by type. */
export function group<const T extends readonly Action[]>(...actions: T): { [K in T[number] as K['id']]: K } {
  const out: Record<string, Action> = {};
  for (const a of actions) {
    if (out[a.id]) throw new Error(`duplicate action id ${a.id}`);
    out[a.id] = a;
  }
  return out as { [K in T[number] as K['id']]: K };
}
