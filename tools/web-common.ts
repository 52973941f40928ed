import { GatewayError, invalidInput, notConfigured } from '../src/errors.js';
import type { PageFormat, WebEngine, WebGroup } from '../src/ports/web-engine.js';
import type { HandleRecord, HandlerContext, Services } from './context.js';
import { pollableHandle } from './poll.js';

// What the three scraper services share: choosing vendor or built-in engine, refusing what this gateway cannot
// do before any hold is taken, server-minted job handles, and stripping vendor text from answers.

export const VENDOR_ENV: Record<WebGroup, string> = {
  scraperA: 'TOLLGATE_FIRECRAWL_API_KEY',
  scraperB: 'TOLLGATE_FASTCRW_API_KEY',
  scraperC: 'TOLLGATE_SCRAPINGANT_API_KEY',
};

/** The built-in engine when the operator lets it serve `group`. */
export function builtin(services: Services, group: WebGroup): WebEngine | undefined {
  const e = services.engine;
  return e?.serves(group) ? e : undefined;
}

/** Neither the vendor nor the built-in engine serves this group (TOLLGATE_<GROUP>_ENGINE=vendor, no key). */
export function groupOff(group: WebGroup): GatewayError {
  return notConfigured(`${group} (vendor only on this gateway)`, [VENDOR_ENV[group]]);
}

/** A capability only the vendor has (web search, residential proxies, stealth, proxy countries). */
export function vendorOnly(group: WebGroup, what: string): GatewayError {
  return notConfigured(`${what} (${group} vendor only)`, [VENDOR_ENV[group]]);
}

export function browserOff(): GatewayError {
  return notConfigured('Browser rendering (headless Chromium)', [
    'TOLLGATE_CHROMIUM_PATH (or install chromium)',
  ]);
}

/** First refusal among checks, or undefined. */
export function firstOf(...checks: Array<GatewayError | undefined | false>): GatewayError | undefined {
  for (const c of checks) if (c) return c;
  return undefined;
}

/** `js_snippet` is base64 (docs/spec.md §4.7); decoded here so a bad one is a 400 naming the field. */
export function decodeSnippet(b64: string | undefined): string | undefined {
  if (b64 === undefined) return undefined;
  const compact = b64.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(compact) || compact.length % 4 === 1) {
    throw invalidInput([{ path: 'js_snippet', message: 'must be base64-encoded JavaScript' }]);
  }
  const text = Buffer.from(compact, 'base64').toString('utf8');
  if (!text.trim() || text.includes('\uFFFD')) {
    throw invalidInput([{ path: 'js_snippet', message: 'must be base64-encoded JavaScript' }]);
  }
  return text;
}

export function checkSnippet(b64: string | undefined): GatewayError | undefined {
  try {
    decodeSnippet(b64);
    return undefined;
  } catch (e) {
    return e as GatewayError;
  }
}

export function formatIssue(formats: readonly string[], allowed: readonly string[], why: string) {
  const i = formats.findIndex((f) => !allowed.includes(f));
  return i < 0 ? undefined : invalidInput([{ path: `formats.${i}`, message: why }]);
}

/** A server-minted job id for `ref` (the vendor's id or ours), bound to the caller's account. */
export function mintHandle(
  ctx: HandlerContext,
  kind: string,
  ref: string,
  data: Record<string, unknown>,
): Promise<string> {
  return ctx.services.handles.mint(ctx.owner, kind, ref, data);
}

/**
 * The caller's own handle (or an accountless payer's bearer handle, tools/poll.ts), or 404: another account's
 * id is indistinguishable from a made-up one.
 */
export async function ownHandle(
  ctx: HandlerContext,
  kind: string,
  id: string,
  what: string,
): Promise<HandleRecord> {
  const rec = await pollableHandle(ctx, kind, id);
  if (!rec) {
    throw new GatewayError(
      'resource_not_found',
      `No ${what} with this id belongs to your account; nothing was charged.`,
    );
  }
  return rec;
}

export function expired(what: string): GatewayError {
  return new GatewayError(
    'resource_not_found',
    `This ${what} has expired (results are kept 24 hours); nothing was charged.`,
  );
}

/** Vendor-written fields (advisories, billing internals) are dropped from what callers get; see docs. */
const VENDOR_TEXT_FIELDS = ['warning', 'warnings', 'llmUsage', 'creditCost', 'creditsUsed', 'block'];

export function scrubPage(page: Record<string, unknown>): Record<string, unknown> {
  const out = { ...page };
  for (const f of VENDOR_TEXT_FIELDS) delete out[f];
  const meta = out.metadata;
  if (meta && typeof meta === 'object' && !Array.isArray(meta)) {
    const m = { ...(meta as Record<string, unknown>) };
    if (typeof m.error === 'string') m.error = 'The page could not be scraped.';
    out.metadata = m;
  }
  return out;
}

/** Our page formats (for the engine) from a caller's list, plus markdown when a model needs the text. */
export function pageFormats(formats: readonly string[], needText: boolean): PageFormat[] {
  const page = new Set<PageFormat>();
  for (const f of formats) {
    if (f === 'json' || f === 'summary' || f === 'changeTracking') continue;
    page.add(f as PageFormat);
  }
  if (needText) page.add('markdown');
  return [...page];
}

export function withoutUndefined<T extends Record<string, unknown>>(o: T): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

export const sleepMs = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
