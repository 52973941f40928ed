import type { Action } from '../catalog/index.js';
import type { Extracted, IdKind } from './consult-extract.js';

// platform/consult, step 2: an action's body from the goal's values. Each field is filled by its name (the
// catalog reuses names across services: url, query, address, zipCode, limit, …), with the few differences
// between services spelt out (propstats takes the whole address, skiptrace its parts). What the goal does not
// give is left out; the planner validates the body and lists what is still missing.

type Params = Record<string, unknown>;

const ID_FIELDS: Record<string, IdKind[]> = {
  job_id: ['render'],
  project_id: ['project'],
  file_id: ['file'],
};

/** The id of the poll's own kind (a scraperA crawl id for scraperA/crawl_status, …). */
function pollId(action: Action, x: Extracted): string | undefined {
  const kinds: IdKind[] =
    action.id === 'scraperA/crawl_status'
      ? ['crawlA', 'crawl']
      : action.id === 'scraperB/crawl_status'
        ? ['crawlB', 'crawl']
        : action.id === 'scraperB/extract_status'
          ? ['extract']
          : [];
  return x.ids.find((i) => kinds.includes(i.kind))?.value;
}

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

function scraperFormats(action: Action, x: Extracted): string[] | undefined {
  const out: string[] = [];
  if (has(x, /\bscreenshot|screen shot|capture (?:the|a) (?:page|site)/)) out.push('screenshot');
  if (action.service === 'scraperB') {
    if (has(x, /\bplain ?text\b|\btext only\b/)) out.push('plainText');
    if (has(x, /\blinks?\b/)) out.push('links');
    if (has(x, /\bsummar/)) out.push('summary');
    if (has(x, /\braw html\b/)) out.push('rawHtml');
    else if (has(x, /\bhtml\b/)) out.push('html');
  } else if (action.service === 'scraperA') {
    if (has(x, /\braw html\b/)) out.push('rawHtml');
    else if (has(x, /\bhtml\b/)) out.push('html');
    if (has(x, /\blinks\b/)) out.push('links');
  }
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

/** Fills every field of the action's input that the goal provides. */
export function fillParams(action: Action, x: Extracted): Params {
  const shape = action.input.shape as Record<string, unknown>;
  const p: Params = {};
  const set = (k: string, v: unknown) => {
    if (k in shape && v !== undefined) p[k] = v;
  };
  const property = action.service === 'propstats' || action.service === 'propdata';

  set('url', x.urls[0]);
  set('urls', x.urls.length > 0 ? x.urls.slice(0, action.id === 'platform/supersearch' ? 5 : 10) : undefined);

  if (property) {
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
    } else if (a) {
      set('address', a.full);
    } else if (x.coords) {
      set('latitude', x.coords.latitude);
      set('longitude', x.coords.longitude);
      set('radius', x.radius ?? (action.id === 'propdata/parcel' ? undefined : 1));
    } else if (x.zip && 'zipCode' in shape) {
      set('zipCode', x.zip);
    } else if (x.zip) {
      set('zip', x.zip);
    } else if (x.city && x.state) {
      set('city', x.city);
      set('state', x.state);
    }
    if (action.id === 'propstats/market-stats') set('zipCode', x.zip);
    set('search', x.partialAddress ?? a?.full ?? (x.city && x.state ? `${x.city}, ${x.state}` : undefined));
    if (!a && action.id !== 'propstats/value-estimate' && action.id !== 'propstats/rent-estimate') {
      set('propertyType', x.propertyType);
      set('bedrooms', x.bedrooms);
      set('bathrooms', x.bathrooms);
    }
    set('price', x.price);
    if ('daysOld' in shape && x.recencyDays !== undefined && action.id.endsWith('listings')) {
      set('daysOld', x.recencyDays);
    }
    if (action.id === 'propstats/market-stats') {
      set('historyRange', x.months && x.months <= 120 ? x.months : undefined);
      const rent = has(x, /\brent(al)?s?\b/);
      const sale = has(x, /\bsale|sell|selling|sold|home prices?|house prices?\b/);
      set('dataType', rent && !sale ? 'Rental' : sale && !rent ? 'Sale' : undefined);
    }
    if (action.id.endsWith('listings') || action.id === 'propstats/properties') {
      set('limit', x.count && x.count <= 100 ? x.count : undefined);
      if (has(x, /\b(?:sold|inactive|historical|off[- ]market|past listings)\b/)) set('status', 'Inactive');
    }
    if (action.id.endsWith('-estimate') && has(x, /\bcomps?\b|comparables?/)) {
      set('compCount', x.count && x.count >= 5 && x.count <= 25 ? x.count : undefined);
    }
  }

  // Search-like fields: the goal's subject, not the instruction.
  set('query', x.topic);
  if (!property) set('search', x.topic.length >= 3 ? x.topic : undefined);
  if ('prompt' in shape) set('prompt', extractionPrompt(x));
  set('extract_properties', x.fields?.join(', '));
  if (action.id === 'scraperB/extract' && has(x, /\bsource|evidence|quote|citation|basis\b/))
    set('basis', true);

  // Counts and recency, by what each action calls them.
  if (action.id === 'platform/transactions') set('limit', x.count && x.count <= 100 ? x.count : undefined);
  if (action.service.startsWith('scraper') && action.action === 'search') {
    set('limit', x.count ? Math.min(x.count, action.service === 'scraperB' ? 20 : x.count) : undefined);
  }
  if (action.id === 'scraperA/crawl') set('limit', x.count);
  if (action.id === 'scraperB/crawl') {
    set('maxPages', x.count && x.count <= 100 ? x.count : undefined);
    if (has(x, /\bjavascript|js render|client[- ]side|dynamic|spa\b/)) set('renderJs', true);
    if (has(x, /\bplain ?text\b/)) set('formats', ['plainText']);
  }
  if (action.id === 'scraperB/search') {
    set('tbs', tbs(x.recencyDays));
    if (has(x, /\bimages?\b|\bpictures?\b|\bphotos?\b/)) set('sources', ['images']);
    else if (has(x, /\bnews\b|\bheadlines?\b|\bpress\b/)) set('sources', ['news']);
  }
  if (action.id === 'platform/supersearch') {
    set('recencyDays', x.recencyDays);
    set('platform', x.platform);
    set('asOf', x.asOf);
  }
  if (action.service.startsWith('scraper') && /scrape|markdown/.test(action.action)) {
    set('formats', scraperFormats(action, x));
    set('wait_for_selector', x.selector);
    if (action.service === 'scraperB' && has(x, /\bjavascript|js render|dynamic|spa\b/))
      set('renderJs', true);
  }

  // Ids the goal names, for the field that takes that kind.
  for (const [field, kinds] of Object.entries(ID_FIELDS)) {
    set(field, x.ids.find((i) => kinds.includes(i.kind))?.value);
  }
  if (action.action.endsWith('_status')) set('id', pollId(action, x));

  // Files and media.
  if (action.service === 'files') {
    set('filename', x.filename);
    set('size_bytes', x.sizeBytes);
    set('mime', x.mime);
    set('tag', x.tag);
    if (action.action !== 'list' && x.tag) set('tags', [x.tag]);
  }
  set('file_name', x.filename);
  set('content_type', x.mime);

  // Video assembly.
  if (action.service === 'videoasm') {
    set('name', x.name);
    if (action.id === 'videoasm/create_project' || action.id === 'videoasm/render')
      set('format', videoFormat(x));
    if (action.id === 'videoasm/render') {
      if (has(x, /\bfinal\b|\bmaster\b|\bfull[- ]res/)) set('intent', 'final');
      else if (has(x, /\bpreview\b|\bdraft\b|\bquick\b/)) set('intent', 'preview');
    }
  }

  if (action.id === 'files/list') set('limit', x.count && x.count <= 100 ? x.count : undefined);
  return p;
}
