import { existsSync } from 'node:fs';
import { actions } from '../../catalog/index.js';
import { catalogAvailability } from '../../tools/availability.js';
import type { Config } from '../config/index.js';
import { webRoutes } from '../engine/setup.js';
import type { Services } from '../ports/index.js';
import type { Availability } from '../run/availability.js';
import { priceList } from '../run/price-list.js';
import { type Out, table } from './output.js';

// `tollgate catalog`: the price list of this gateway, by the same rule as every other listing (GET /api/run,
// tools/list, /openapi.json, the server card, server-json): actions it cannot run are left out, or with
// TOLLGATE_LIST_UNAVAILABLE=mark listed as unavailable with the reason (docs/decisions.md "One listing rule").

/**
 * Which actions a gateway with this configuration can run, decided by the same prechecks a call runs. The CLI
 * starts no gateway: the vendor clients, the model router and the engine are stood in for by what the prechecks
 * look at, their presence (the same rules src/main.ts and src/engine/setup.ts wire them by).
 */
export function configuredAvailability(config: Config): ReadonlyMap<string, Availability> {
  const { useVendor, builtinGroups } = webRoutes(config);
  const present = {} as never;
  const keyed = (k: keyof Config['vendors']) => (config.vendors[k].apiKey ? present : undefined);
  const services = {
    publicUrl: config.publicUrl,
    vendors: {
      rentcast: keyed('RENTCAST'),
      realestateapi: keyed('REALESTATEAPI'),
      fal: keyed('FAL'),
      cueframe: keyed('CUEFRAME'),
      firecrawl: useVendor.has('scraperA') ? present : undefined,
      fastcrw: useVendor.has('scraperB') ? present : undefined,
      scrapingant: useVendor.has('scraperC') ? present : undefined,
    },
    llm: config.llm.apiKey ? present : undefined,
    engine: {
      serves: (g: string) => builtinGroups.has(g as never),
      browserAvailable: () => existsSync(config.env.TOLLGATE_CHROMIUM_PATH),
    },
  } as unknown as Services;
  return catalogAvailability(services);
}

export function catalogCommand(config: Config, out: Out): void {
  const rows = priceList(configuredAvailability(config), config.env.TOLLGATE_LIST_UNAVAILABLE);
  const hidden = actions.length - rows.length;
  out.result(
    { count: rows.length, actions: rows, ...(hidden > 0 ? { hidden_unavailable: hidden } : {}) },
    `${table(
      ['ACTION', { header: 'PRICE', right: true }, 'TITLE', 'NOTE'],
      rows.map((r) => [
        r.id,
        r.price_cents === 0 ? 'free' : `$${(r.price_cents / 100).toFixed(2)}`,
        r.title,
        r.available ? (r.availability_note ?? '') : `unavailable: ${r.availability_note ?? ''}`,
      ]),
    )}${
      hidden > 0
        ? `\n\n${hidden} more actions need a vendor key this gateway does not have (TOLLGATE_LIST_UNAVAILABLE=mark lists them)`
        : ''
    }`,
  );
}
