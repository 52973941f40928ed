import { z } from 'zod';
import { defineAction, inputObject, outputObject } from './define.js';
import { group } from './group.js';
import { latitude, longitude, radiusMiles } from './propstats.js';

// propdata (docs/spec.md §4.6): property detail, AVM, skip trace and parcels, backed by RealEstateAPI.
// Additional properties allowed: unknown fields are forwarded to the vendor in the JSON body.

const STRICT = false;

const fiveDigits = (d: string) =>
  z
    .string()
    .regex(/^\d{5}$/, 'must be 5 digits')
    .optional()
    .describe(d);
const text = (d: string) => z.string().min(1).optional().describe(d);
const twoLetters = (d: string) => z.string().length(2).optional().describe(d);

/** Identification fields shared by property-detail, avm and parcel. */
const identification = {
  id: z
    .union([z.string().min(1), z.number()])
    .optional()
    .describe(
      'Property id from propdata/autocomplete (or a property search); the most exact identification.',
    ),
  address: z
    .string()
    .min(5)
    .optional()
    .describe('Full address in one string, e.g. "123 Main St, Arlington VA 22205".'),
  house: text('House number, e.g. "17"; with street, city, state and zip.'),
  street: text('Street name, e.g. "Topeka Pass"; with house, city, state and zip.'),
  unit: text('Unit or apartment number.'),
  city: text('City.'),
  state: twoLetters('Two-letter state code, e.g. "NJ".'),
  zip: fiveDigits('Five-digit zip code.'),
  county: text('County name.'),
  apn: text("Assessor's parcel number; with fips."),
  fips: text('Five-digit county FIPS code; with apn.'),
};

type Ctx = z.core.$RefinementCtx;
type Fields = Record<string, unknown>;

const has = (v: Fields, ...keys: string[]) => keys.every((k) => v[k] !== undefined);
const issue = (ctx: Ctx, path: string, message: string) =>
  ctx.addIssue({ code: 'custom', path: path ? [path] : [], message });

type Identified = 'complete' | 'partial' | 'none';

/**
 * Address parts and apn/fips are all-or-nothing: each missing part is named. 'partial' means an issue was
 * already reported, so callers add no generic "identify the property" issue on top.
 */
function checkIdentification(v: Fields, ctx: Ctx): Identified {
  let complete = has(v, 'id') || has(v, 'address');
  let partial = false;
  if (has(v, 'house') || has(v, 'street')) {
    const missing = ['house', 'street', 'city', 'state', 'zip'].filter((p) => v[p] === undefined);
    for (const p of missing) issue(ctx, p, 'required with house and street (house+street+city+state+zip)');
    complete ||= missing.length === 0;
    partial ||= missing.length > 0;
  }
  if (has(v, 'apn') !== has(v, 'fips')) {
    issue(ctx, has(v, 'apn') ? 'fips' : 'apn', 'apn and fips must be given together');
    partial = true;
  }
  complete ||= has(v, 'apn', 'fips');
  return complete ? 'complete' : partial ? 'partial' : 'none';
}

function checkCoordinates(v: Fields, ctx: Ctx): boolean {
  const lat = has(v, 'latitude');
  const lon = has(v, 'longitude');
  if (lat !== lon)
    issue(ctx, lat ? 'longitude' : 'latitude', 'latitude and longitude must be given together');
  return lat && lon;
}

const annotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true };
const NOT_FOUND = 'A lookup that matches nothing answers 404 resource_not_found and is not charged.';

const SEARCH_TYPES = ['A', 'C', 'G', 'N', 'P', 'T', 'Z'] as const;

const numOrNull = (d: string) => z.number().nullish().describe(d);
const strOrNull = (d: string) => z.string().nullish().describe(d);

const autocomplete = defineAction({
  service: 'propdata',
  action: 'autocomplete',
  title: 'Resolve a partial address (propdata)',
  summary:
    'Resolves a partial address, city, zip, county or APN string to canonical candidates with formatted ' +
    'address, city, state, zip, county, fips, apn, coordinates and an id for propdata/property-detail. The ' +
    `cheap first step before the paid lookups. Returns { results }. ${NOT_FOUND}`,
  whenToUse:
    'Use it first when an address is partial, misspelt or uncertain, to get the canonical address ' +
    'and an id before paying for a lookup.',
  priceCents: 1,
  strict: STRICT,
  input: inputObject(STRICT, {
    search: z.string().min(3).describe('Partial text to resolve, at least 3 characters, e.g. "9 Topeka Pa".'),
    search_types: z
      .array(z.enum(SEARCH_TYPES))
      .min(1)
      .optional()
      .describe(
        'Only these kinds of candidates: A address, C city+state, G neighborhood, N county, P APN, T state, Z zip.',
      ),
    latitude: latitude(' to bias results toward; use with longitude.').optional(),
    longitude: longitude(' to bias results toward; use with latitude.').optional(),
    precision: z
      .number()
      .int()
      .min(1)
      .max(10)
      .optional()
      .describe('Decimal digits of latitude/longitude used for the bias (1-10).'),
  }).superRefine((v, ctx) => {
    checkCoordinates(v, ctx);
  }),
  output: outputObject({
    results: z
      .array(
        outputObject({
          id: z.union([z.string(), z.number()]).nullish().describe('Id for propdata/property-detail.'),
          title: strOrNull('Display title.'),
          searchType: strOrNull('Kind of candidate (A, C, G, N, P, T, Z).'),
          address: strOrNull('Formatted address.'),
          street: strOrNull('Street.'),
          city: strOrNull('City.'),
          state: strOrNull('State.'),
          zip: strOrNull('Zip code.'),
          county: strOrNull('County.'),
          fips: strOrNull('County FIPS code.'),
          apn: strOrNull("Assessor's parcel number."),
          latitude: numOrNull('Latitude.'),
          longitude: numOrNull('Longitude.'),
        }),
      )
      .describe('Candidates, best first.'),
  }),
  annotations,
  example: { search: '17 Topeka Pa', search_types: ['A'] },
  keywords: [
    'autocomplete',
    'address lookup',
    'geocode',
    'normalize address',
    'resolve',
    'partial address',
    'complete address',
    'canonical address',
    'misspelled',
  ],
});

const propertyDetail = defineAction({
  service: 'propdata',
  action: 'property-detail',
  title: 'Full property record (propdata)',
  summary:
    'Full record of one property (200+ fields): structure, lot, owner and mailing address, flags, tax, sale ' +
    'and deed history, mortgages, estimated value and equity, listing status, flood zone, foreclosure and ' +
    'lien flags. Identify it by id (from propdata/autocomplete), address, house+street+city+state+zip, or ' +
    `apn+fips. ${NOT_FOUND}`,
  whenToUse:
    'Use it for everything about one known property: owner and mailing address, mortgages, equity, ' +
    'liens, foreclosure, flood zone; to search an area for records use propstats/properties.',
  priceCents: 20,
  strict: STRICT,
  input: inputObject(STRICT, {
    ...identification,
    exact_match: z.boolean().optional().describe('Only an exact address match; no fuzzy matching.'),
    prior_owner: z.boolean().optional().describe('Include the prior owner.'),
  }).superRefine((v, ctx) => {
    if (checkIdentification(v, ctx) === 'none') {
      issue(ctx, '', 'identify the property: id, address, house+street+city+state+zip, or apn+fips');
    }
  }),
  output: outputObject({
    id: z.union([z.string(), z.number()]).nullish().describe('Property id.'),
    propertyType: strOrNull('Property type.'),
    estimatedValue: numOrNull('Estimated value, USD.'),
    estimatedEquity: numOrNull('Estimated equity, USD.'),
    ownerInfo: z.record(z.string(), z.unknown()).nullish().describe('Owner names and mailing address.'),
    propertyInfo: z.record(z.string(), z.unknown()).nullish().describe('Structure and address.'),
    lotInfo: z.record(z.string(), z.unknown()).nullish().describe('Lot, apn, zoning, land use.'),
    taxInfo: z.record(z.string(), z.unknown()).nullish().describe('Assessed values and taxes.'),
    saleHistory: z.array(z.unknown()).nullish().describe('Sales and deeds, newest first.'),
    mortgageHistory: z.array(z.unknown()).nullish().describe('Mortgages recorded on the property.'),
  }),
  annotations,
  example: { address: '17 Topeka Pass, Willingboro, NJ 08046' },
  keywords: [
    'property detail',
    'owner',
    'mortgage',
    'equity',
    'deed',
    'foreclosure',
    'lien',
    'flood zone',
    'apn',
    'full record',
    'everything about',
  ],
});

const avm = defineAction({
  service: 'propdata',
  action: 'avm',
  title: 'Lender-grade valuation (propdata)',
  summary:
    'Lender-grade automated valuation of one property: avm, avmMin, avmMax (USD), confidence (0-100), apn, ' +
    'fips and the matched address. Identify it by address or id. Set strict: true to refuse a fuzzy match ' +
    'instead of valuing another property. An address that cannot be confidently matched answers 404 ' +
    'resource_not_found and is not charged.',
  whenToUse:
    'Use it for a lender-grade value of one property with a confidence score; for a value with ' +
    'comparable listings use propstats/value-estimate.',
  priceCents: 25,
  strict: STRICT,
  input: inputObject(STRICT, {
    ...identification,
    strict: z.boolean().optional().describe('true: refuse a fuzzy address match (404) instead of guessing.'),
  }).superRefine((v, ctx) => {
    checkIdentification(v, ctx);
    if (!has(v, 'address') && !has(v, 'id')) issue(ctx, '', 'identify the property by address or id');
  }),
  output: outputObject({
    avm: z.number().describe('Estimated value, USD.'),
    avmMin: z.number().describe('Low end of the value range, USD.'),
    avmMax: z.number().describe('High end of the value range, USD.'),
    confidence: z.number().min(0).max(100).describe('Confidence score, 0-100.'),
    apn: strOrNull("Assessor's parcel number."),
    fips: strOrNull('County FIPS code.'),
    address: strOrNull('The address that was matched and valued.'),
    id: z.union([z.string(), z.number()]).nullish().describe('Property id.'),
  }),
  annotations,
  example: { address: '17 Topeka Pass, Willingboro, NJ 08046', strict: true },
  keywords: [
    'avm',
    'valuation',
    'home value',
    'appraisal',
    'lender',
    'lender grade',
    'confidence',
    'confidence score',
    'worth',
  ],
});

const skiptrace = defineAction({
  service: 'propdata',
  action: 'skiptrace',
  title: 'Owner contact lookup (propdata)',
  summary:
    'Skip trace: personal contact data of the people matched to a property or person (names, age, gender, ' +
    'phones with type, carrier and do-not-call flag, e-mails, current and previous addresses, demographics). ' +
    'To be called only for owner outreach. Trace by address (with city+state or zip), mailing address, ' +
    `first_name+last_name+location, phone or email. Returns { match, persons }. ${NOT_FOUND}`,
  whenToUse:
    "Use it only to contact a property's owner (owner outreach), after you know the address; it " +
    'returns personal data, so call it for nothing else.',
  priceCents: 25,
  strict: STRICT,
  input: inputObject(STRICT, {
    address: text('Street address of the property, e.g. "17 Topeka Pass"; with city+state or zip.'),
    unit: text('Unit of the property address.'),
    city: text('City of the property address.'),
    state: twoLetters('Two-letter state of the property address.'),
    zip: fiveDigits('Five-digit zip of the property address.'),
    mail_address: text('Mailing street address; with mail_city+mail_state or mail_zip.'),
    mail_unit: text('Unit of the mailing address.'),
    mail_city: text('City of the mailing address.'),
    mail_state: twoLetters('Two-letter state of the mailing address.'),
    mail_zip: fiveDigits('Five-digit zip of the mailing address.'),
    first_name: text('First name of the person; with last_name and a location.'),
    last_name: text('Last name of the person; with first_name and a location.'),
    phone: z.string().min(7).optional().describe('Phone number to trace (at least 7 characters).'),
    email: z.email().optional().describe('E-mail address to trace.'),
  }).superRefine((v, ctx) => {
    const place = (p: '' | 'mail_') => {
      if (v[`${p}address`] === undefined) return false;
      if (has(v, `${p}zip`) || has(v, `${p}city`, `${p}state`)) return true;
      issue(ctx, `${p}zip`, `${p}address needs ${p}city and ${p}state, or ${p}zip`);
      return false;
    };
    const property = place('');
    const mailing = place('mail_');
    if (has(v, 'first_name') !== has(v, 'last_name')) {
      issue(ctx, has(v, 'first_name') ? 'last_name' : 'first_name', 'first_name and last_name go together');
    }
    // A name needs somewhere to look: a full address, or at least a zip or city+state.
    const area = property || mailing || has(v, 'zip') || has(v, 'city', 'state') || has(v, 'mail_zip');
    const person = has(v, 'first_name', 'last_name') && area;
    if (has(v, 'first_name', 'last_name') && !area) {
      issue(ctx, 'zip', 'a name trace needs a location: address, zip, or city+state');
    }
    if (property || mailing || person || has(v, 'phone') || has(v, 'email')) return;
    const started = ['address', 'mail_address', 'first_name', 'last_name'].some((k) => has(v, k));
    if (!started) {
      issue(
        ctx,
        '',
        'give address (+city+state or zip), mail_address, first_name+last_name+location, phone or email',
      );
    }
  }),
  output: outputObject({
    match: z.boolean().describe('Whether a person was matched.'),
    persons: z
      .array(
        outputObject({
          names: z.array(z.unknown()).nullish().describe('Names of the person.'),
          phones: z
            .array(z.unknown())
            .nullish()
            .describe('Phones with phoneType, carrier, isConnected and doNotCall.'),
          emails: z.array(z.unknown()).nullish().describe('E-mail addresses.'),
          address: z.record(z.string(), z.unknown()).nullish().describe('Current address.'),
          addressHistory: z.array(z.unknown()).nullish().describe('Previous addresses.'),
          demographics: z
            .record(z.string(), z.unknown())
            .nullish()
            .describe('Age, gender, date of birth and demographic codes.'),
          relationships: z.array(z.unknown()).nullish().describe('Relatives and associates.'),
        }),
      )
      .describe('Matched persons. Honour doNotCall flags.'),
  }),
  annotations,
  example: { address: '17 Topeka Pass', city: 'Willingboro', state: 'NJ', zip: '08046' },
  keywords: [
    'skip trace',
    'skiptrace',
    'owner contact',
    'contact info',
    'contact details',
    'phone',
    'phone number',
    'email',
    'owner outreach',
    'people search',
    'reach the owner',
    'call the owner',
    'text the owner',
    'contact the owner',
    'owner phone',
  ],
});

const parcel = defineAction({
  service: 'propdata',
  action: 'parcel',
  title: 'Parcel boundary (propdata)',
  summary:
    'Parcel boundary as GeoJSON plus the core property record (acreage, apn, fips, assessed and estimated ' +
    'value, owner, use code). Identify the parcel by the identification fields (id, address, ' +
    'house+street+city+state+zip, apn+fips), by latitude+longitude (optional radius), or search inside a ' +
    `polygon. Page with size and resultIndex. Returns { results }. ${NOT_FOUND}`,
  whenToUse:
    'Use it for lot boundaries (GeoJSON), acreage, APN and zoning use code, or to find the parcels ' +
    'at a point or inside a polygon.',
  priceCents: 20,
  strict: STRICT,
  input: inputObject(STRICT, {
    ...identification,
    latitude: latitude(' of a point on the parcel; use with longitude.').optional(),
    longitude: longitude(' of a point on the parcel; use with latitude.').optional(),
    radius: radiusMiles(' around latitude/longitude.').optional(),
    polygon: z
      .array(
        z.strictObject({
          latitude: latitude('.'),
          longitude: longitude('.'),
        }),
      )
      .min(3)
      .optional()
      .describe('Search area: at least 3 { latitude, longitude } points (no other fields).'),
    size: z.number().int().min(1).max(25).optional().describe('Parcels per page (1-25).'),
    resultIndex: z.number().int().min(0).optional().describe('Index of the first parcel, for paging (>= 0).'),
  }).superRefine((v, ctx) => {
    const identified = checkIdentification(v, ctx);
    const coords = checkCoordinates(v, ctx);
    if (has(v, 'radius') && !coords) issue(ctx, 'radius', 'radius goes with latitude and longitude');
    const started = ['latitude', 'longitude', 'radius', 'polygon'].some((k) => has(v, k));
    if (identified === 'none' && !started) {
      issue(
        ctx,
        '',
        'identify the parcel: id, address, house+street+city+state+zip, apn+fips, latitude+longitude, or polygon',
      );
    }
  }),
  output: outputObject({
    results: z
      .array(
        outputObject({
          id: z.union([z.string(), z.number()]).nullish().describe('Property id.'),
          apn: strOrNull("Assessor's parcel number."),
          fips: strOrNull('County FIPS code.'),
          latitude: numOrNull('Latitude of the parcel center.'),
          longitude: numOrNull('Longitude of the parcel center.'),
          geometry: z
            .record(z.string(), z.unknown())
            .nullish()
            .describe('Parcel boundary as a GeoJSON geometry (Polygon or MultiPolygon).'),
          location: z.record(z.string(), z.unknown()).nullish().describe('Parcel center as a GeoJSON Point.'),
        }),
      )
      .describe('Parcels with boundary and core record (acreage, values, owner, use code).'),
    resultCount: numOrNull('Total parcels matched.'),
    resultIndex: numOrNull('Index of the first parcel returned.'),
  }),
  annotations,
  example: { latitude: 40.0312, longitude: -74.8801, radius: 0.1, size: 5 },
  keywords: [
    'parcel',
    'boundary',
    'lot lines',
    'lot boundary',
    'geojson',
    'acreage',
    'acres',
    'land',
    'zoning',
    'polygon',
    'property lines',
  ],
});

export const propdata = group(autocomplete, propertyDetail, avm, skiptrace, parcel);
