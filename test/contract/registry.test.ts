import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { actions, catalog } from '../../catalog/index.js';
import { inputJsonSchema, outputJsonSchema } from '../../catalog/json-schema.js';
import { handlers } from '../../tools/index.js';

// Registry-wide checks: every action, present and future, must satisfy these.

/** docs/spec.md §4.1 price list, in cents. Actions the spec prices are checked exactly. */
const SPEC_PRICES: Record<string, number> = {
  'mediastage/upload': 1,
  'videoasm/upload': 1,
  'videoasm/create_project': 1,
  'videoasm/put_composition': 1,
  'videoasm/validate': 1,
  'videoasm/render': 100,
  'platform/consult': 1,
  'platform/supersearch': 5,
  'files/upload': 1,
  'files/upload_from_url': 1,
  'propstats/properties': 30,
  'propstats/value-estimate': 35,
  'propstats/rent-estimate': 35,
  'propstats/sale-listings': 30,
  'propstats/rental-listings': 30,
  'propstats/market-stats': 30,
  'propdata/autocomplete': 1,
  'propdata/property-detail': 20,
  'propdata/avm': 25,
  'propdata/skiptrace': 25,
  'propdata/parcel': 20,
  'scraperA/scrape': 1,
  'scraperA/crawl': 1,
  'scraperA/map': 1,
  'scraperA/search': 1,
  'scraperA/extract': 1,
  'scraperB/scrape': 1,
  'scraperB/search': 1,
  'scraperB/map': 1,
  'scraperB/crawl': 10,
  'scraperB/crawl_status': 1,
  'scraperB/extract': 5,
  'scraperB/extract_status': 1,
  'scraperC/scrape': 1,
  'scraperC/scrape_residential': 4,
  'scraperC/markdown': 1,
};

/** docs/spec.md §4: the strict actions. Everything else in §4.2, §4.5–§4.7 allows additional properties. */
const SPEC_STRICT = new Set([
  'mediastage/upload',
  'platform/consult',
  'platform/supersearch',
  'files/upload',
  'files/upload_from_url',
  'scraperB/crawl_status',
  'scraperB/extract',
  'scraperB/extract_status',
  'scraperC/scrape',
  'scraperC/scrape_residential',
  'scraperC/markdown',
  'scraperC/extract',
]);

const SPEC_PASSTHROUGH_SERVICES = new Set(['videoasm', 'propstats', 'propdata', 'scraperA']);

type Schema = {
  properties?: Record<string, Schema>;
  items?: Schema | Schema[];
  anyOf?: Schema[];
  description?: string;
};

/** Every property at any depth must carry a description (agents read them). */
function undescribed(schema: Schema, path = ''): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(schema.properties ?? {})) {
    const p = path ? `${path}.${k}` : k;
    if (!v.description) out.push(p);
    out.push(...undescribed(v, p));
    for (const alt of v.anyOf ?? []) out.push(...undescribed(alt, p));
    const items = Array.isArray(v.items) ? v.items : v.items ? [v.items] : [];
    for (const it of items) out.push(...undescribed(it, `${p}[]`));
  }
  return out;
}

describe('[catalog:prices] [catalog:constraints] the registry', () => {
  it('has unique ids and MCP-safe tool names', () => {
    const ids = actions.map((a) => a.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const a of actions) {
      expect(a.id).toBe(`${a.service}/${a.action}`);
      expect(a.toolName, a.id).toMatch(/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/);
      expect(a.toolName).toBe(`${a.service}_${a.action}`);
    }
    expect(new Set(actions.map((a) => a.toolName)).size).toBe(actions.length);
  });

  it('[billing:price-known-before] prices are integer cents, matching the spec where it prices the action', () => {
    for (const a of actions) {
      expect(Number.isSafeInteger(a.priceCents) && a.priceCents >= 0, a.id).toBe(true);
      if (a.id in SPEC_PRICES) expect(a.priceCents, a.id).toBe(SPEC_PRICES[a.id]);
      expect(a.access === 'paid', a.id).toBe(a.priceCents > 0);
    }
  });

  it('every action the spec prices is in the catalog', () => {
    const missing = Object.keys(SPEC_PRICES).filter((id) => !(id in catalog));
    expect(missing).toEqual([]);
  });

  it('descriptions state the price and that failures are free', () => {
    for (const a of actions) {
      const price =
        a.priceCents === 0
          ? 'Free.'
          : `$${(a.priceCents / 100).toFixed(2)} per successful call; nothing is charged on failure.`;
      expect(a.description, a.id).toContain(price);
      expect(a.summary.length, a.id).toBeGreaterThan(40);
      expect(a.description.length, a.id).toBeLessThan(2048);
    }
  });

  it('every action has all four MCP annotations', () => {
    for (const a of actions) {
      for (const k of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
        expect(typeof a.annotations[k], `${a.id}.${k}`).toBe('boolean');
      }
    }
  });

  it('every input field is described, at every depth', () => {
    for (const a of actions) expect(undescribed(inputJsonSchema(a) as Schema), a.id).toEqual([]);
  });

  it('input and output schemas are objects, and outputs convert to JSON Schema', () => {
    for (const a of actions) {
      expect(inputJsonSchema(a).type, a.id).toBe('object');
      expect(outputJsonSchema(a).type, a.id).toBe('object');
    }
  });

  it('[http:strict-rejects-unknown] strict actions reject unknown fields; the others pass them through', () => {
    for (const a of actions) {
      const strict = SPEC_STRICT.has(a.id) || a.strict;
      if (SPEC_STRICT.has(a.id)) expect(a.strict, a.id).toBe(true);
      if (SPEC_PASSTHROUGH_SERVICES.has(a.service) && !SPEC_STRICT.has(a.id))
        expect(a.strict, a.id).toBe(false);
      const withExtra = a.input.safeParse({ ...(a.example as object), zz_extra_field: 1 });
      if (strict) {
        expect(withExtra.success, a.id).toBe(false);
      } else {
        expect(withExtra.success, a.id).toBe(true);
        expect((withExtra.data as Record<string, unknown>).zz_extra_field, a.id).toBe(1);
      }
    }
  });

  it('every example validates against its input schema', () => {
    for (const a of actions) {
      const r = a.input.safeParse(a.example);
      expect(r.success ? [] : r.error.issues, a.id).toEqual([]);
    }
  });

  it('every action has a handler (checked by type in tools/index.ts, and here at run time)', () => {
    for (const a of actions) {
      const h = (handlers as Record<string, unknown>)[a.id];
      expect(typeof h === 'function' || (typeof h === 'object' && h !== null && 'run' in h), a.id).toBe(true);
    }
    expect(Object.keys(handlers).sort()).toEqual(actions.map((a) => a.id).sort());
  });

  it('poll partners exist', () => {
    for (const a of actions) if (a.pollWith) expect(catalog, a.id).toHaveProperty([a.pollWith]);
  });

  it('outputs are zod objects (MCP structured content must be an object)', () => {
    for (const a of actions) expect(a.output instanceof z.ZodObject, a.id).toBe(true);
  });
});
