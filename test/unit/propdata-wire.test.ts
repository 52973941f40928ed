import { describe, expect, it } from 'vitest';
import { toGeoJson, toNumber } from '../../src/upstreams/realestateapi.js';
import { toParcelBody } from '../../tools/propdata.js';

// The RealEstateAPI quirks normalized at the adapter: numbers as strings, WKT geometry, vendor field names.

describe('[propdata:avm-numbers] numbers sent as strings', () => {
  it.each([
    ['1249000', 1249000],
    ['88', 88],
    [' 35.497951000 ', 35.497951],
    ['-97.5', -97.5],
    [312000, 312000],
  ])('%j → %j', (v, n) => {
    expect(toNumber(v)).toBe(n);
  });

  it.each([[''], ['1,249,000'], ['$5'], ['1e3x'], [null], [undefined], [Number.NaN], [{}]])(
    '%j → undefined',
    (v) => {
      expect(toNumber(v)).toBeUndefined();
    },
  );
});

describe('[propdata:parcel-geojson] WKT → GeoJSON', () => {
  it('POINT(lon lat)', () => {
    expect(toGeoJson('POINT(-74.8801 40.0312)')).toEqual({ type: 'Point', coordinates: [-74.8801, 40.0312] });
  });

  it('POLYGON keeps ring nesting and lon/lat order', () => {
    expect(toGeoJson('POLYGON((30 10, 40 40, 20 40, 30 10))')).toEqual({
      type: 'Polygon',
      coordinates: [
        [
          [30, 10],
          [40, 40],
          [20, 40],
          [30, 10],
        ],
      ],
    });
  });

  it('MULTIPOLYGON with holes and negative / exponent numbers', () => {
    const g = toGeoJson(
      'MULTIPOLYGON (((-1 -1, 1 -1, 1 1, -1 -1)), ((2 2, 3 2, 3 3, 2 2), (2.1 2.1, 2.2 2.1, 2.2 2.2, 2.1 2.1)))',
    );
    expect(g?.type).toBe('MultiPolygon');
    const coords = (g?.coordinates ?? []) as number[][][][];
    expect(coords[1]?.[1]?.[0]).toEqual([2.1, 2.1]);
    expect(toGeoJson('POINT(1e-3 -2E2)')).toEqual({ type: 'Point', coordinates: [0.001, -200] });
  });

  it('GeoJSON strings pass through; garbage does not', () => {
    expect(toGeoJson('{"type":"Point","coordinates":[1,2]}')).toEqual({ type: 'Point', coordinates: [1, 2] });
    expect(toGeoJson('LINESTRING(1 2, 3 4)')).toBeUndefined();
    expect(toGeoJson('POLYGON((1 2, 3 4)')).toBeUndefined();
    expect(toGeoJson('POLYGON((1 2, x 4))')).toBeUndefined();
    expect(toGeoJson('POLYGON EMPTY')).toBeUndefined();
    expect(toGeoJson('{"coordinates":[1,2]}')).toBeUndefined();
  });
});

describe('[propdata:passthrough] parcel body in the vendor spelling', () => {
  it('polygon points become { lat, lon }; a numeric id string becomes a number; extras stay', () => {
    expect(
      toParcelBody({
        polygon: [
          { latitude: 40, longitude: -74 },
          { latitude: 40.1, longitude: -74 },
          { latitude: 40.1, longitude: -74.1 },
        ],
        size: 5,
        id: '186077',
        custom_flag: true,
      }),
    ).toEqual({
      polygon: [
        { lat: 40, lon: -74 },
        { lat: 40.1, lon: -74 },
        { lat: 40.1, lon: -74.1 },
      ],
      size: 5,
      id: 186077,
      custom_flag: true,
    });
    expect(toParcelBody({ id: 'abc-1' })).toEqual({ id: 'abc-1' });
  });
});
