// platform/consult: numbers a goal states with their units, read into the units the catalog's fields take.
// Number words become digits first ("two levels deep"); then durations (ms, seconds, minutes) sorted into a wait
// or a time limit by the words before them, depths, counts of things, offsets, byte sizes, money and room
// ranges ("$250k-$400k", "at least 4 bedrooms", "5000+ sq ft", "built 2010 or later"), months of history,
// recency windows and calendar dates (→ YYYYMMDD).

export interface Amounts {
  /** "wait 3 seconds", "give it 5s to load": milliseconds. */
  waitMs?: number;
  /** "10 second timeout", "give up after 30 s": seconds. */
  timeoutSec?: number;
  /** "two levels deep", "depth 3". */
  depth?: number;
  /** "top 10", "50 pages", "my 15 latest charges", "max 40". */
  count?: number;
  /** "skipping the first 100", "offset 20". */
  skip?: number;
  sizeBytes?: number;
  /** Range syntax of the listing services: "min-max", "*" for an open end. */
  price?: string;
  bedrooms?: number | string;
  bathrooms?: number | string;
  squareFootage?: number | string;
  yearBuilt?: number | string;
  months?: number;
  recencyDays?: number;
  /** A calendar date the goal names, YYYYMMDD (or YYYY / YYYYMM when that is all it says). */
  date?: string;
}

const WORDS: Record<string, number> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  fifteen: 15,
  twenty: 20,
  thirty: 30,
  fifty: 50,
  hundred: 100,
  a: 1,
  an: 1,
  single: 1,
};
const NUMBER_WORD =
  /\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|fifty|hundred)\b/gi;

/** Number words as digits ("two levels" → "2 levels"); "a"/"an" only before a unit ("an hour", "a week"). */
export function digits(text: string): string {
  return text
    .replace(/\b(?:a\s+)?half\s+(?:a|an)\s+/gi, '0.5 ')
    .replace(/\b(?:a\s+)?quarter\s+(?:of\s+)?(?:a|an)?\s*(?=mile)/gi, '0.25 ')
    .replace(NUMBER_WORD, (w) => String(WORDS[w.toLowerCase()]))
    .replace(
      /(?<![\d$][\d,.]*\s*[kKmM]?\s*)\b(?:a|an|one|single)\s+(hour|day|week|month|year|second|minute)\b/gi,
      '1 $1',
    );
}

const TIME_UNITS = 'ms|milliseconds?|s|secs?|seconds?|mins?|minutes?';
const TO_MS: Record<string, number> = {
  ms: 1,
  millisecond: 1,
  s: 1000,
  sec: 1000,
  second: 1000,
  min: 60_000,
  minute: 60_000,
};

function durations(text: string, a: Amounts): void {
  for (const m of text.matchAll(new RegExp(`\\b(\\d+(?:\\.\\d+)?)\\s*-?\\s*(${TIME_UNITS})\\b`, 'gi'))) {
    const unit = (m[2] as string)
      .toLowerCase()
      .replace(/s$/, '')
      .replace(/^millisecond$/, 'millisecond');
    const ms = Number(m[1]) * (TO_MS[unit] ?? TO_MS[unit.replace(/s$/, '')] ?? 1000);
    const before = text.slice(Math.max(0, (m.index ?? 0) - 40), m.index).toLowerCase();
    const after = text.slice((m.index ?? 0) + m[0].length, (m.index ?? 0) + m[0].length + 25).toLowerCase();
    if (/\btime ?out|give up|time limit|at most\b/.test(before) || /^\s*time ?out/.test(after)) {
      a.timeoutSec ??= Math.round(ms / 1000);
    } else if (
      /\b(?:wait|delay|load|settle|pause|give|let|allow|after)\b/.test(before) ||
      /^\s*(?:wait|delay|for|to load)/.test(after)
    ) {
      a.waitMs ??= Math.round(ms);
    }
  }
}

const COUNTED =
  'results|pages|items|links|comps|comparables|listings|charges|transactions|calls|urls|hits|homes|houses|' +
  'properties|files|uploads|entries|records|articles|sources|rows|payments';

function count(text: string): number | undefined {
  const lower = text.toLowerCase();
  const noun = new RegExp(
    `\\b(\\d{1,5})\\s+(?:(?:most|latest|last|recent|newest|first|top)\\s+){0,2}(?:[a-z-]+\\s+)?(?:${COUNTED})\\b`,
  ).exec(lower);
  if (noun) return Number(noun[1]);
  const lead =
    /\b(?:top|first|up to|max(?:imum)?|limit(?: of)?|at most|only|last|latest|recent|newest)\s+(\d{1,5})\b(?!\s*(?:hours?|days?|weeks?|months?|years?|seconds?|minutes?|miles?|mi\b|levels?|%|k\b|sq))/.exec(
      lower,
    );
  if (lead) return Number(lead[1]);
  const trail = new RegExp(`\\b(?:${COUNTED})\\s*(?:max(?:imum)?|at most|limit)\\s*:?\\s*(\\d{1,5})\\b`).exec(
    lower,
  );
  if (trail) return Number(trail[1]);
  const maxTrail = /\b(\d{1,5})\s+(?:max|maximum|at most)\b/.exec(lower);
  return maxTrail ? Number(maxTrail[1]) : undefined;
}

function money(s: string): number {
  const m = /([\d,.]+)\s*([kKmM])?/.exec(s);
  if (!m) return Number.NaN;
  const n = Number((m[1] as string).replaceAll(',', ''));
  const mult = m[2] ? (m[2].toLowerCase() === 'k' ? 1e3 : 1e6) : 1;
  return Math.round(n * mult);
}

/** An amount of money: a $ sign, a k/m suffix, thousands commas, or "dollars"/"a month" after it. */
const AMOUNT =
  '(?:\\$\\s?[\\d,.]+\\s*[kKmM]?|[\\d,.]*\\d\\s*[kKmM]\\b|\\d{1,3}(?:,\\d{3})+|\\d+(?=\\s*(?:dollars|usd|bucks|\\/mo|a month|per month|monthly)))';

function priceRange(text: string): string | undefined {
  const between = new RegExp(`between\\s+(${AMOUNT})\\s+and\\s+(${AMOUNT})`, 'i').exec(text);
  if (between) return `${money(between[1] as string)}-${money(between[2] as string)}`;
  const dash = new RegExp(`(${AMOUNT})\\s*(?:-|–|to)\\s*(${AMOUNT})`, 'i').exec(text);
  if (dash) return `${money(dash[1] as string)}-${money(dash[2] as string)}`;
  const under = new RegExp(
    `(?:under|below|less than|at most|max(?:imum)?|up to|no more than|cheaper than|within)\\s+(${AMOUNT})`,
    'i',
  ).exec(text);
  if (under) return `*-${money(under[1] as string)}`;
  const over = new RegExp(`(?:over|above|more than|at least|min(?:imum)?|from)\\s+(${AMOUNT})`, 'i').exec(
    text,
  );
  if (over) return `${money(over[1] as string)}-*`;
  return undefined;
}

/** A count of something with a range: "3 bedrooms", "2-4 beds", "at least 4 bedrooms", "4+ br", "2.5 baths". */
function ranged(text: string, unit: string): number | string | undefined {
  const n = '(\\d+(?:\\.\\d+)?)';
  const m = new RegExp(
    `(?:\\b(at least|min(?:imum)?|over|more than)\\s+)?\\b${n}(?:\\s*(?:-|to)\\s*${n})?(\\+|\\s+or more)?[- ]?(?:${unit})\\b(\\s+or more|\\s+(?:minimum|min|plus))?`,
    'i',
  ).exec(text);
  if (!m) return undefined;
  if (m[3]) return `${m[2]}-${m[3]}`;
  if (m[1] || m[4] || m[5]) return `${m[2]}-*`;
  return Number(m[2]);
}

function yearBuilt(text: string): number | string | undefined {
  const lower = text.toLowerCase();
  const between = /\bbuilt\s+between\s+(\d{4})\s+and\s+(\d{4})/.exec(lower);
  if (between) return `${between[1]}-${between[2]}`;
  const after =
    /\bbuilt\s+(?:after|since|from)\s+(\d{4})/.exec(lower) ??
    /\b(?:newer than|built later than)\s+(\d{4})/.exec(lower);
  if (after) return `${Number(after[1]) + (/since|from/.test(after[0]) ? 0 : 1)}-*`;
  const orLater = /\bbuilt\s+(?:in\s+)?(\d{4})\s+or\s+(?:later|after|newer)/.exec(lower);
  if (orLater) return `${orLater[1]}-*`;
  const before = /\bbuilt\s+before\s+(\d{4})/.exec(lower) ?? /\bolder than\s+(\d{4})/.exec(lower);
  if (before) return `*-${Number(before[1]) - 1}`;
  const inYear = /\bbuilt\s+in\s+(\d{4})\b/.exec(lower);
  return inYear ? Number(inYear[1]) : undefined;
}

function recency(lower: string): number | undefined {
  const n =
    /\b(?:last|past|previous|within|over the last|in the last)\s+(\d+)\s+(hour|day|week|month|year)s?\b/.exec(
      lower,
    );
  const per: Record<string, number> = { hour: 1 / 24, day: 1, week: 7, month: 30, year: 365 };
  if (n) return Math.max(1, Math.ceil(Number(n[1]) * (per[n[2] as string] ?? 1)));
  const one = /\b(?:last|past|this|previous)\s+(hour|day|week|month|year)\b/.exec(lower);
  if (one) return per[one[1] as string];
  if (/\btoday\b|\blast 24 hours\b|\bbreaking\b/.test(lower)) return 1;
  if (/\byesterday\b/.test(lower)) return 2;
  return undefined;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const pad = (n: number) => String(n).padStart(2, '0');

/** A calendar date: 2019-03-01, 2019/03/01, 20190301, "January 5, 2021", "5 Jan 2021", "March 2020", "as of 2018". */
export function calendarDate(text: string): string | undefined {
  const iso = /\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b/.exec(text);
  if (iso) return `${iso[1]}${pad(Number(iso[2]))}${pad(Number(iso[3]))}`;
  const compact = /\b(19|20)(\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])\b/.exec(text);
  if (compact) return compact[0];
  const mon = `(${MONTHS.join('|')})[a-z]*\\.?`;
  const mdy = new RegExp(`\\b${mon}\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`, 'i').exec(text);
  if (mdy)
    return `${mdy[3]}${pad(MONTHS.indexOf((mdy[1] as string).toLowerCase()) + 1)}${pad(Number(mdy[2]))}`;
  const dmy = new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${mon},?\\s+(\\d{4})\\b`, 'i').exec(
    text,
  );
  if (dmy)
    return `${dmy[3]}${pad(MONTHS.indexOf((dmy[2] as string).toLowerCase()) + 1)}${pad(Number(dmy[1]))}`;
  const my = new RegExp(`\\b${mon}\\s+(\\d{4})\\b`, 'i').exec(text);
  if (my) return `${my[2]}${pad(MONTHS.indexOf((my[1] as string).toLowerCase()) + 1)}`;
  const year = /\b(?:as of|in|from|of|since|back in)\s+((?:19|20)\d{2})\b(?!\s*(?:-|to)\s*\d)/i.exec(text);
  return year ? year[1] : undefined;
}

export function amounts(goal: string): Amounts {
  const text = digits(goal);
  const lower = text.toLowerCase();
  const a: Amounts = {};
  durations(text, a);
  const depth =
    /\b(\d{1,2})\s+(?:link\s+)?(?:levels?|layers?|hops?)\b/.exec(lower) ??
    /\bdepth\s+(?:of\s+)?(\d{1,2})\b/.exec(lower);
  if (depth) a.depth = Number(depth[1]);
  a.count = count(text);
  const skip =
    /\bskip(?:ping)?\s+(?:the\s+)?(?:first\s+)?(\d{1,6})\b/.exec(lower) ??
    /\b(?:after|past)\s+the\s+first\s+(\d{1,6})\b/.exec(lower) ??
    /\boffset\s+(?:of\s+)?(\d{1,6})\b/.exec(lower);
  if (skip) a.skip = Number(skip[1]);
  const size = /\b(\d+(?:\.\d+)?)\s*(kb|mb|gb|bytes?)\b/i.exec(text);
  if (size) {
    const mult: Record<string, number> = { kb: 1e3, mb: 1e6, gb: 1e9, byte: 1, bytes: 1 };
    a.sizeBytes = Math.round(Number(size[1]) * (mult[(size[2] as string).toLowerCase()] ?? 1));
  }
  a.price = priceRange(text.replace(/\b\d+(?:\.\d+)?\s*(?:kb|mb|gb)\b/gi, ' '));
  a.bedrooms = /\bstudios?\b/i.test(text) ? 0 : ranged(text, 'bed(?:room)?s?|br|bd|beds');
  a.bathrooms = ranged(text, 'bath(?:room)?s?|ba|baths');
  a.squareFootage = ranged(text.replace(/,(?=\d{3}\b)/g, ''), 'sq\\.? ?ft|square feet|sqft|square foot');
  a.yearBuilt = yearBuilt(text);
  // Months of history: "24 months", or years when the goal is about a market's history or trend.
  const months = /\b(\d{1,3})\s+months?\b/.exec(lower);
  const years = /\b(\d{1,2})\s+years?\b/.exec(lower);
  if (months) a.months = Number(months[1]);
  else if (
    years &&
    /\b(?:trends?|history|historical|developed|changed|over time|market|stats|statistics)\b/.test(lower)
  ) {
    a.months = Number(years[1]) * 12;
  }
  a.recencyDays = recency(lower);
  a.date = calendarDate(text);
  for (const k of Object.keys(a) as Array<keyof Amounts>) if (a[k] === undefined) delete a[k];
  return a;
}
