// platform/consult, step 1: the values a plain-English goal carries. Pure text work, no model: URLs (cleaned,
// bare domains made absolute), US addresses (whole and split into house, street, unit, city, state, zip),
// city/state, zip codes, coordinates and radii, job and resource ids, names, e-mails, phones, counts, recency,
// price and size ranges, file names, video formats and the topic words a search should use.

export interface Address {
  full: string;
  house: string;
  street: string;
  unit?: string;
  city: string;
  state: string;
  zip?: string;
}

export type IdKind = 'render' | 'project' | 'media' | 'file' | 'crawlA' | 'crawlB' | 'crawl' | 'extract';

export interface Extracted {
  text: string;
  lower: string;
  urls: string[];
  address?: Address;
  /** A street fragment without city/state (for autocomplete). */
  partialAddress?: string;
  city?: string;
  state?: string;
  zip?: string;
  coords?: { latitude: number; longitude: number };
  radius?: number;
  ids: Array<{ kind: IdKind; value: string }>;
  email?: string;
  phone?: string;
  person?: { first: string; last: string };
  /** "top 10", "50 pages", "last 10 charges". */
  count?: number;
  bedrooms?: number | string;
  bathrooms?: number | string;
  /** Range syntax of the listing services: "min-max", "*" for an open end. */
  price?: string;
  propertyType?: string;
  recencyDays?: number;
  months?: number;
  filename?: string;
  mime?: string;
  sizeBytes?: number;
  aspectRatio?: string;
  fps?: number;
  resolution?: string;
  /** Named fields to extract ("title, price and rating"). */
  fields?: string[];
  selector?: string;
  platform?: string;
  name?: string;
  tag?: string;
  asOf?: string;
  /** The goal's subject with instructions, sources and recency removed: what a search should send. */
  topic: string;
}

const STATES: Record<string, string> = {
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
const stateCode = (s: string) => (CODES.has(s) ? s : STATES[s.toLowerCase()]);

const SUFFIX =
  '(?:St|Street|Ave|Avenue|Rd|Road|Dr|Drive|Blvd|Boulevard|Ln|Lane|Way|Ct|Court|Pl|Place|Pkwy|Parkway|Ter|' +
  'Terrace|Cir|Circle|Hwy|Highway|Trl|Trail|Pass|Loop|Sq|Square|Run|Pike|Row|Walk|Alley|Plaza|Xing|Crossing)';
const DIRECTION = '(?:N|S|E|W|NE|NW|SE|SW)';
const UNIT = '(?:,?\\s*(?:Apt|Apartment|Unit|Suite|Ste|#)\\.?\\s*#?[A-Za-z0-9-]+)';
const CITY = "[A-Z][A-Za-z.'-]*(?:\\s+[A-Z][A-Za-z.'-]*){0,3}";

/** Street with a suffix ("5500 Grand Lake Dr"), optional direction and unit, then city, state, zip. */
const ADDRESS_RE = new RegExp(
  `\\b(\\d{1,6}[A-Za-z]?)\\s+((?:${DIRECTION}\\.?\\s+)?(?:[A-Za-z0-9.'-]+\\s+){0,4}?${SUFFIX}\\.?(?:\\s+${DIRECTION}\\b)?)` +
    `(${UNIT})?,?\\s+(${CITY}),?\\s+(${STATE_ALT})\\b(?:,?\\s*(\\d{5})(?:-\\d{4})?)?`,
);
/** Comma-delimited, any street ("100 Broadway, New York, NY 10005"). */
const ADDRESS_COMMA_RE = new RegExp(
  `\\b(\\d{1,6}[A-Za-z]?)\\s+([A-Za-z0-9.' -]{2,40}?)(${UNIT})?,\\s*(${CITY}),\\s*(${STATE_ALT})\\b(?:,?\\s*(\\d{5})(?:-\\d{4})?)?`,
);
const CITY_STATE_RE = new RegExp(`\\b(${CITY}),?\\s+(${STATE_ALT})\\b(?!\\s*\\d{3,4}\\b)`, 'g');

const TLDS =
  'com|org|net|io|dev|ai|co|app|gov|edu|info|biz|us|uk|de|fr|ca|au|me|tv|xyz|tech|sh|so|gg|ly|to|cc|site|blog';
const URL_RE = /\bhttps?:\/\/[^\s<>"'`]+/gi;
const DOMAIN_RE = new RegExp(
  `(?<![@\\w/.-])((?:[a-z0-9-]+\\.)+(?:${TLDS}))(?![\\w-])(\\/[^\\s<>"'\`]*)?`,
  'gi',
);

const ID_RE = /\b(rnd|prj|med|file|crawl_a|crawl_b|crawl|extract_b|extract)_[0-9a-z]{8,}\b/g;
const ID_KIND: Record<string, IdKind> = {
  rnd: 'render',
  prj: 'project',
  med: 'media',
  file: 'file',
  crawl_a: 'crawlA',
  crawl_b: 'crawlB',
  crawl: 'crawl',
  extract_b: 'extract',
  extract: 'extract',
};

const MIME: Record<string, string> = {
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  mkv: 'video/x-matroska',
  webm: 'video/webm',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  aac: 'audio/aac',
  m4a: 'audio/mp4',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  pdf: 'application/pdf',
  csv: 'text/csv',
  txt: 'text/plain',
  json: 'application/json',
  zip: 'application/zip',
};

const PLATFORMS: Array<[RegExp, string]> = [
  [/\btik ?tok\b/i, 'tiktok'],
  [/\binstagram\b|\binsta\b/i, 'instagram'],
  [/\byoutube\b/i, 'youtube'],
  [/\btwitter\b|\btweets?\b/i, 'twitter'],
  [/\bweibo\b/i, 'weibo'],
  [/\breddit\b|\bsubreddit\b/i, 'reddit'],
];

/** Trailing characters that end a sentence rather than a URL. */
function cleanUrl(u: string): string {
  let url = u.replace(/[.,;:!?'"]+$/, '');
  // A closing bracket belongs to the URL only when it opens one too.
  while (/[)\]}]$/.test(url)) {
    const close = url.slice(-1);
    const open = close === ')' ? '(' : close === ']' ? '[' : '{';
    if (url.split(open).length >= url.split(close).length) break;
    url = url.slice(0, -1).replace(/[.,;:!?]+$/, '');
  }
  return url;
}

function money(s: string): number {
  const m = /([\d,.]+)\s*([kKmM])?/.exec(s);
  if (!m) return Number.NaN;
  const n = Number((m[1] as string).replaceAll(',', ''));
  const mult = m[2] ? (m[2].toLowerCase() === 'k' ? 1e3 : 1e6) : 1;
  return Math.round(n * mult);
}

function priceRange(text: string): string | undefined {
  const amount = '\\$\\s?[\\d,.]+\\s*[kKmM]?';
  const between = new RegExp(`between\\s+(${amount})\\s+and\\s+(${amount})`, 'i').exec(text);
  if (between) return `${money(between[1] as string)}-${money(between[2] as string)}`;
  const dash = new RegExp(`(${amount})\\s*(?:-|to)\\s*(${amount})`, 'i').exec(text);
  if (dash) return `${money(dash[1] as string)}-${money(dash[2] as string)}`;
  const under = new RegExp(`(?:under|below|less than|at most|max(?:imum)?|up to)\\s+(${amount})`, 'i').exec(
    text,
  );
  if (under) return `*-${money(under[1] as string)}`;
  const over = new RegExp(`(?:over|above|more than|at least|min(?:imum)?)\\s+(${amount})`, 'i').exec(text);
  if (over) return `${money(over[1] as string)}-*`;
  return undefined;
}

function rooms(text: string, unit: string): number | string | undefined {
  const m = new RegExp(`\\b(\\d+)(?:\\s*(?:-|to)\\s*(\\d+))?\\+?[- ]?(?:${unit})\\b`, 'i').exec(text);
  if (!m) return undefined;
  if (m[2]) return `${m[1]}-${m[2]}`;
  return Number(m[1]);
}

const PROPERTY_TYPES: Array<[RegExp, string]> = [
  [/\bcondos?\b|\bcondominiums?\b/i, 'Condo'],
  [/\btown ?(?:houses?|homes?)\b/i, 'Townhouse'],
  [/\bmulti-?family\b|\bduplex(?:es)?\b|\btriplex\b/i, 'Multi-Family'],
  [/\bmanufactured\b|\bmobile homes?\b/i, 'Manufactured'],
  [/\bsingle[- ]family\b|\bhouses\b/i, 'Single Family'],
  [/\bvacant land\b|\bland parcels?\b|\blots? for sale\b/i, 'Land'],
];

function recency(lower: string): number | undefined {
  const n = /\b(?:last|past|previous|within)\s+(\d+)\s+(hour|day|week|month|year)s?\b/.exec(lower);
  const per: Record<string, number> = { hour: 1, day: 1, week: 7, month: 30, year: 365 };
  if (n) return Math.max(1, Number(n[1]) * (per[n[2] as string] ?? 1));
  const one = /\b(?:last|past|this|previous)\s+(hour|day|week|month|year)\b/.exec(lower);
  if (one) return per[one[1] as string];
  if (/\btoday\b|\blast 24 hours\b|\bbreaking\b/.test(lower)) return 1;
  if (/\byesterday\b/.test(lower)) return 2;
  return undefined;
}

/** Words that instruct, name sources or recency: removed from the topic, with connectors next to them. */
const INSTRUCTION = new Set(
  (
    'find search look lookup up get show give tell research gather collect evidence latest recent recently ' +
    'news articles article papers paper academic scholarly studies tweets tweet threads thread posts post ' +
    'reddit twitter github repositories repos repo images image pictures photos web internet online results ' +
    'sources citations cited please i we want need would like can could you my me some all info ' +
    'information what whats is are was how which who when where do does query google bing top best-of ' +
    'discussions discussion mentions coverage headlines'
  ).split(' '),
);
const CONNECTORS = new Set('about on for of from with in and or the a an to by at into regarding'.split(' '));

function topicOf(text: string): string {
  // "what X, Y and Z say about T": the subject follows "about" when sources or instructions come before it.
  const about = /^(.*?)\babout\s+(.+)$/i.exec(text);
  const before = about?.[1] ?? '';
  const reported =
    /,|\band\b|\b(?:write|wrote|written|say|said|saying|think|report(?:ed|ing)?|post(?:ed|s)?|news|articles?)\b/i;
  if (about && reported.test(before) && (about[2] as string).split(/\s+/).length <= 10) {
    return topicOf(about[2] as string);
  }
  const stripped = text
    .replace(URL_RE, ' ')
    .replace(
      /\b(?:in|from|over|during|within)?\s*(?:the\s+)?(?:last|past|previous|this)\s+(?:\d+\s+)?(?:hours?|days?|weeks?|months?|years?)\b/gi,
      ' ',
    )
    .replace(/\b(?:today|yesterday|right now|these days|nowadays)\b/gi, ' ')
    .replace(/\b(?:with|and)\s+(?:citations|sources|links|references)\b/gi, ' ')
    .replace(/\b(?:top|first|up to)\s+\d+\b/gi, ' ');
  const words = stripped.split(/[\s,;:!?()"“”]+/).filter(Boolean);
  const drop = words.map((w) => INSTRUCTION.has(w.toLowerCase().replace(/[.']+$/, '')));
  // Connectors go when they touch something dropped (or an edge), repeatedly: "images of the X" → "X".
  for (let changed = true; changed; ) {
    changed = false;
    words.forEach((w, i) => {
      if (drop[i] || !CONNECTORS.has(w.toLowerCase())) return;
      const prevGone = i === 0 || drop[i - 1];
      const nextGone = i === words.length - 1 || drop[i + 1];
      if (prevGone || nextGone) {
        drop[i] = true;
        changed = true;
      }
    });
  }
  const kept = words.filter((_, i) => !drop[i]).join(' ');
  return kept.replace(/[.]+$/, '').trim() || text.trim();
}

function fieldList(text: string): string[] | undefined {
  const item = "[a-z][a-z'-]*(?: [a-z][a-z'-]*){0,2}";
  const re = new RegExp(`(${item}(?:,\\s*${item})+(?:,?\\s+(?:and|&)\\s+${item})?)`, 'i');
  const m = re.exec(text.replace(URL_RE, ' '));
  if (!m) return undefined;
  const parts = (m[1] as string)
    .split(/,\s*|\s+(?:and|&)\s+/i)
    .map((p) =>
      p
        .trim()
        .replace(/^(?:the|fields?|pull|extract|get|scrape)\s+/i, '')
        .replace(/^(?:the|fields?)\s+/i, ''),
    )
    .filter((p) => p.length > 0 && !/^(?:news|github|reddit|twitter)$/i.test(p));
  return parts.length >= 2 ? parts : undefined;
}

export function extract(goal: string): Extracted {
  const text = goal.trim().slice(0, 2000);
  const lower = text.toLowerCase();
  const x: Extracted = { text, lower, urls: [], ids: [], topic: topicOf(text) };

  for (const m of text.matchAll(URL_RE)) x.urls.push(cleanUrl(m[0]));
  const withoutUrls = text.replace(URL_RE, ' ');
  for (const m of withoutUrls.matchAll(DOMAIN_RE)) {
    const candidate = `${m[1]}${m[2] ?? ''}`;
    // A file name ("report.pdf") or a dotted word is not a site.
    if (/\.(?:mp4|mov|png|jpe?g|pdf|csv|txt|json|wav|mp3|webp|gif|zip)$/i.test(candidate)) continue;
    x.urls.push(cleanUrl(`https://${candidate}`));
  }

  const addr = ADDRESS_RE.exec(text) ?? ADDRESS_COMMA_RE.exec(text);
  if (addr) {
    const state = stateCode(addr[5] as string);
    if (state) {
      const street = (addr[2] as string).trim();
      const unit = addr[3]?.replace(/^,?\s*/, '').trim();
      x.address = {
        full: addr[0].trim().replace(/,\s*$/, ''),
        house: addr[1] as string,
        street,
        city: (addr[4] as string).trim(),
        state,
        ...(unit ? { unit } : {}),
        ...(addr[6] ? { zip: addr[6] } : {}),
      };
      x.city = x.address.city;
      x.state = state;
      if (addr[6]) x.zip = addr[6];
    }
  }
  if (!x.address) {
    for (const m of text.matchAll(CITY_STATE_RE)) {
      const city = (m[1] as string).replace(/^(?:In|Near|Around|For|Of|At)\s+/, '');
      const state = stateCode(m[2] as string);
      if (!state || /^(?:I|The|A|My|Find|Show|Get|List)$/.test(city)) continue;
      x.city = city;
      x.state = state;
      break;
    }
    const partial =
      /\baddress(?:es)?\b[^:]*:\s*([^.?!\n]{3,80})/i.exec(text) ??
      /\b(\d{1,6}\s+[A-Z][a-z]+(?:\s+[A-Za-z]+){0,3})\s*$/.exec(text);
    if (partial) x.partialAddress = (partial[1] as string).trim();
  }
  x.zip ??= /(?<![\d$.,])\b(\d{5})(?:-\d{4})?\b(?![\d,.]|\s*(?:pages|results|items|bytes))/.exec(
    withoutUrls,
  )?.[1];

  const coords =
    /(-?\d{1,2}\.\d{2,})\s*°?\s*([NS])?\s*,\s*(-?\d{1,3}\.\d{2,})\s*°?\s*([EW])?/i.exec(text) ??
    /\blat(?:itude)?\s*[:=]?\s*(-?\d{1,2}(?:\.\d+)?)[\s,]+(?:lon|lng|long(?:itude)?)\s*[:=]?\s*(-?\d{1,3}(?:\.\d+)?)/i.exec(
      text,
    );
  if (coords) {
    const [lat, lon] = coords.length > 3 ? [coords[1], coords[3]] : [coords[1], coords[2]];
    let latitude = Number(lat);
    let longitude = Number(lon);
    if (coords.length > 3 && coords[2]?.toUpperCase() === 'S') latitude = -Math.abs(latitude);
    if (coords.length > 3 && coords[4]?.toUpperCase() === 'W') longitude = -Math.abs(longitude);
    if (Math.abs(latitude) <= 90 && Math.abs(longitude) <= 180) x.coords = { latitude, longitude };
  }
  const radius =
    /\bwithin\s+(\d+(?:\.\d+)?)\s*(?:miles?|mi)\b|\b(\d+(?:\.\d+)?)[- ]?(?:miles?|mi)\s+radius\b/i.exec(
      lower,
    );
  if (radius) x.radius = Number(radius[1] ?? radius[2]);

  for (const m of text.matchAll(ID_RE)) x.ids.push({ kind: ID_KIND[m[1] as string] as IdKind, value: m[0] });

  x.email = /\b[\w.+-]+@[\w-]+\.[\w.-]+\b/.exec(text)?.[0];
  x.phone = /(?<!\d)(?:\+?1[\s.-]?)?\(?\d{3}\)?[\s.-]\d{3}[\s.-]\d{4}(?!\d)/.exec(text)?.[0];
  const person =
    /\b(?:for|named|owner|person|contact|of|find|trace)\s+([A-Z][a-z]+)\s+([A-Z][a-z]+)\b(?!,?\s+[A-Z]{2}\b)/.exec(
      text,
    );
  if (person && !STATES[(person[1] as string).toLowerCase()]) {
    x.person = { first: person[1] as string, last: person[2] as string };
  }

  const count =
    /\b(?:top|first|up to|max(?:imum)?|limit(?: of)?|at most|only|last|latest|recent)\s+(\d{1,5})\b/i.exec(
      lower,
    ) ??
    /\b(\d{1,5})\s+(?:(?:most|latest|last|recent|newest)\s+){0,2}(?:results|pages|items|links|comps|comparables|listings|charges|transactions|calls|urls|hits|homes|properties|files)\b/i.exec(
      lower,
    );
  if (count) x.count = Number(count[1]);
  const beds = rooms(text, 'bed(?:room)?s?|br|bd');
  if (beds !== undefined) x.bedrooms = beds;
  const baths = rooms(text, 'bath(?:room)?s?|ba');
  if (baths !== undefined) x.bathrooms = baths;
  x.price = priceRange(text);
  x.propertyType = PROPERTY_TYPES.find(([re]) => re.test(text))?.[1];
  x.recencyDays = recency(lower);
  const months =
    /\b(\d{1,3})\s+months?\b/.exec(lower) ?? /\b(\d{1,2})\s+years?\b(?=.*\b(?:history|trend))/.exec(lower);
  if (months) x.months = /years?/.test(months[0]) ? Number(months[1]) * 12 : Number(months[1]);

  const file =
    /(?<![\w/.-])([\w-][\w .-]{0,80}?\.(mp4|mov|mkv|webm|mp3|wav|aac|m4a|png|jpe?g|webp|gif|pdf|csv|txt|json|zip))\b/i.exec(
      withoutUrls,
    );
  if (file) {
    x.filename = (file[1] as string).trim().split(/\s+/).pop() as string;
    x.mime = MIME[(file[2] as string).toLowerCase()];
  }
  const size = /\b(\d+(?:\.\d+)?)\s*(kb|mb|gb|bytes?)\b/i.exec(text);
  if (size) {
    const mult: Record<string, number> = { kb: 1e3, mb: 1e6, gb: 1e9, byte: 1, bytes: 1 };
    x.sizeBytes = Math.round(Number(size[1]) * (mult[(size[2] as string).toLowerCase()] ?? 1));
  }
  x.aspectRatio =
    /\b(16:9|9:16|1:1|4:5)\b/.exec(text)?.[1] ??
    (/\bvertical\b|\bportrait\b|\breels?\b|\bshorts\b/i.test(text)
      ? '9:16'
      : /\bsquare\b/i.test(text)
        ? '1:1'
        : undefined);
  const fps = /\b(24|30|60)\s*fps\b/i.exec(text);
  if (fps) x.fps = Number(fps[1]);
  x.resolution = /\b4k\b|\b2160p\b/i.test(text)
    ? '4k'
    : /\b1080p\b|\bfull hd\b|\bfhd\b/i.test(text)
      ? 'fhd'
      : /\b720p\b/i.test(text)
        ? 'hd'
        : undefined;
  x.fields = fieldList(text);
  x.selector =
    /(?:^|\s)([.#][A-Za-z][\w-]*|\[[^\]]+\])\s+(?:selector|element)\b/.exec(text)?.[1] ??
    /\bselector\s+([.#]?[A-Za-z][\w.#-]*)/.exec(text)?.[1] ??
    /\bwait(?:ing)?\s+(?:for|until)\s+(?:the\s+)?([.#][A-Za-z][\w-]*)/.exec(text)?.[1];
  x.platform = PLATFORMS.find(([re]) => re.test(text))?.[1];
  x.name = /\b(?:called|named|titled)\s+["“']?([A-Z0-9][^"”',.]*?)["”']?(?=\s+(?:in|at|with|for|as)\b|[,.]|$)/
    .exec(text)?.[1]
    ?.trim();
  x.tag =
    /\btagged\s+(?:with\s+)?["“']?([\w-]{1,40})/i.exec(text)?.[1] ??
    /\btag\s+["“']?([\w-]{1,40})/i.exec(text)?.[1];
  const asOf =
    /\bas of\s+(\d{4}(?:-?\d{2}(?:-?\d{2})?)?)\b/i.exec(text) ??
    /\b(?:archived?|wayback)\b.*?\b(\d{4}-\d{2}-\d{2}|\d{8}|\d{4})\b/i.exec(text);
  if (asOf) x.asOf = (asOf[1] as string).replaceAll('-', '');
  return x;
}
