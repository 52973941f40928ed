import type { Action } from '../catalog/index.js';
import { inputJsonSchema } from '../catalog/json-schema.js';
import type { Extracted } from './consult-extract.js';
import { idFor, slotsOf } from './consult-ids.js';

// platform/consult, step 2: an action's body from the goal's values, field by field of the action's own input.
// The catalog reuses field names across services (url, query, limit, zipCode, …), so a field's name says what
// goes in it; its description says the unit (milliseconds or seconds) and whether it takes a range ("2-4",
// "3-*"); its bounds come from its JSON Schema. Ids go to the fields whose example shows their kind
// (consult-ids). What the goal does not give is left out; the planner validates the body and lists what is
// still missing.

type Params = Record<string, unknown>;
type Field = { description?: string; minimum?: number; maximum?: number; exclusiveMinimum?: number };

const has = (x: Extracted, re: RegExp) => re.test(x.lower);

function tbs(days: number | undefined): string | undefined {
  if (days === undefined) return undefined;
  if (days <= 1) return 'qdr:d';
  if (days <= 7) return 'qdr:w';
  if (days <= 31) return 'qdr:m';
  return 'qdr:y';
}

/** What to ask a model for when extracting: the named fields, or the goal itself without its URLs. */
function extractionPrompt(x: Extracted): string {
  if (x.fields?.length) return `Extract: ${x.fields.join(', ')}.`;
  return x.text
    .replace(/\bhttps?:\/\/\S+/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function scraperFormats(action: Action, x: Extracted, allowed: string[]): string[] | undefined {
  const out: string[] = [];
  const want = (f: string) => allowed.includes(f) && !out.includes(f) && out.push(f);
  if (has(x, /\bscreenshot|screen shot|capture (?:the|a) (?:page|site)/)) {
    if (has(x, /\bfull[- ]?page\b|\bwhole page\b|\bentire page\b/)) want('screenshot@fullPage');
    want('screenshot');
  }
  if (has(x, /\bplain ?text\b|\btext only\b|\bjust the text\b/)) want('plainText');
  if (has(x, /\blinks?\b/) && action.action !== 'map') want('links');
  if (has(x, /\bsummar/)) want('summary');
  if (has(x, /\braw html\b/)) want('rawHtml');
  else if (has(x, /\bhtml\b/)) want('html');
  if (out.length === 0) return undefined;
  if (has(x, /\bmarkdown\b/)) out.unshift('markdown');
  return out;
}

function videoFormat(x: Extracted): Params | undefined {
  const f: Params = {};
  if (x.aspectRatio) f.aspectRatio = x.aspectRatio;
  if (x.fps) f.fps = x.fps;
  if (x.resolution) f.resolution = x.resolution;
  return Object.keys(f).length > 0 ? f : undefined;
}

/** A number within the field's bounds: a cap ("limit") is clamped to its maximum, anything else must fit. */
function bounded(f: Field | undefined, n: number | undefined, clamp = false): number | undefined {
  if (n === undefined || !f) return n;
  const min = f.minimum ?? (f.exclusiveMinimum !== undefined ? f.exclusiveMinimum + 1e-9 : undefined);
  if (min !== undefined && n < min) return undefined;
  if (f.maximum !== undefined && n > f.maximum) return clamp ? f.maximum : undefined;
  return n;
}

/** A count or range for a field: range syntax when its description takes one, else a plain number. */
function rangeOrNumber(f: Field | undefined, v: number | string | undefined): number | string | undefined {
  if (v === undefined || !f) return undefined;
  if (/range such as/i.test(f.description ?? '')) return typeof v === 'number' ? v : v;
  if (typeof v === 'number') return v;
  const lo = /^(\d+(?:\.\d+)?)-/.exec(v);
  return lo ? Number(lo[1]) : undefined;
}

function property(action: Action, x: Extracted, set: (k: string, v: unknown) => void, shape: Params): void {
  const a = x.address;
  if (action.id === 'propdata/skiptrace') {
    if (a) {
      set('address', `${a.house} ${a.street}`);
      set('unit', a.unit);
      set('city', a.city);
      set('state', a.state);
      set('zip', a.zip);
    } else {
      set('city', x.city);
      set('state', x.city ? x.state : undefined);
      set('zip', x.zip);
    }
    set('first_name', x.person?.first);
    set('last_name', x.person?.last);
    set('email', x.email);
    set('phone', x.phone);
    return;
  }
  set('apn', x.apn);
  set('fips', x.apn ? x.fips : undefined);
  if (a) set('address', a.full);
  else if (x.apn && 'apn' in shape) {
    // identified by apn + fips
  } else if (x.coords) {
    set('latitude', x.coords.latitude);
    set('longitude', x.coords.longitude);
    set('radius', x.radius ?? (action.id === 'propdata/parcel' || !('radius' in shape) ? undefined : 1));
  } else if (x.zip) set('zipCode' in shape ? 'zipCode' : 'zip', x.zip);
  else if (x.city && x.state) {
    set('city', x.city);
    set('state', x.state);
  }
  if (action.id === 'propstats/market-stats') set('zipCode', x.zip);
  const partial = x.partialAddress ?? x.quoted.find((q) => /\d/.test(q) || q.split(/\s+/).length >= 2);
  set('search', partial ?? a?.full ?? (x.city && x.state ? `${x.city}, ${x.state}` : undefined));
  if (action.id === 'propstats/market-stats') {
    const rent = has(x, /\brent(al)?s?\b|\blease/);
    const sale = has(
      x,
      /\bsale|sell|selling|sold|home prices?|house prices?|for-sale|on (?:the )?market|inventory\b/,
    );
    set('dataType', rent && !sale ? 'Rental' : sale && !rent ? 'Sale' : undefined);
  }
  if (has(x, /\b(?:sold|inactive|historical|off[- ]market|past listings|delisted)\b/))
    set('status', 'Inactive');
  if (has(x, /\bstrict(?:ly)?\b|\bexact(?:ly)? match|\bno fuzzy\b/)) {
    set('strict', true);
    set('exact_match', true);
  }
  if (has(x, /\bprior owner|previous owner\b/)) set('prior_owner', true);
}

/** Fills every field of the action's input that the goal provides. */
export function fillParams(action: Action, x: Extracted): Params {
  const shape = action.input.shape as Params;
  const fields = (inputJsonSchema(action).properties ?? {}) as Record<string, Field>;
  const p: Params = {};
  const set = (k: string, v: unknown) => {
    if (k in shape && v !== undefined && !(k in p)) p[k] = v;
  };
  const comps = has(x, /\bcomps?\b|comparables?|comparable (?:sales|rentals|listings)/);

  // Ids of the kind each field takes; URLs.
  for (const slot of slotsOf(action))
    if (!slot.path.includes('.')) set(slot.path, idFor(action, slot.path, x.ids));
  set('url', x.urls[0]);
  set('urls', x.urls.length > 0 ? x.urls.slice(0, action.id === 'platform/supersearch' ? 5 : 10) : undefined);

  if (action.service === 'propstats' || action.service === 'propdata') property(action, x, set, shape);

  // Text fields: quoted text is said exactly; otherwise the goal's subject.
  const quote = x.quoted.find((q) => !/^https?:\/\//.test(q));
  set('query', quote ?? x.topic);
  if (action.service !== 'propstats' && action.service !== 'propdata')
    set('search', quote ?? (x.topic.length >= 3 ? x.topic : undefined));
  if ('prompt' in shape) set('prompt', extractionPrompt(x));
  set('extract_properties', x.fields?.join(', '));
  set('name', x.name ?? quote);

  // Numbers, in the units and bounds of each field.
  const estimate = action.id.endsWith('-estimate');
  set('propertyType', x.propertyType);
  for (const k of ['bedrooms', 'bathrooms', 'squareFootage', 'yearBuilt'] as const)
    set(k, rangeOrNumber(fields[k], x[k]));
  set('price', x.price);
  set('compCount', comps || estimate ? bounded(fields.compCount, x.count) : undefined);
  set('maxRadius', estimate ? x.radius : undefined);
  set('historyRange', bounded(fields.historyRange, x.months));
  if (action.id.endsWith('listings')) set('daysOld', x.recencyDays);
  if (has(x, /\bsold\b/)) set('saleDateRange', x.recencyDays);
  set('recencyDays', bounded(fields.recencyDays, x.recencyDays));
  if (action.id === 'scraperB/search') set('tbs', tbs(x.recencyDays));
  if (!estimate) {
    set('limit', bounded(fields.limit, x.count, true));
    set('maxPages', bounded(fields.maxPages, x.count, true));
    set('size', bounded(fields.size, x.count, true));
    set('maxResults', bounded(fields.maxResults, x.count, true));
  }
  set('maxDepth', bounded(fields.maxDepth, x.depth));
  set('skip', x.skip);
  set('offset', x.skip);
  const ms = /millisecond/i.test(fields.waitFor?.description ?? '') ? x.waitMs : x.waitMs && x.waitMs / 1000;
  set('waitFor', bounded(fields.waitFor, ms));
  set('timeout', bounded(fields.timeout, x.timeoutSec, true));

  // Switches the goal names.
  if (
    has(
      x,
      /\b(?:no |without (?:a |the )?|skip the )browser\b|\bplain http\b|\bstatic (?:page|html)\b|\bno javascript\b|\bno js\b/,
    )
  )
    set('browser', false);
  if (has(x, /\bjavascript|\bjs[- ]render|client[- ]side|dynamic|\bspa\b|single[- ]page app/)) {
    set('renderJs', true);
    set('browser', true);
  }
  if (has(x, /\bwhole page\b|\bentire page\b|\bfull page\b|not just the main content|everything on the page/))
    set('onlyMainContent', false);
  else if (has(x, /\bmain content\b|\barticle text\b|\bwithout (?:the )?(?:nav|navigation|ads)/))
    set('onlyMainContent', true);
  if ('formats' in shape) {
    const enumOf = (s: unknown) => ((s as { items?: { enum?: string[] } })?.items?.enum ?? []) as string[];
    const allowed = enumOf(fields.formats);
    set(
      'formats',
      action.action.includes('crawl') && has(x, /\bplain ?text\b/)
        ? ['plainText']
        : scraperFormats(action, x, allowed),
    );
  }
  set('wait_for_selector', x.selector);
  if (action.id === 'scraperB/extract' && has(x, /\bsource|evidence|quote|citation|basis\b/))
    set('basis', true);
  if (action.id === 'scraperB/search') {
    if (has(x, /\bimages?\b|\bpictures?\b|\bphotos?\b/)) set('sources', ['images']);
    else if (has(x, /\bnews\b|\bheadlines?\b|\bpress\b/)) set('sources', ['news']);
  }
  set('platform', x.platform);
  set('asOf', x.asOf);

  // Files and media.
  set(
    'filename',
    action.service === 'videoasm'
      ? x.filename && /\bname(?:d)?\b|\bcall(?:ed)?\b/.test(x.lower)
        ? x.filename
        : undefined
      : x.filename,
  );
  set('size_bytes', x.sizeBytes);
  set('mime', x.mime);
  set('tag', x.tag);
  if (x.tag && action.action !== 'list') set('tags', [x.tag]);
  set('file_name', x.filename);
  set('content_type', x.mime);

  // Video assembly.
  if (action.id === 'videoasm/create_project' || action.id === 'videoasm/render')
    set('format', videoFormat(x));
  if (action.id === 'videoasm/render') {
    if (has(x, /\bfinal\b|\bmaster\b|\bfull[- ]res/)) set('intent', 'final');
    else if (has(x, /\bpreview\b|\bdraft\b|\bquick\b|\brough\b/)) set('intent', 'preview');
    if (has(x, /\bbackground\b|\blow[- ]priority\b|\bno rush\b/)) set('priority', 'background');
  }
  return p;
}
