import type { Action } from '../catalog/index.js';
import { searchCatalog } from './catalog-search.js';

// platform/consult's planner: picks the catalog actions that match the intent and fills in what it can read
// from the text (URLs, a US street address, a zip code, the query itself). Deterministic, no model needed.

const URL_RE = /\bhttps?:\/\/[^\s<>"')]+/gi;
const ADDRESS_RE = /\b\d{1,6}\s+[A-Za-z0-9.' -]+,\s*[A-Za-z .'-]+,\s*[A-Z]{2}\s+\d{5}\b/;
const ZIP_RE = /\b\d{5}\b/;

interface Extracted {
  urls: string[];
  address?: string;
  zip?: string;
  text: string;
}

function extract(intent: string): Extracted {
  const urls = [...intent.matchAll(URL_RE)].map((m) => m[0].replace(/[.,;:]+$/, ''));
  const address = ADDRESS_RE.exec(intent)?.[0];
  const zip = (address ? /\d{5}$/.exec(address)?.[0] : undefined) ?? ZIP_RE.exec(intent)?.[0];
  const out: Extracted = { urls, text: intent.trim().slice(0, 2000) };
  if (address) out.address = address;
  if (zip) out.zip = zip;
  return out;
}

/** Fills the fields of an action's input that the intent provides. */
function fill(action: Action, x: Extracted): Record<string, unknown> {
  const shape = action.input.shape as Record<string, unknown>;
  const params: Record<string, unknown> = {};
  const has = (k: string) => k in shape;
  if (has('url') && x.urls[0]) params.url = x.urls[0];
  if (has('urls') && x.urls.length > 0) params.urls = x.urls.slice(0, 5);
  if (has('address') && x.address) params.address = x.address;
  if (has('zipCode') && x.zip && !params.address) params.zipCode = x.zip;
  if (has('zip') && x.zip && !params.address) params.zip = x.zip;
  for (const k of ['query', 'search', 'intent', 'prompt']) if (has(k)) params[k] = x.text;
  if (has('browser') && params.url) params.browser = false;
  return params;
}

export interface SuggestedCall {
  service: string;
  action: string;
  params: Record<string, unknown>;
  price_cents: number;
  why: string;
}

export function planCalls(intent: string, max = 3): SuggestedCall[] {
  const x = extract(intent);
  const out: SuggestedCall[] = [];
  for (const { action } of searchCatalog(intent, 12)) {
    if (action.priceCents === 0 || action.id === 'platform/consult') continue;
    const params = fill(action, x);
    const check = action.input.safeParse(params);
    const missing = check.success
      ? []
      : [...new Set(check.error.issues.map((i) => i.path.map(String).join('.') || '(body)'))];
    out.push({
      service: action.service,
      action: action.action,
      params,
      price_cents: action.priceCents,
      why:
        missing.length === 0
          ? `${action.title}: ready to run.`
          : `${action.title}: fill in ${missing.join(', ')}.`,
    });
    if (out.length >= max) break;
  }
  // Ready-to-run calls first, keeping the match order otherwise.
  return out.sort(
    (a, b) =>
      Number(a.why.endsWith('ready to run.') === false) - Number(b.why.endsWith('ready to run.') === false),
  );
}
