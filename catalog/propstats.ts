import { z } from 'zod';
import { defineAction, inputObject, outputObject } from './define.js';
import { group } from './group.js';

// propstats (docs/spec.md §4.5): property records, valuations, listings and market statistics, backed by RentCast.
// Additional properties allowed: unknown fields are forwarded to the vendor as query parameters.

const STRICT = false;

export const PROPERTY_TYPES = [
  'Single Family',
  'Condo',
  'Townhouse',
  'Manufactured',
  'Multi-Family',
  'Apartment',
  'Land',
] as const;

// Coordinates: the spec says "number"; we add the ranges of the earth so a swapped or garbage value is a clear
// 400 instead of a paid vendor round trip (docs/decisions.md). propdata reuses them.
export const latitude = (what: string) =>
  z.number().min(-90).max(90).describe(`Latitude in decimal degrees (-90 to 90)${what}`);
export const longitude = (what: string) =>
  z.number().min(-180).max(180).describe(`Longitude in decimal degrees (-180 to 180)${what}`);
export const radiusMiles = (what: string) =>
  z.number().gt(0).max(100).describe(`Search radius in miles (> 0, at most 100)${what}`);

/** "string (min 1) or number"; search filters also take a range such as '2-4'. */
const filter = (what: string) =>
  z
    .union([z.string().min(1), z.number()])
    .optional()
    .describe(`${what}: a number, or a range such as "2-4" (use * for an open end: "3-*").`);

const location = {
  address: z
    .string()
    .min(3)
    .optional()
    .describe("Full address, 'Street, City, State, Zip', e.g. '5500 Grand Lake Dr, San Antonio, TX 78244'."),
  city: z.string().min(1).optional().describe('City name, case-sensitive (e.g. "Austin"); use with state.'),
  state: z.string().length(2).optional().describe('Two-letter state code, case-sensitive (e.g. "TX").'),
  zipCode: z
    .string()
    .regex(/^\d{5}$/, 'must be 5 digits')
    .optional()
    .describe('Five-digit zip code.'),
  latitude: latitude(' of the search center; use with longitude and radius.').optional(),
  longitude: longitude(' of the search center; use with latitude and radius.').optional(),
  radius: radiusMiles(' around latitude/longitude.').optional(),
};

const propertyType = z
  .enum(PROPERTY_TYPES)
  .optional()
  .describe(`Property type (case-sensitive): ${PROPERTY_TYPES.join(', ')}.`);

const searchShape = {
  ...location,
  propertyType,
  bedrooms: filter('Bedrooms (0 = studio)'),
  bathrooms: filter('Bathrooms (fractions allowed)'),
  squareFootage: filter('Living area in square feet'),
  lotSize: filter('Lot size in square feet'),
  yearBuilt: filter('Year built'),
  limit: z.number().int().min(1).max(100).default(50).describe('Results per page (1-100, default 50).'),
  offset: z.number().int().min(0).optional().describe('Results to skip, for paging (>= 0).'),
};

type Ctx = z.core.$RefinementCtx;
type Loc = { city?: unknown; state?: unknown; latitude?: unknown; longitude?: unknown; radius?: unknown };

/** latitude and longitude come together; radius needs them; city needs state. Returns whether coords are set. */
function checkPairs(v: Loc, ctx: Ctx): boolean {
  const lat = v.latitude !== undefined;
  const lon = v.longitude !== undefined;
  if (lat !== lon) {
    ctx.addIssue({
      code: 'custom',
      path: [lat ? 'longitude' : 'latitude'],
      message: 'latitude and longitude must be given together',
    });
  }
  // With one coordinate missing, the pair issue above already says what to add.
  if (v.radius !== undefined && !lat && !lon) {
    ctx.addIssue({ code: 'custom', path: ['radius'], message: 'radius goes with latitude and longitude' });
  }
  if (v.city !== undefined && v.state === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['state'],
      message: 'required with city (city searches need state)',
    });
  }
  return lat && lon;
}

/** Area searches: a location is address, zipCode, city+state, or latitude+longitude+radius (docs/spec.md §4.5). */
function requireLocation(v: Loc & { address?: unknown; zipCode?: unknown }, ctx: Ctx): void {
  const coords = checkPairs(v, ctx);
  if (v.address !== undefined || v.zipCode !== undefined || (v.city !== undefined && v.state !== undefined)) {
    return;
  }
  if (coords) {
    if (v.radius === undefined) {
      ctx.addIssue({ code: 'custom', path: ['radius'], message: 'required with latitude and longitude' });
    }
    return;
  }
  // A half-given location (city without state, one coordinate) already has its own issue.
  const started = [v.city, v.latitude, v.longitude, v.radius].some((x) => x !== undefined);
  if (!started) {
    ctx.addIssue({
      code: 'custom',
      path: [],
      message: 'a location is required: address, zipCode, city+state, or latitude+longitude+radius',
    });
  }
}

const annotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true };

const n = (d: string) => z.number().nullish().describe(d);
const s = (d: string) => z.string().nullish().describe(d);

const addressFields = {
  id: s('Property id (the address with dashes), usable as a stable key.'),
  formattedAddress: s('Full formatted address.'),
  city: s('City.'),
  state: s('Two-letter state code.'),
  zipCode: s('Zip code.'),
  county: s('County.'),
  latitude: n('Latitude.'),
  longitude: n('Longitude.'),
  propertyType: s('Property type.'),
  bedrooms: n('Bedrooms.'),
  bathrooms: n('Bathrooms.'),
  squareFootage: n('Living area, square feet.'),
  lotSize: n('Lot size, square feet.'),
  yearBuilt: n('Year built.'),
};

const propertyRecord = outputObject({
  ...addressFields,
  lastSaleDate: s('Date of the last sale (ISO 8601).'),
  lastSalePrice: n('Price of the last sale, USD.'),
  taxAssessments: z.record(z.string(), z.unknown()).nullish().describe('Tax assessments by year.'),
  propertyTaxes: z.record(z.string(), z.unknown()).nullish().describe('Property taxes by year.'),
  history: z.record(z.string(), z.unknown()).nullish().describe('Sale history by date.'),
  owner: z.record(z.string(), z.unknown()).nullish().describe('Owner names, type and mailing address.'),
  ownerOccupied: z.boolean().nullish().describe('Whether the owner lives there.'),
});

const listing = outputObject({
  ...addressFields,
  status: s('Active or Inactive.'),
  price: n('Asking price (sale) or monthly asking rent (rental), USD.'),
  listingType: s('Listing type, e.g. Standard, New Construction, Foreclosure.'),
  listedDate: s('When it was listed (ISO 8601).'),
  removedDate: s('When it was removed, if inactive (ISO 8601).'),
  daysOnMarket: n('Days on market.'),
  listingAgent: z.record(z.string(), z.unknown()).nullish().describe('Listing agent contact.'),
  listingOffice: z.record(z.string(), z.unknown()).nullish().describe('Listing office contact.'),
  history: z.record(z.string(), z.unknown()).nullish().describe('Listing history by date.'),
});

const comparable = outputObject({
  ...addressFields,
  price: n('Listed price (value comps) or monthly rent (rent comps), USD.'),
  listedDate: s('When it was listed.'),
  daysOld: n('Days since it was last seen on the market.'),
  distance: n('Distance from the subject property, miles.'),
  correlation: n('Similarity to the subject property (0-1); comparables are sorted by it.'),
});

const listOutput = <T extends z.ZodType>(item: T, what: string) =>
  outputObject({
    results: z.array(item).describe(what),
    count: z.number().int().describe('Number of results on this page; fewer than limit means the last page.'),
  });

const listSummary = (what: string) =>
  `${what} Needs a location: address, zipCode, city+state, or latitude+longitude+radius. Returns ` +
  '{ results, count }; page with limit/offset. A search that matches nothing answers 404 resource_not_found ' +
  'and is not charged.';

const properties = defineAction({
  service: 'propstats',
  action: 'properties',
  title: 'Property records (propstats)',
  summary: listSummary(
    'Property records: attributes, tax assessments and history, sale history, owner names and type. Use an ' +
      'exact address for one property, or an area search with filters. Records only, not listings.',
  ),
  whenToUse:
    'Use it to search an area (zip code, city, radius) for property records with filters, or for one ' +
    "property's tax and sale history; for everything about one known property (mortgages, equity, " +
    'liens, flood zone) use propdata/property-detail.',
  priceCents: 30,
  strict: STRICT,
  input: inputObject(STRICT, {
    ...searchShape,
    saleDateRange: filter('Sold within this many days, e.g. 270'),
  }).superRefine(requireLocation),
  output: listOutput(propertyRecord, 'Property records.'),
  annotations,
  example: { address: '5500 Grand Lake Dr, San Antonio, TX 78244' },
  keywords: [
    'property',
    'property records',
    'records',
    'owner',
    'owns',
    'tax',
    'tax history',
    'assessment',
    'sale history',
    'last sale',
    'real estate',
    'public records',
  ],
});

const listingShape = {
  ...searchShape,
  status: z
    .enum(['Active', 'Inactive'])
    .optional()
    .describe('Active (default upstream) or Inactive listings.'),
  daysOld: filter('Listed within this many days, e.g. 30'),
};

const saleListings = defineAction({
  service: 'propstats',
  action: 'sale-listings',
  title: 'Properties for sale (propstats)',
  summary: listSummary(
    'Active or historical for-sale listings with price, status, days on market, agent contacts and listing ' +
      'history.',
  ),
  whenToUse:
    'Use it for homes that are (or were) listed for sale in an area, with asking prices and agents; ' +
    'not for valuations (propstats/value-estimate) or owner records (propstats/properties).',
  priceCents: 30,
  strict: STRICT,
  input: inputObject(STRICT, {
    ...listingShape,
    price: filter('Asking price in USD'),
  }).superRefine(requireLocation),
  output: listOutput(listing, 'Sale listings.'),
  annotations,
  example: { city: 'Austin', state: 'TX', status: 'Active', bedrooms: '2-4', limit: 10 },
  keywords: [
    'for sale',
    'listings',
    'homes for sale',
    'houses for sale',
    'selling',
    'sell',
    'mls',
    'asking price',
    'listed',
    'buy',
    'real estate',
    'sold',
  ],
});

const rentalListings = defineAction({
  service: 'propstats',
  action: 'rental-listings',
  title: 'Properties for rent (propstats)',
  summary: listSummary(
    'Active or historical long-term rental listings with monthly asking rent, status, days on market, ' +
      'contacts and listing history.',
  ),
  whenToUse:
    'Use it for homes that are (or were) listed for rent in an area, with asking rents; for one ' +
    "property's estimated rent use propstats/rent-estimate.",
  priceCents: 30,
  strict: STRICT,
  input: inputObject(STRICT, {
    ...listingShape,
    price: filter('Monthly rent in USD'),
  }).superRefine(requireLocation),
  output: listOutput(listing, 'Rental listings (price is the monthly rent).'),
  annotations,
  example: { zipCode: '78244', price: '1000-2500' },
  keywords: [
    'for rent',
    'rentals',
    'apartments',
    'apartment',
    'rental listings',
    'asking rent',
    'lease',
    'to rent',
    'real estate',
  ],
});

const estimateShape = {
  address: location.address,
  latitude: latitude(' of the property; use with longitude.').optional(),
  longitude: longitude(' of the property; use with latitude.').optional(),
  propertyType,
  bedrooms: z.number().min(0).optional().describe('Override: bedrooms (>= 0; 0 = studio).'),
  bathrooms: z.number().min(0).optional().describe('Override: bathrooms (>= 0).'),
  squareFootage: z.number().gt(0).optional().describe('Override: living area in square feet (> 0).'),
  maxRadius: z.number().gt(0).optional().describe('Comparables no farther than this, in miles (> 0).'),
  daysOld: z.number().int().min(1).optional().describe('Comparables seen within this many days (>= 1).'),
  compCount: z
    .number()
    .int()
    .min(5)
    .max(25)
    .default(15)
    .describe('Number of comparables to use (5-25, default 15).'),
};

function requireSubject(v: { address?: unknown; latitude?: unknown; longitude?: unknown }, ctx: Ctx): void {
  const coords = checkPairs(v, ctx);
  if (v.address === undefined && !coords && v.latitude === undefined && v.longitude === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: [],
      message: 'identify the property by address or latitude+longitude',
    });
  }
}

const estimateSummary = (what: string) =>
  `${what} Identify the property by address (best) or latitude+longitude; optional overrides (propertyType, ` +
  'bedrooms, bathrooms, squareFootage) correct the record, and maxRadius/daysOld/compCount tune the ' +
  'comparables. An address that cannot be found answers 404 and is not charged.';

const valueEstimate = defineAction({
  service: 'propstats',
  action: 'value-estimate',
  title: 'Property value estimate (propstats)',
  summary: estimateSummary(
    'Automated value estimate of one property: price, priceRangeLow, priceRangeHigh, and comparable sale ' +
      'listings ranked by correlation.',
  ),
  whenToUse:
    "Use it for a property's market value together with nearby comparable listings; for a single " +
    'lender-grade number with a confidence score use propdata/avm (cheaper).',
  priceCents: 35,
  strict: STRICT,
  input: inputObject(STRICT, estimateShape).superRefine(requireSubject),
  output: outputObject({
    price: z.number().describe('Estimated market value, USD.'),
    priceRangeLow: z.number().describe('Low end of the estimate, USD.'),
    priceRangeHigh: z.number().describe('High end of the estimate, USD.'),
    latitude: n('Latitude of the subject property.'),
    longitude: n('Longitude of the subject property.'),
    comparables: z.array(comparable).describe('Comparable sale listings, most similar first.'),
  }),
  annotations,
  example: { address: '5500 Grand Lake Dr, San Antonio, TX 78244', compCount: 10 },
  keywords: [
    'home value',
    'market value',
    'valuation',
    'avm',
    'worth',
    'price estimate',
    'comps',
    'comparables',
    'comparable sales',
    'estimate value',
  ],
});

const rentEstimate = defineAction({
  service: 'propstats',
  action: 'rent-estimate',
  title: 'Long-term rent estimate (propstats)',
  summary: estimateSummary(
    'Automated monthly rent estimate of one property: rent, rentRangeLow, rentRangeHigh, and comparable ' +
      'rental listings ranked by correlation. Not available for Land.',
  ),
  whenToUse:
    'Use it for what one property would rent for per month, with comparable rentals; for asking ' +
    'rents of listings in an area use propstats/rental-listings, for zip-wide rent levels ' +
    'propstats/market-stats.',
  priceCents: 35,
  strict: STRICT,
  input: inputObject(STRICT, estimateShape).superRefine((v, ctx) => {
    requireSubject(v, ctx);
    // The vendor values rents for buildings only; a clear 400 beats an uncharged vendor rejection.
    if (v.propertyType === 'Land') {
      ctx.addIssue({
        code: 'custom',
        path: ['propertyType'],
        message: 'rent estimates are not available for Land',
      });
    }
  }),
  output: outputObject({
    rent: z.number().describe('Estimated monthly rent, USD.'),
    rentRangeLow: z.number().describe('Low end of the estimate, USD per month.'),
    rentRangeHigh: z.number().describe('High end of the estimate, USD per month.'),
    latitude: n('Latitude of the subject property.'),
    longitude: n('Longitude of the subject property.'),
    comparables: z.array(comparable).describe('Comparable rental listings, most similar first.'),
  }),
  annotations,
  example: { address: '5500 Grand Lake Dr, San Antonio, TX 78244', bedrooms: 3 },
  keywords: [
    'rent estimate',
    'rental value',
    'how much rent',
    'rent for',
    'monthly rent',
    'comps',
    'rental comps',
    'landlord',
  ],
});

const marketStats = defineAction({
  service: 'propstats',
  action: 'market-stats',
  title: 'Market statistics of an area (propstats)',
  summary:
    'Sale and rental market statistics for one zip code: average, median, min and max prices and rents, price ' +
    'per square foot, days on market, listing counts, by property type and bedrooms, with monthly history. ' +
    'Sale history starts January 2024; rental history starts April 2020. Returns { zipCode, saleData, ' +
    'rentalData }.',
  whenToUse:
    'Use it for zip-code-wide market levels and trends (median price or rent, days on market, ' +
    "inventory); for one property's value use propstats/value-estimate or propdata/avm.",
  priceCents: 30,
  strict: STRICT,
  input: inputObject(STRICT, {
    zipCode: z
      .string()
      .regex(/^\d{5}$/, 'must be 5 digits')
      .describe('Five-digit zip code of the market.'),
    dataType: z
      .enum(['All', 'Sale', 'Rental'])
      .default('All')
      .describe('Which statistics: All (default), Sale or Rental.'),
    historyRange: z
      .number()
      .int()
      .min(1)
      .max(120)
      .default(12)
      .describe('Months of monthly history (1-120, default 12).'),
  }),
  output: outputObject({
    id: s('Market id (the zip code).'),
    zipCode: z.string().describe('Zip code.'),
    saleData: z
      .record(z.string(), z.unknown())
      .nullish()
      .describe(
        'Sale statistics: averagePrice, medianPrice, …, dataByPropertyType, dataByBedrooms, history.',
      ),
    rentalData: z
      .record(z.string(), z.unknown())
      .nullish()
      .describe(
        'Rental statistics: averageRent, medianRent, …, dataByPropertyType, dataByBedrooms, history.',
      ),
  }),
  annotations,
  example: { zipCode: '78244', dataType: 'Sale', historyRange: 6 },
  keywords: [
    'market',
    'market stats',
    'statistics',
    'median price',
    'median home price',
    'median rent',
    'trends',
    'days on market',
    'inventory',
    'market trends',
  ],
});

export const propstats = group(
  properties,
  valueEstimate,
  rentEstimate,
  saleListings,
  rentalListings,
  marketStats,
);
