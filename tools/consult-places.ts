// platform/consult: US places in a goal. State names and codes, street suffixes, and the patterns of a street
// address (whole: house, street, unit, city, state, zip; or comma-delimited with any street name) and of a
// city with its state.

export const STATES: Record<string, string> = {
  alabama: 'AL',
  alaska: 'AK',
  arizona: 'AZ',
  arkansas: 'AR',
  california: 'CA',
  colorado: 'CO',
  connecticut: 'CT',
  delaware: 'DE',
  florida: 'FL',
  georgia: 'GA',
  hawaii: 'HI',
  idaho: 'ID',
  illinois: 'IL',
  indiana: 'IN',
  iowa: 'IA',
  kansas: 'KS',
  kentucky: 'KY',
  louisiana: 'LA',
  maine: 'ME',
  maryland: 'MD',
  massachusetts: 'MA',
  michigan: 'MI',
  minnesota: 'MN',
  mississippi: 'MS',
  missouri: 'MO',
  montana: 'MT',
  nebraska: 'NE',
  nevada: 'NV',
  'new hampshire': 'NH',
  'new jersey': 'NJ',
  'new mexico': 'NM',
  'new york': 'NY',
  'north carolina': 'NC',
  'north dakota': 'ND',
  ohio: 'OH',
  oklahoma: 'OK',
  oregon: 'OR',
  pennsylvania: 'PA',
  'rhode island': 'RI',
  'south carolina': 'SC',
  'south dakota': 'SD',
  tennessee: 'TN',
  texas: 'TX',
  utah: 'UT',
  vermont: 'VT',
  virginia: 'VA',
  washington: 'WA',
  'west virginia': 'WV',
  wisconsin: 'WI',
  wyoming: 'WY',
  'district of columbia': 'DC',
};
const CODES = new Set([...Object.values(STATES), 'PR']);
const titleCase = (s: string) => s.replace(/\b[a-z]/g, (c) => c.toUpperCase());
/** Two-letter codes (upper case only: "or" and "in" are words) or names, title or lower case. */
const STATE_ALT = `(?:${[...CODES, ...Object.keys(STATES).flatMap((n) => [titleCase(n), n])].join('|')})`;
export const stateCode = (s: string) => (CODES.has(s) ? s : STATES[s.toLowerCase()]);

export const SUFFIX =
  '(?:St|Street|Ave|Avenue|Rd|Road|Dr|Drive|Blvd|Boulevard|Ln|Lane|Way|Ct|Court|Pl|Place|Pkwy|Parkway|Ter|' +
  'Terrace|Cir|Circle|Hwy|Highway|Trl|Trail|Pass|Loop|Sq|Square|Run|Pike|Row|Walk|Alley|Plaza|Xing|Crossing)';
const DIRECTION = '(?:N|S|E|W|NE|NW|SE|SW)';
const UNIT = '(?:,?\\s*(?:Apt|Apartment|Unit|Suite|Ste|#)\\.?\\s*#?[A-Za-z0-9-]+)';
const CITY = "[A-Z][A-Za-z.'-]*(?:\\s+[A-Z][A-Za-z.'-]*){0,3}";

/** Street with a suffix ("5500 Grand Lake Dr"), optional direction and unit, then city, state, zip. */
export const ADDRESS_RE = new RegExp(
  `\\b(\\d{1,6}[A-Za-z]?)\\s+((?:${DIRECTION}\\.?\\s+)?(?:[A-Za-z0-9.'-]+\\s+){0,4}?${SUFFIX}\\.?(?:\\s+${DIRECTION}\\b)?)` +
    `(${UNIT})?,?\\s+(${CITY}),?\\s+(${STATE_ALT})\\b(?:,?\\s*(\\d{5})(?:-\\d{4})?)?`,
);
/** Comma-delimited, any street ("100 Broadway, New York, NY 10005"). */
export const ADDRESS_COMMA_RE = new RegExp(
  `\\b(\\d{1,6}[A-Za-z]?)\\s+([A-Za-z0-9.' -]{2,40}?)(${UNIT})?,\\s*(${CITY}),\\s*(${STATE_ALT})\\b(?:,?\\s*(\\d{5})(?:-\\d{4})?)?`,
);
export const CITY_STATE_RE = new RegExp(`\\b(${CITY}),?\\s+(${STATE_ALT})\\b(?!\\s*\\d{3,4}\\b)`, 'g');
