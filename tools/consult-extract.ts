import { type GoalId, goalIds } from './consult-ids.js';
import { ADDRESS_COMMA_RE, ADDRESS_RE, CITY_STATE_RE, STATES, SUFFIX, stateCode } from './consult-places.js';
import { fieldList, quotedText, topicOf } from './consult-text.js';
import { type Amounts, amounts, calendarDate, digits } from './consult-units.js';

// platform/consult, step 1: the values a plain-English goal carries. Pure text work, no model: URLs (cleaned,
// bare domains made absolute), US addresses (whole and split into house, street, unit, city, state, zip),
// city/state, zip codes, coordinates and radii, ids of the kinds the catalog's actions take (consult-ids),
// quoted text, names, e-mails, phones, numbers with their units (consult-units), file names, video formats and
// the topic words a search should use.

export interface Address {
  full: string;
  house: string;
  street: string;
  unit?: string;
  city: string;
  state: string;
  zip?: string;
}

export interface Extracted extends Amounts {
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
  ids: GoalId[];
  /** Text the goal puts in quotes: a search, a name, a partial address, said exactly. */
  quoted: string[];
  email?: string;
  phone?: string;
  person?: { first: string; last: string };
  propertyType?: string;
  filename?: string;
  mime?: string;
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
  /** Assessor's parcel number and county FIPS code. */
  apn?: string;
  fips?: string;
  /** The goal's subject with instructions, sources and recency removed: what a search should send. */
  topic: string;
}

const TLDS =
  'com|org|net|io|dev|ai|co|app|gov|edu|info|biz|us|uk|de|fr|ca|au|me|tv|xyz|tech|sh|so|gg|ly|to|cc|site|blog';
const TLD_SET = new Set(TLDS.split('|'));
const URL_RE = /\bhttps?:\/\/[^\s<>"'`]+/gi;
const DOMAIN_RE = new RegExp(
  `(?<![@\\w/.-])((?:[a-z0-9-]+\\.)+(?:${TLDS}))(?![\\w-])(\\/[^\\s<>"'\`]*)?`,
  'gi',
);

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
  svg: 'image/svg+xml',
  heic: 'image/heic',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  m4v: 'video/x-m4v',
  avi: 'video/x-msvideo',
  flac: 'audio/flac',
  ogg: 'audio/ogg',
  opus: 'audio/opus',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  md: 'text/markdown',
  html: 'text/html',
  xml: 'application/xml',
  srt: 'application/x-subrip',
  vtt: 'text/vtt',
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

const PROPERTY_TYPES: Array<[RegExp, string]> = [
  [/\bcondos?\b|\bcondominiums?\b/i, 'Condo'],
  [/\btown ?(?:houses?|homes?)\b/i, 'Townhouse'],
  [/\bmulti-?family\b|\bduplex(?:es)?\b|\btriplex\b/i, 'Multi-Family'],
  [/\bmanufactured\b|\bmobile homes?\b/i, 'Manufactured'],
  [/\bsingle[- ]family\b|\bhouses\b/i, 'Single Family'],
  [/\bvacant land\b|\bland parcels?\b|\blots? for sale\b/i, 'Land'],
];

export function extract(goal: string): Extracted {
  const text = goal.trim().slice(0, 2000);
  const lower = text.toLowerCase();
  const x: Extracted = {
    ...amounts(text),
    text,
    lower,
    urls: [],
    ids: [],
    quoted: quotedText(text),
    topic: topicOf(text),
  };

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
    // Quoted text that starts like a street address is a partial address, said exactly ("12 Maple Av").
    const quotedAddress = x.quoted.find((q) => /^\d{1,6}[A-Za-z]?\s+[A-Za-z]/.test(q));
    for (const m of text.matchAll(CITY_STATE_RE)) {
      const city = (m[1] as string).replace(/^(?:In|Near|Around|For|Of|At)\s+/, '');
      const state = stateCode(m[2] as string);
      if (!state || /^(?:I|The|A|My|Find|Show|Get|List)$/.test(city)) continue;
      // "55 Wall St NY": a street, not a city.
      if (new RegExp(`\\b${SUFFIX}\\.?$`, 'i').test(city) || /\d\s*$/.test(text.slice(0, m.index))) continue;
      x.city = city;
      x.state = state;
      break;
    }
    const partial =
      /\baddress(?:es)?\b[^:]*:\s*([^.?!\n]{3,80})/i.exec(text) ??
      /\b(\d{1,6}\s+[A-Z][a-z]+(?:\s+[A-Za-z]+){0,3})\s*$/.exec(text);
    if (partial) x.partialAddress = (partial[1] as string).trim();
    if (quotedAddress) x.partialAddress = quotedAddress;
  }
  x.apn = /\bAPN\s*(?:#|:|no\.?|number)?\s*((?=[0-9A-Za-z-]*\d)[0-9A-Za-z][0-9A-Za-z-]{2,29})\b/i.exec(
    text,
  )?.[1];
  x.fips = /\bFIPS\s*(?:#|:|code)?\s*(\d{5})\b/i.exec(text)?.[1];
  x.zip ??=
    /(?<![\d$.,])(?<!fips\s*(?:code\s*)?[:#]?\s*)\b(\d{5})(?:-\d{4})?\b(?![\d,.]|\s*(?:pages|results|items|bytes))/i.exec(
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
    /\b(?:within|in|inside)\s+(\d+(?:\.\d+)?)\s*(?:miles?|mi)\b|\b(\d+(?:\.\d+)?)[- ]?(?:miles?|mi)\s+(?:radius|of|around|from)\b/i.exec(
      digits(lower),
    );
  if (radius) x.radius = Number(radius[1] ?? radius[2]);

  x.ids = goalIds(text);

  x.email = /\b[\w.+-]+@[\w-]+\.[\w.-]+\b/.exec(text)?.[0];
  x.phone = /(?<!\d)(?:\+?1[\s.-]?)?\(?\d{3}\)?[\s.-]\d{3}[\s.-]\d{4}(?!\d)/.exec(text)?.[0];
  const person =
    /\b(?:for|named|owner|person|contact|of|find|trace)\s+([A-Z][a-z]+)\s+([A-Z][a-z]+)\b(?!,?\s+[A-Z]{2}\b)/.exec(
      text,
    );
  if (person && !STATES[(person[1] as string).toLowerCase()]) {
    x.person = { first: person[1] as string, last: person[2] as string };
  }

  x.propertyType = PROPERTY_TYPES.find(([re]) => re.test(text))?.[1];
  // A file name: known media and document types, or any short extension that is not a web domain's.
  const file = [
    ...withoutUrls.matchAll(/(?<![\w/.@-])([\w-][\w.-]{0,80}\.([a-z0-9]{2,5}))(?![\w/@-])/gi),
  ].find((m) => {
    const ext = (m[2] as string).toLowerCase();
    return (
      MIME[ext] !== undefined || (!TLD_SET.has(ext) && !/^\d+$/.test(ext) && /[a-z]/i.test(m[1] as string))
    );
  });
  if (file) {
    x.filename = (file[1] as string).replace(/[.]+$/, '');
    x.mime = MIME[(file[2] as string).toLowerCase()];
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
  const asOf = /\b(?:as of|archived?|wayback|snapshot|copy)\b/i.test(text) ? calendarDate(text) : undefined;
  if (asOf) x.asOf = asOf;
  return x;
}
