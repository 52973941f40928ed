import { actions } from '../../catalog/index.js';
import { type Availability, listed, type UnavailableListing } from './availability.js';

// The price list by the one listing rule (docs/decisions.md "One listing rule"): `tollgate catalog` prints it and
// the landing page shows it, as GET /api/run lists it.

/** Each listed action with its price and, when it cannot run here (mark), why. */
export function priceList(avail: ReadonlyMap<string, Availability>, mode: UnavailableListing) {
  return actions
    .filter((a) => listed(a.id, avail, mode))
    .map((a) => {
      const state = avail.get(a.id);
      return {
        id: a.id,
        title: a.title,
        price_cents: a.priceCents,
        access: a.access,
        strict: a.strict,
        available: state?.available ?? true,
        ...(state?.reason ? { availability_note: state.reason } : {}),
      };
    });
}
