import { notConfigured } from '../src/errors.js';
import type { RealEstateApiClient, ReapiBody } from '../src/upstreams/realestateapi.js';
import { logged } from './propstats.js';
import type { HandlerDef, OutputOf, ServiceHandlers } from './types.js';

// propdata → RealEstateAPI. Our field names are the vendor's (search, search_types, exact_match, mail_zip, …),
// so the body is the validated input, additional (passthrough) fields included. Parcel is the exception: the
// vendor spells polygon points { lat, lon } and wants a numeric property id.

const ENV = ['TOLLGATE_REALESTATEAPI_API_KEY'];
const WHAT = 'propdata (RealEstateAPI)';

type PropdataId = keyof ServiceHandlers<'propdata'>;

/** The parcel request in the vendor's spelling. */
export function toParcelBody(input: ReapiBody): ReapiBody {
  const body: ReapiBody = { ...input };
  if (Array.isArray(input.polygon)) {
    body.polygon = (input.polygon as { latitude: number; longitude: number }[]).map((p) => ({
      lat: p.latitude,
      lon: p.longitude,
    }));
  }
  if (typeof input.id === 'string' && /^\d{1,15}$/.test(input.id)) body.id = Number(input.id);
  return body;
}

function reapiAction<K extends PropdataId>(
  call: (client: RealEstateApiClient, body: ReapiBody, signal: AbortSignal) => Promise<unknown>,
): HandlerDef<K> {
  return {
    precheck: (_input, services) => (services.vendors.realestateapi ? undefined : notConfigured(WHAT, ENV)),
    provider: () => 'realestateapi',
    run: (input, ctx) =>
      logged(ctx, 'realestateapi', async () => {
        const client = ctx.services.vendors.realestateapi;
        if (!client) throw notConfigured(WHAT, ENV);
        // The run path validates this against the action's output schema before anything is charged.
        return (await call(client, input as ReapiBody, ctx.signal)) as OutputOf<K>;
      }),
  };
}

export const propdataHandlers: ServiceHandlers<'propdata'> = {
  'propdata/autocomplete': reapiAction((c, b, s) => c.autocomplete(b, s)),
  'propdata/property-detail': reapiAction((c, b, s) => c.propertyDetail(b, s)),
  'propdata/avm': reapiAction((c, b, s) => c.avm(b, s)),
  'propdata/skiptrace': reapiAction((c, b, s) => c.skiptrace(b, s)),
  'propdata/parcel': reapiAction((c, b, s) => c.parcel(toParcelBody(b), s)),
};
