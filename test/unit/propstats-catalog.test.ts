import { describe, expect, it } from 'vitest';
import { type Action, findAction } from '../../catalog/index.js';
import { inputJsonSchema, outputJsonSchema } from '../../catalog/json-schema.js';
import { zodIssues } from '../../src/run/zod-issues.js';
import { toRentCastQuery } from '../../tools/propstats.js';

// propstats input constraints (docs/spec.md §4.5, §8) checked against the catalog schemas directly.

const action = (id: string): Action => {
  const a = findAction(id);
  if (!a) throw new Error(`missing ${id}`);
  return a;
};
/** Issue paths of a body ([] when it validates). */
const paths = (id: string, body: unknown): string[] => {
  const r = action(id).input.safeParse(body);
  return r.success ? [] : zodIssues(r.error).map((i) => i.path);
};
const parsed = (id: string, body: unknown) => action(id).input.parse(body) as Record<string, unknown>;

const IDS = [
  'propstats/properties',
  'propstats/value-estimate',
  'propstats/rent-estimate',
  'propstats/sale-listings',
  'propstats/rental-listings',
  'propstats/market-stats',
];
const LISTS = ['propstats/properties', 'propstats/sale-listings', 'propstats/rental-listings'];
const ESTIMATES = ['propstats/value-estimate', 'propstats/rent-estimate'];
const ADDRESS = '5500 Grand Lake Dr, San Antonio, TX 78244';

describe('propstats catalog entries', () => {
  it('[catalog:prices] prices match docs/spec.md §4.1', () => {
    expect(IDS.map((id) => action(id).priceCents)).toEqual([30, 35, 35, 30, 30, 30]);
  });

  it.each(IDS)('%s: passthrough, read-only annotations, described fields, a valid example', (id) => {
    const a = action(id);
    expect(a.strict).toBe(false);
    expect(a.annotations).toEqual({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: true,
    });
    expect(a.input.safeParse(a.example).success).toBe(true);
    const props = inputJsonSchema(a).properties as Record<string, { description?: string }>;
    for (const [name, p] of Object.entries(props)) expect(p.description, `${id}.${name}`).toBeTruthy();
    expect(outputJsonSchema(a).type).toBe('object');
    expect(a.description).toContain('nothing is charged on failure');
  });

  it('[propstats:passthrough] unknown fields are kept for the vendor', () => {
    expect(parsed('propstats/properties', { zipCode: '78244', includeTotalCount: true })).toMatchObject({
      includeTotalCount: true,
    });
    expect(parsed('propstats/market-stats', { zipCode: '78244', suppressLogging: true })).toMatchObject({
      suppressLogging: true,
    });
  });
});

describe('[catalog:constraints] shared parameter shapes', () => {
  const id = 'propstats/properties';
  it.each([
    [{ address: 'ab' }, 'address'],
    [{ city: 'Austin', state: 'T' }, 'state'],
    [{ city: 'Austin', state: 'TEX' }, 'state'],
    [{ city: '', state: 'TX' }, 'city'],
    [{ zipCode: '7824' }, 'zipCode'],
    [{ zipCode: '78244-1234' }, 'zipCode'],
    [{ zipCode: 78244 }, 'zipCode'],
    [{ latitude: 91, longitude: 0, radius: 1 }, 'latitude'],
    [{ latitude: 0, longitude: -181, radius: 1 }, 'longitude'],
    [{ latitude: 29, longitude: -98, radius: 0 }, 'radius'],
    [{ latitude: 29, longitude: -98, radius: 100.5 }, 'radius'],
    [{ zipCode: '78244', propertyType: 'House' }, 'propertyType'],
    [{ zipCode: '78244', propertyType: 'condo' }, 'propertyType'],
    [{ zipCode: '78244', bedrooms: '' }, 'bedrooms'],
    [{ zipCode: '78244', yearBuilt: true }, 'yearBuilt'],
    [{ zipCode: '78244', limit: 0 }, 'limit'],
    [{ zipCode: '78244', limit: 101 }, 'limit'],
    [{ zipCode: '78244', limit: 10.5 }, 'limit'],
    [{ zipCode: '78244', offset: -1 }, 'offset'],
  ])('refuses %j at %s', (body, path) => {
    expect(paths(id, body)).toContain(path);
  });

  it('accepts the edges and the range syntax', () => {
    expect(paths(id, { latitude: -90, longitude: 180, radius: 100 })).toEqual([]);
    expect(paths(id, { zipCode: '78244', bedrooms: '2-4', bathrooms: 2.5, squareFootage: '1500-*' })).toEqual(
      [],
    );
    expect(paths(id, { zipCode: '78244', limit: 1, offset: 0, propertyType: 'Multi-Family' })).toEqual([]);
    expect(paths(id, { zipCode: '78244', limit: 100, saleDateRange: 270 })).toEqual([]);
  });

  it('limit defaults to 50 on list actions', () => {
    for (const l of LISTS) expect(parsed(l, { zipCode: '78244' }).limit).toBe(50);
  });

  it('listing filters: status is Active or Inactive; price and daysOld are string or number', () => {
    const l = 'propstats/sale-listings';
    expect(paths(l, { zipCode: '78244', status: 'Pending' })).toEqual(['status']);
    expect(paths(l, { zipCode: '78244', status: 'Inactive', price: '200000-400000', daysOld: 30 })).toEqual(
      [],
    );
    expect(paths(l, { zipCode: '78244', price: '' })).toEqual(['price']);
    expect(paths(l, { zipCode: '78244', daysOld: null })).toEqual(['daysOld']);
  });
});

describe('[propstats:location-required] list actions need a location', () => {
  it.each(LISTS)('%s', (id) => {
    expect(paths(id, {})).toEqual(['']);
    expect(paths(id, { propertyType: 'Condo', bedrooms: 2 })).toEqual(['']);
    expect(paths(id, { state: 'TX' })).toEqual(['']);
    expect(paths(id, { city: 'Austin' })).toEqual(['state']);
    expect(paths(id, { latitude: 30.26, longitude: -97.76 })).toEqual(['radius']);
    expect(paths(id, { latitude: 30.26, radius: 5 })).toEqual(['longitude']);
    expect(paths(id, { address: ADDRESS })).toEqual([]);
    expect(paths(id, { zipCode: '78244' })).toEqual([]);
    expect(paths(id, { city: 'Austin', state: 'TX' })).toEqual([]);
    expect(paths(id, { latitude: 30.26, longitude: -97.76, radius: 5 })).toEqual([]);
  });
});

describe('[propstats:radius-with-coordinates] radius goes with latitude and longitude', () => {
  it('radius without coordinates is refused even when another location is given', () => {
    expect(paths('propstats/sale-listings', { zipCode: '78244', radius: 5 })).toEqual(['radius']);
    expect(paths('propstats/properties', { address: ADDRESS, radius: 5 })).toEqual(['radius']);
  });
});

describe('[propstats:estimate-subject] value and rent estimates', () => {
  it.each(ESTIMATES)('%s identifies the property by address or latitude+longitude', (id) => {
    expect(paths(id, {})).toEqual(['']);
    expect(paths(id, { bedrooms: 3 })).toEqual(['']);
    expect(paths(id, { latitude: 29.47 })).toEqual(['longitude']);
    expect(paths(id, { address: ADDRESS })).toEqual([]);
    expect(paths(id, { latitude: 29.47, longitude: -98.35 })).toEqual([]);
  });

  it.each(ESTIMATES)('%s [catalog:constraints] overrides and comparable tuning', (id) => {
    const p = (extra: object) => paths(id, { address: ADDRESS, ...extra });
    expect(parsed(id, { address: ADDRESS }).compCount).toBe(15);
    expect(
      p({ bedrooms: 0, bathrooms: 0, squareFootage: 1, maxRadius: 0.5, daysOld: 1, compCount: 5 }),
    ).toEqual([]);
    expect(p({ compCount: 25 })).toEqual([]);
    expect(p({ bedrooms: -1 })).toEqual(['bedrooms']);
    expect(p({ bedrooms: '3' })).toEqual(['bedrooms']);
    expect(p({ bathrooms: -0.5 })).toEqual(['bathrooms']);
    expect(p({ squareFootage: 0 })).toEqual(['squareFootage']);
    expect(p({ maxRadius: 0 })).toEqual(['maxRadius']);
    expect(p({ daysOld: 0 })).toEqual(['daysOld']);
    expect(p({ daysOld: 1.5 })).toEqual(['daysOld']);
    expect(p({ compCount: 4 })).toEqual(['compCount']);
    expect(p({ compCount: 26 })).toEqual(['compCount']);
    expect(p({ address: 'ab' })).toEqual(['address']);
  });

  it('rent estimates refuse Land; value estimates accept it', () => {
    expect(paths('propstats/rent-estimate', { address: ADDRESS, propertyType: 'Land' })).toEqual([
      'propertyType',
    ]);
    expect(paths('propstats/value-estimate', { address: ADDRESS, propertyType: 'Land' })).toEqual([]);
  });
});

describe('[catalog:constraints] market-stats', () => {
  const id = 'propstats/market-stats';
  it('zipCode is required and 5 digits; dataType and historyRange have defaults', () => {
    expect(paths(id, {})).toEqual(['zipCode']);
    expect(paths(id, { zipCode: '7824' })).toEqual(['zipCode']);
    expect(parsed(id, { zipCode: '78244' })).toMatchObject({ dataType: 'All', historyRange: 12 });
    expect(paths(id, { zipCode: '78244', dataType: 'Rental', historyRange: 120 })).toEqual([]);
    expect(paths(id, { zipCode: '78244', dataType: 'rental' })).toEqual(['dataType']);
    expect(paths(id, { zipCode: '78244', historyRange: 0 })).toEqual(['historyRange']);
    expect(paths(id, { zipCode: '78244', historyRange: 121 })).toEqual(['historyRange']);
    expect(paths(id, { zipCode: '78244', historyRange: 6.5 })).toEqual(['historyRange']);
  });
});

describe('[propstats:range-syntax] the query RentCast receives', () => {
  it("rewrites 'low-high' ranges to RentCast's 'low:high' on range fields only", () => {
    expect(
      toRentCastQuery({
        zipCode: '78244',
        bedrooms: '2-4',
        squareFootage: '1500 - *',
        price: '200000-400000',
        yearBuilt: '1990:2000',
        bathrooms: 2,
        address: '12-14 Main St, Austin, TX 78704',
        includeTotalCount: true,
        offset: undefined,
      }),
    ).toEqual({
      zipCode: '78244',
      bedrooms: '2:4',
      squareFootage: '1500:*',
      price: '200000:400000',
      yearBuilt: '1990:2000',
      bathrooms: 2,
      address: '12-14 Main St, Austin, TX 78704',
      includeTotalCount: true,
    });
  });
});
