import { describe, expect, it } from 'vitest';
import { type Action, findAction } from '../../catalog/index.js';
import { inputJsonSchema, outputJsonSchema } from '../../catalog/json-schema.js';
import { zodIssues } from '../../src/run/zod-issues.js';

// propdata input constraints (docs/spec.md §4.6, §8) checked against the catalog schemas directly.

const action = (id: string): Action => {
  const a = findAction(id);
  if (!a) throw new Error(`missing ${id}`);
  return a;
};
const paths = (id: string, body: unknown): string[] => {
  const r = action(id).input.safeParse(body);
  return r.success ? [] : zodIssues(r.error).map((i) => i.path);
};

const IDS = [
  'propdata/autocomplete',
  'propdata/property-detail',
  'propdata/avm',
  'propdata/skiptrace',
  'propdata/parcel',
];
const IDENTIFIED = ['propdata/property-detail', 'propdata/avm', 'propdata/parcel'];
const ADDRESS = '17 Topeka Pass, Willingboro, NJ 08046';
const PARTS = { house: '17', street: 'Topeka Pass', city: 'Willingboro', state: 'NJ', zip: '08046' };

describe('propdata catalog entries', () => {
  it('[catalog:prices] prices match docs/spec.md §4.1', () => {
    expect(IDS.map((id) => action(id).priceCents)).toEqual([1, 20, 25, 25, 20]);
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
  });

  it('skiptrace says it is only for owner outreach', () => {
    expect(action('propdata/skiptrace').description).toMatch(/only for owner outreach/);
  });

  it('[propdata:passthrough] unknown fields are kept for the vendor', () => {
    const r = action('propdata/property-detail').input.parse({ id: 186077, comps: true });
    expect(r).toMatchObject({ comps: true });
  });
});

describe('[catalog:constraints] autocomplete', () => {
  const id = 'propdata/autocomplete';
  it.each([
    [{}, 'search'],
    [{ search: 'ab' }, 'search'],
    [{ search: '17 Top', search_types: [] }, 'search_types'],
    [{ search: '17 Top', search_types: ['X'] }, 'search_types.0'],
    [{ search: '17 Top', search_types: 'A' }, 'search_types'],
    [{ search: '17 Top', precision: 0 }, 'precision'],
    [{ search: '17 Top', precision: 11 }, 'precision'],
    [{ search: '17 Top', precision: 2.5 }, 'precision'],
    [{ search: '17 Top', latitude: 40 }, 'longitude'],
    [{ search: '17 Top', latitude: 95, longitude: 0 }, 'latitude'],
  ])('refuses %j at %s', (body, path) => {
    expect(paths(id, body)).toContain(path);
  });

  it('accepts every search type and the precision edges', () => {
    expect(
      paths(id, { search: 'abc', search_types: ['A', 'C', 'G', 'N', 'P', 'T', 'Z'], precision: 1 }),
    ).toEqual([]);
    expect(paths(id, { search: 'abc', latitude: 40, longitude: -74, precision: 10 })).toEqual([]);
  });
});

describe('[catalog:constraints] identification fields', () => {
  it.each(IDENTIFIED)('%s', (id) => {
    const p = (body: object) => paths(id, { address: ADDRESS, ...body });
    expect(p({ id: '' })).toEqual(['id']);
    expect(paths(id, { id: 186077 })).toEqual([]);
    expect(paths(id, { id: '186077' })).toEqual([]);
    expect(paths(id, { address: '17 T' })).toEqual(['address']);
    expect(p({ state: 'N' })).toEqual(['state']);
    expect(p({ zip: '0804' })).toEqual(['zip']);
    expect(p({ county: '' })).toEqual(['county']);
    expect(p({ unit: '' })).toEqual(['unit']);
  });
});

describe('[propdata:identification-required]', () => {
  it('property-detail: id, address, house+street+city+state+zip, or apn+fips', () => {
    const id = 'propdata/property-detail';
    expect(paths(id, {})).toEqual(['']);
    expect(paths(id, { exact_match: true })).toEqual(['']);
    expect(paths(id, { house: '17', street: 'Topeka Pass' })).toEqual(['city', 'state', 'zip']);
    expect(paths(id, { apn: '38-00803-00017' })).toEqual(['fips']);
    expect(paths(id, { fips: '34005' })).toEqual(['apn']);
    expect(paths(id, PARTS)).toEqual([]);
    expect(paths(id, { apn: '38-00803-00017', fips: '34005' })).toEqual([]);
    expect(paths(id, { address: ADDRESS, exact_match: true, prior_owner: false })).toEqual([]);
    expect(paths(id, { address: ADDRESS, exact_match: 'yes' })).toEqual(['exact_match']);
  });

  it('avm: address or id', () => {
    const id = 'propdata/avm';
    expect(paths(id, {})).toEqual(['']);
    expect(paths(id, PARTS)).toEqual(['']);
    expect(paths(id, { address: ADDRESS, strict: true })).toEqual([]);
    expect(paths(id, { id: 186077 })).toEqual([]);
    expect(paths(id, { address: ADDRESS, strict: 'true' })).toEqual(['strict']);
  });

  it('parcel: identification fields, latitude+longitude, or a polygon', () => {
    const id = 'propdata/parcel';
    expect(paths(id, {})).toEqual(['']);
    expect(paths(id, { size: 5 })).toEqual(['']);
    expect(paths(id, { latitude: 40.03 })).toEqual(['longitude']);
    expect(paths(id, { radius: 1 })).toEqual(['radius']);
    expect(paths(id, { address: ADDRESS, radius: 1 })).toEqual(['radius']);
    expect(paths(id, { latitude: 40.03, longitude: -74.88 })).toEqual([]);
    expect(paths(id, { latitude: 40.03, longitude: -74.88, radius: 100 })).toEqual([]);
    expect(paths(id, { latitude: 40.03, longitude: -74.88, radius: 0 })).toEqual(['radius']);
    expect(paths(id, { latitude: 40.03, longitude: -74.88, radius: 101 })).toEqual(['radius']);
    expect(paths(id, PARTS)).toEqual([]);
  });
});

describe('[propdata:parcel-polygon] polygon points', () => {
  const id = 'propdata/parcel';
  const pt = (latitude: number, longitude: number) => ({ latitude, longitude });
  const tri = [pt(40, -74), pt(40.1, -74), pt(40.1, -74.1)];
  it('needs at least 3 strict { latitude, longitude } points', () => {
    expect(paths(id, { polygon: tri })).toEqual([]);
    expect(paths(id, { polygon: tri.slice(0, 2) })).toEqual(['polygon']);
    expect(paths(id, { polygon: [...tri.slice(0, 2), { latitude: 40.1 }] })).toEqual(['polygon.2.longitude']);
    expect(paths(id, { polygon: [...tri.slice(0, 2), { lat: 40.1, lon: -74.1 }] })).toEqual([
      'polygon.2.latitude',
      'polygon.2.longitude',
      'polygon.2.lat',
      'polygon.2.lon',
    ]);
    expect(paths(id, { polygon: [...tri.slice(0, 2), { ...pt(40.1, -74.1), label: 'x' }] })).toEqual([
      'polygon.2.label',
    ]);
    expect(paths(id, { polygon: [...tri.slice(0, 2), pt(40.1, '-74.1' as unknown as number)] })).toEqual([
      'polygon.2.longitude',
    ]);
  });

  it('[catalog:constraints] size 1-25, resultIndex >= 0', () => {
    const p = (extra: object) => paths(id, { polygon: tri, ...extra });
    expect(p({ size: 1, resultIndex: 0 })).toEqual([]);
    expect(p({ size: 25 })).toEqual([]);
    expect(p({ size: 0 })).toEqual(['size']);
    expect(p({ size: 26 })).toEqual(['size']);
    expect(p({ size: 2.5 })).toEqual(['size']);
    expect(p({ resultIndex: -1 })).toEqual(['resultIndex']);
  });
});

describe('[propdata:skiptrace-rules]', () => {
  const id = 'propdata/skiptrace';
  it.each([
    [{}, ['']],
    [{ address: '17 Topeka Pass' }, ['zip']],
    [{ address: '17 Topeka Pass', city: 'Willingboro' }, ['zip']],
    [{ mail_address: 'PO Box 1' }, ['mail_zip']],
    [{ first_name: 'Jane', last_name: 'Owner' }, ['zip']],
    [{ first_name: 'Jane', phone: '6095550100' }, ['last_name']],
    [{ phone: '555-01' }, ['phone']],
    [{ email: 'not-an-email' }, ['email']],
    [{ zip: '0804', phone: '6095550100' }, ['zip']],
    [{ state: 'New Jersey', phone: '6095550100' }, ['state']],
  ])('refuses %j', (body, expected) => {
    expect(paths(id, body)).toEqual(expected);
  });

  it.each([
    { address: '17 Topeka Pass', zip: '08046' },
    { address: '17 Topeka Pass', city: 'Willingboro', state: 'NJ' },
    { mail_address: 'PO Box 1', mail_city: 'Willingboro', mail_state: 'NJ' },
    { mail_address: 'PO Box 1', mail_zip: '08046' },
    { first_name: 'Jane', last_name: 'Owner', zip: '08046' },
    { first_name: 'Jane', last_name: 'Owner', city: 'Willingboro', state: 'NJ' },
    { phone: '6095550100' },
    { email: 'jane.owner@example.com' },
  ])('accepts %j', (body) => {
    expect(paths(id, body)).toEqual([]);
  });
});
