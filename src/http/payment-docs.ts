import { actions, findAction } from '../../catalog/index.js';
import type { X402Config } from '../config.js';
import { type PaymentTerms, paymentTerms } from '../run/x402/terms.js';
import { catalogListing, type Descriptor, descriptorOf, openApiDocument } from './catalog-docs.js';

// The catalog's free descriptions with each paid action's payment terms added (src/run/x402/terms.ts): the
// descriptor and the listing get a `payment` object; /openapi.json gets `x-payment-info` per paid operation and
// the x402 security scheme beside the API key. Built once per gateway (the terms depend on its configuration),
// on top of the catalog views of ./catalog-docs.ts.

export interface PaymentDocs {
  descriptor(id: string): (Descriptor & { payment?: PaymentTerms }) | undefined;
  listing(): unknown;
  openapi(): unknown;
}

export function paymentDocs(x402: X402Config | undefined, publicUrl: () => string): PaymentDocs {
  const terms: Terms = new Map(actions.map((a) => [a.id as string, paymentTerms(x402, a)]));
  const described = new Map<string, Descriptor & { payment?: PaymentTerms }>();
  let listing: unknown;
  let openapi: unknown;
  return {
    descriptor(id) {
      let d = described.get(id);
      if (!d) {
        const base = descriptorOf(id);
        if (!base) return undefined;
        const t = terms.get(id);
        d = t ? { ...base, payment: t } : base;
        described.set(id, d);
      }
      return d;
    },
    listing() {
      listing ??= withListingTerms(catalogListing(), terms);
      return listing;
    },
    openapi() {
      openapi ??= withOpenApiTerms(openApiDocument(publicUrl()), terms, publicUrl(), x402 !== undefined);
      return openapi;
    },
  };
}

type Terms = Map<string, PaymentTerms | undefined>;

function withListingTerms(listing: unknown, terms: Terms): unknown {
  const l = listing as { actions: Array<{ id: string }> };
  return {
    ...l,
    actions: l.actions.map((a) => {
      const t = terms.get(a.id);
      return t ? { ...a, payment: t } : a;
    }),
  };
}

/**
 * OpenAPI: `x-payment-info` per paid operation (the shape x402 discovery crawlers read: a fixed price mode, the
 * price, and the protocols with their terms), and `PAYMENT-SIGNATURE` as a security scheme that may be used
 * instead of the API key.
 */
function withOpenApiTerms(doc: unknown, terms: Terms, publicUrl: string, x402: boolean): unknown {
  const d = structuredClone(doc) as {
    servers: unknown;
    paths: Record<string, { post?: Record<string, unknown> }>;
    components: { securitySchemes: Record<string, unknown> };
  };
  d.servers = [{ url: publicUrl }];
  if (x402) {
    d.components.securitySchemes.x402 = {
      type: 'apiKey',
      in: 'header',
      name: 'PAYMENT-SIGNATURE',
      description:
        'x402 v2 payment (base64 JSON PaymentPayload), no account needed: call without it to get the 402 ' +
        'challenge (PAYMENT-REQUIRED header, same JSON in the body), sign it, and retry with it.',
    };
  }
  for (const [path, item] of Object.entries(d.paths)) {
    const action = findAction(path.replace(/^\/api\/run\//, ''));
    const t = action && terms.get(action.id);
    if (!t || !item.post) continue;
    item.post['x-payment-info'] = {
      pricingMode: t.price_mode,
      price: (t.price_cents / 100).toFixed(2),
      currency: t.currency,
      protocols: t.protocols.map(({ protocol, ...rest }) => ({ [protocol]: rest })),
    };
    if (x402) item.post.security = [{ apiKey: [] }, { x402: [] }];
  }
  return d;
}
