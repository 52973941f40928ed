import type { Availability } from '../../tools/availability.js';

// The doors' view of which actions this gateway can run now (tools/availability.ts decides, from the same
// prechecks a call runs). Listings leave the others out, or mark them when the operator asks
// (TOLLGATE_LIST_UNAVAILABLE=mark), so agents do not spend turns on guaranteed 503s.

export { type Availability, catalogAvailability as availability } from '../../tools/availability.js';

/** hide: unavailable actions are left out of listings; mark: listed with `available: false` and the reason. */
export type UnavailableListing = 'hide' | 'mark';

/** A stable key of the current availability, to reuse listings built for the same state. */
export function availabilityKey(map: ReadonlyMap<string, Availability>): string {
  let key = '';
  for (const [id, a] of map) if (!a.available || a.reason) key += `${id}:${a.available ? 1 : 0};`;
  return key;
}

/** The one listing rule: an action is listed when it can run here, or when the operator asks to mark the others. */
export function listed(
  id: string,
  avail: ReadonlyMap<string, Availability>,
  mode: UnavailableListing,
): boolean {
  return mode === 'mark' || avail.get(id)?.available !== false;
}
