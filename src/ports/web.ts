// Server-side fetching of callers' URLs, always through the SSRF guard (implemented in src/upstreams:
// web-fetch.ts for pages, safe-download.ts for binary downloads).

export interface FetchedPage {
  /** Final URL after redirects. */
  url: string;
  status: number;
  contentType: string;
  /** Decoded text body (charset from the header or the document). */
  body: string;
  bytes: number;
}

export interface WebFetchOptions {
  signal: AbortSignal;
  timeoutMs?: number;
  maxBytes?: number;
  headers?: Record<string, string>;
  cookies?: string;
}

export interface WebFetcher {
  fetchPage(url: string, opts: WebFetchOptions): Promise<FetchedPage>;
}

export interface Download {
  /** Final URL after redirects. */
  url: string;
  contentType: string | undefined;
  /** Declared length, when the server sent one (already checked against maxBytes). */
  contentLength: number | undefined;
  contentDisposition: string | undefined;
  /** The body, streamed; reading past maxBytes throws payload_too_large. */
  body: AsyncIterable<Uint8Array>;
  /** Releases the connection when the body will not be read to the end. */
  cancel(): void;
}

export interface Downloader {
  open(url: string, opts: { signal: AbortSignal; maxBytes: number; timeoutMs?: number }): Promise<Download>;
}
