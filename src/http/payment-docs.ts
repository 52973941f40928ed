import { actions, findAction } from '../../catalog/index.js';
import { type Availability, availabilityKey, listed, type UnavailableListing } from '../run/availability.js';
import { type PaymentTerms, paymentTerms, type Rails } from '../run/rails.js';
import { openApiDocument } from './catalog-docs.js';

// The catalog's free descriptions with each paid action's payment terms added (src/run/rails.ts): the
// descriptor and the listing get a `payment` object; /openapi.json gets `x-payment-info` per paid operation and
// the x402 security scheme beside the API key. One per gateway (the terms depend on its configuration), on top
// of the catalog views of ./catalog-docs.ts, which it leaves as they are.

export interface PaymentDocs {
  /** A descriptor (./catalog-docs.ts `descriptorOf`) with its action's payment terms. */
  descriptor<D extends { id: string }>(d: D): D & { payment?: PaymentTerms };
  /** A listing (./catalog-docs.ts `catalogListing`, built per availability state) with each entry's terms. */
  listing(base: unknown): unknown;
  /** /openapi.json of the actions listed by the one listing rule (hidden or marked when unavailable). */
  openapi(avail: ReadonlyMap<string, Availability>, mode: UnavailableListing): unknown;
}

export function paymentDocs(rails: Rails | undefined, publicUrl: () => string): PaymentDocs {
  const terms: Terms = new Map(actions.map((a) => [a.id as string, paymentTerms(rails, a)]));
  const withTerms = <D extends { id: string }>(d: D): D & { payment?: PaymentTerms } => {
    const t = terms.get(d.id);
    return t ? { ...d, payment: t } : d;
  };
  // The catalog's listings are memoized per availability state: the terms are added once per listing object.
  const listings = new WeakMap<object, unknown>();
  let openapi: unknown;
  const byAvailability = new Map<string, unknown>();
  return {
    descriptor: withTerms,
    listing(base) {
      let l = listings.get(base as object);
      if (!l) {
        const b = base as { actions: Array<{ id: string }> };
        l = { ...b, actions: b.actions.map(withTerms) };
        listings.set(base as object, l);
      }
      return l;
    },
    openapi(avail, mode) {
      openapi ??= withOpenApiTerms(openApiDocument(publicUrl()), terms, publicUrl(), rails);
      const key = `${mode}|${availabilityKey(avail)}`;
      let doc = byAvailability.get(key);
      if (!doc) {
        doc = withAvailability(openapi, avail, mode);
        if (byAvailability.size > 64) byAvailability.clear();
        byAvailability.set(key, doc);
      }
      return doc;
    },
  };
}

type Terms = Map<string, PaymentTerms | undefined>;

/**
 * OpenAPI: `x-payment-info` per paid operation (the shape x402 discovery crawlers read: a fixed price mode, the
 * price, and the protocols with their terms), and each rail's security scheme (x402's PAYMENT-SIGNATURE, MPP's
 * Payment) as one that may be used instead of the API key.
 */
function withOpenApiTerms(doc: unknown, terms: Terms, publicUrl: string, rails: Rails | undefined): unknown {
  const d = structuredClone(doc) as {
    servers: unknown;
    paths: Record<string, { post?: Record<string, unknown> }>;
    components: { securitySchemes: Record<string, unknown> };
  };
  d.servers = [{ url: publicUrl }];
  const secured = rails?.list.filter((r) => r.security) ?? [];
  for (const r of secured) if (r.security) d.components.securitySchemes[r.security.name] = r.security.scheme;
  for (const [path, item] of Object.entries(d.paths)) {
    const action = findAction(path.replace(/^\/api\/run\//, ''));
    const t = action && terms.get(action.id);
    if (!action || !t || !item.post) continue;
    item.post['x-payment-info'] = {
      pricingMode: t.price_mode,
      price: (t.price_cents / 100).toFixed(2),
      currency: t.currency,
      protocols: t.protocols.map(({ protocol, ...rest }) => ({ [protocol]: rest })),
    };
    const paying = secured
      .filter((r) => r.terms(action).length > 0)
      .map((r) => ({ [r.security?.name ?? '']: [] }));
    if (paying.length > 0) item.post.security = [{ apiKey: [] }, ...paying];
  }
  return d;
}

/**
 * The one listing rule on /openapi.json: an action this gateway cannot run is left out (hide), or kept with
 * `x-available: false` and the reason (mark), as in GET /api/run and tools/list.
 */
function withAvailability(
  doc: unknown,
  avail: ReadonlyMap<string, Availability>,
  mode: UnavailableListing,
): unknown {
  const d = doc as { paths: Record<string, { post?: Record<string, unknown> }> };
  const paths: Record<string, unknown> = {};
  for (const [path, item] of Object.entries(d.paths)) {
    const action = findAction(path.replace(/^\/api\/run\//, ''));
    const state = action && avail.get(action.id);
    if (!action || !state || state.available) {
      paths[path] = item;
      continue;
    }
    if (!listed(action.id, avail, mode)) continue;
    paths[path] = {
      ...item,
      post: {
        ...item.post,
        description: `Unavailable on this gateway: ${state.reason ?? 'not configured'}. ${String(item.post?.description ?? '')}`,
        'x-available': false,
        'x-availability-note': state.reason ?? 'not configured',
      },
    };
  }
  return { ...d, paths };
}
