import { type FieldIssue, GatewayError, invalidInput, notConfigured } from '../src/errors.js';
import type { RentCastClient, RentCastQuery } from '../src/upstreams/rentcast.js';
import type { HandlerContext, Services } from './context.js';
import type { HandlerDef, OutputOf, ServiceHandlers } from './types.js';

// propstats → RentCast. Our parameter names are RentCast's, so the mapping is one to one, except the range
// syntax: the spec's 'low-high' is RentCast's 'low:high'. Additional (passthrough) fields are forwarded as
// query parameters too, which is why they must be scalars.

const ENV = ['TOLLGATE_RENTCAST_API_KEY'];
const WHAT = 'propstats (RentCast)';

type PropstatsId = keyof ServiceHandlers<'propstats'>;
type Input = Record<string, unknown>;

/** Fields that take the spec's range syntax ('2-4'); RentCast spells ranges '2:4' (and '2:*' for open ends). */
const RANGE_FIELDS = new Set([
  'bedrooms',
  'bathrooms',
  'squareFootage',
  'lotSize',
  'yearBuilt',
  'saleDateRange',
  'price',
  'daysOld',
]);
const RANGE = /^\s*(\d+(?:\.\d+)?|\*)\s*-\s*(\d+(?:\.\d+)?|\*)\s*$/;

/** The query RentCast receives: every field with a value, ranges rewritten to RentCast's syntax. */
export function toRentCastQuery(input: Input): RentCastQuery {
  const q: RentCastQuery = {};
  for (const [k, v] of Object.entries(input)) {
    if (v === undefined) continue;
    if (typeof v === 'string') {
      const m = RANGE_FIELDS.has(k) ? RANGE.exec(v) : null;
      q[k] = m ? `${m[1]}:${m[2]}` : v;
    } else if (typeof v === 'number' || typeof v === 'boolean') {
      q[k] = v;
    } else {
      // Unreachable after precheck; kept so a non-scalar never becomes "[object Object]" on the wire.
      throw invalidInput([{ path: k, message: NOT_SCALAR }]);
    }
  }
  return q;
}

const NOT_SCALAR = 'extra fields are sent to the vendor as query parameters: use a string, number or boolean';

/** Before any hold: the vendor must be configured, and passthrough fields must fit in a query string. */
function precheck(input: Input, services: Services): GatewayError | undefined {
  if (!services.vendors.rentcast) return notConfigured(WHAT, ENV);
  const issues: FieldIssue[] = Object.entries(input)
    .filter(([, v]) => v !== undefined && !['string', 'number', 'boolean'].includes(typeof v))
    .map(([path]) => ({ path, message: NOT_SCALAR }));
  return issues.length > 0 ? invalidInput(issues) : undefined;
}

/**
 * Upstream failures carry the vendor's answer as `cause`; it is logged here and never shown to the caller.
 * Credential or account trouble is the operator's problem, so it is logged as an error.
 */
export async function logged<T>(ctx: HandlerContext, vendor: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof GatewayError && e.cause !== undefined) {
      const level = e.code === 'upstream_unavailable' ? 'error' : 'warn';
      ctx.log[level]({ vendor, code: e.code, cause: e.cause }, 'upstream call failed');
    }
    throw e;
  }
}

function rentcastAction<K extends PropstatsId>(
  call: (client: RentCastClient, query: RentCastQuery, signal: AbortSignal) => Promise<unknown>,
): HandlerDef<K> {
  return {
    precheck: (input, services) => precheck(input as Input, services),
    provider: () => 'rentcast',
    run: (input, ctx) =>
      logged(ctx, 'rentcast', async () => {
        const client = ctx.services.vendors.rentcast;
        if (!client) throw notConfigured(WHAT, ENV);
        // The run path validates this against the action's output schema before anything is charged.
        return (await call(client, toRentCastQuery(input as Input), ctx.signal)) as OutputOf<K>;
      }),
  };
}

/** Search endpoints answer bare arrays; MCP needs objects, so results are wrapped. */
const page = (results: Record<string, unknown>[]) => ({ results, count: results.length });

export const propstatsHandlers: ServiceHandlers<'propstats'> = {
  'propstats/properties': rentcastAction(async (c, q, s) => page(await c.properties(q, s))),
  'propstats/value-estimate': rentcastAction((c, q, s) => c.valueEstimate(q, s)),
  'propstats/rent-estimate': rentcastAction((c, q, s) => c.rentEstimate(q, s)),
  'propstats/sale-listings': rentcastAction(async (c, q, s) => page(await c.saleListings(q, s))),
  'propstats/rental-listings': rentcastAction(async (c, q, s) => page(await c.rentalListings(q, s))),
  'propstats/market-stats': rentcastAction((c, q, s) => c.marketStats(q, s)),
};
