// URL identity for crawling and mapping: two spellings of one page must dedupe to one entry.

/** Absolute http(s) URL without fragment, default port or empty query; undefined if not http(s). */
export function normalizeUrl(raw: string, base?: string): string | undefined {
  let u: URL;
  try {
    u = new URL(raw, base);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  u.hash = '';
  // `a?` and `a` are one page: an empty query string is dropped (reading `search` gives '' for both).
  if (u.search === '') u.search = '';
  return u.toString();
}

/** Host without a leading `www.`: `example.com` and `www.example.com` are one site. */
export function siteOf(url: string): string {
  const host = new URL(url).hostname.toLowerCase();
  return host.startsWith('www.') ? host.slice(4) : host;
}

export function sameSite(url: string, site: string): boolean {
  try {
    return siteOf(url) === site;
  } catch {
    return false;
  }
}

/** scheme://host:port of a URL: the unit robots.txt and politeness apply to. */
export function originOf(url: string): string {
  return new URL(url).origin;
}
