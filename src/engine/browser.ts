import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Browser, BrowserContext, Route } from 'playwright-core';
import { GatewayError, invalidInput, notConfigured } from '../errors.js';
import { SsrfRefusal } from '../upstreams/ssrf-guard.js';
import type { GuardedFetcher } from '../upstreams/web-fetch.js';
import { Semaphore } from './limit.js';

// Headless Chromium (Debian's package) driven by playwright-core: launched lazily, one browser reused, a fresh
// context per render, closed on shutdown. Every request the page makes is intercepted and performed by the
// SSRF-guarded fetcher (so the browser never connects anywhere itself); as a second wall, Chromium is pointed
// at a proxy address where nothing listens, with loopback no longer exempt, so a request that escaped
// interception (a WebSocket, a prefetch) cannot reach anything.

const MAX_REDIRECTS = 5;

/**
 * Headless Chromium as root on a closed network: without the background-networking flags it floods the network
 * with connections that are refused. Shared with the tests that drive Chromium themselves.
 */
export const HEADLESS_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

const ARGS = [
  ...HEADLESS_ARGS,
  '--proxy-server=http://127.0.0.1:9',
  '--proxy-bypass-list=<-loopback>',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
];

export interface BrowserOptions {
  executablePath: string;
  /** Pages rendered at once. */
  concurrency: number;
  fetcher: GuardedFetcher;
  userAgent: string;
  log: Logger;
}

export interface RenderRequest {
  url: string;
  signal: AbortSignal;
  timeoutMs: number;
  waitForMs?: number | undefined;
  waitForSelector?: string | undefined;
  /** JavaScript source (already base64-decoded) run in the page after load. */
  jsSnippet?: string | undefined;
  /** Playwright resource types not to load: image, media, font, stylesheet, script, xhr, fetch, … */
  blockResources?: readonly string[] | undefined;
  cookies?: string | undefined;
  screenshot?: 'viewport' | 'fullPage' | undefined;
}

export interface RenderResult {
  /** Final URL after redirects. */
  url: string;
  status: number;
  contentType: string;
  /** The DOM after scripts ran, serialized. */
  html: string;
  /** The main document as the server sent it. */
  source: string;
  /** PNG, base64. */
  screenshot?: string;
}

export class BrowserPool {
  private browser: Promise<Browser> | undefined;
  private readonly slots: Semaphore;
  private closed = false;

  constructor(private readonly opts: BrowserOptions) {
    this.slots = new Semaphore(opts.concurrency);
  }

  /** Whether a browser binary is installed (checked on disk; a failed launch is reported per call). */
  available(): boolean {
    return existsSync(this.opts.executablePath);
  }

  private launch(): Promise<Browser> {
    if (!this.browser) {
      // playwright-core is loaded on the first render only: it is ~45 MB of a gateway that may never render.
      const launching = import('playwright-core')
        .then(({ chromium }) =>
          chromium.launch({
            executablePath: this.opts.executablePath,
            args: ARGS,
            timeout: 30_000,
            handleSIGINT: false,
            handleSIGTERM: false,
            handleSIGHUP: false,
          }),
        )
        .then((b) => {
          b.on('disconnected', () => {
            if (this.browser === launching) this.browser = undefined;
          });
          return b;
        });
      launching.catch((err) => {
        this.opts.log.error({ err, path: this.opts.executablePath }, 'chromium failed to launch');
        if (this.browser === launching) this.browser = undefined;
      });
      this.browser = launching;
    }
    return this.browser;
  }

  async render(req: RenderRequest): Promise<RenderResult> {
    if (this.closed)
      throw new GatewayError('shutting_down', 'The gateway is shutting down; nothing was charged.');
    if (!this.available()) throw browserMissing();
    const deadline = Date.now() + req.timeoutMs;
    const release = await this.slots.acquire(req.signal);
    let context: BrowserContext | undefined;
    const onAbort = () => void context?.close().catch(() => undefined);
    req.signal.addEventListener('abort', onAbort, { once: true });
    try {
      let browser: Browser;
      try {
        browser = await this.launch();
      } catch {
        throw browserMissing();
      }
      context = await browser.newContext({
        serviceWorkers: 'block',
        userAgent: this.opts.userAgent,
        viewport: { width: 1280, height: 800 },
        acceptDownloads: false,
      });
      if (req.signal.aborted) throw req.signal.reason;
      return await this.drive(context, req, deadline);
    } catch (e) {
      if (req.signal.aborted) throw req.signal.reason;
      throw e;
    } finally {
      req.signal.removeEventListener('abort', onAbort);
      await context?.close().catch(() => undefined);
      release();
    }
  }

  private async drive(context: BrowserContext, req: RenderRequest, deadline: number): Promise<RenderResult> {
    const left = () => Math.max(1, deadline - Date.now());
    const blocked = new Set(req.blockResources ?? []);
    let refusal: GatewayError | undefined;
    let source = '';
    let contentType = '';
    /** Where the main document redirected to: followed by navigating again (see below). */
    let redirectTo: string | undefined;
    if (req.cookies) await context.addCookies(parseCookies(req.cookies, req.url));
    await context.routeWebSocket(/.*/, (ws) => ws.close({ code: 1008, reason: 'not allowed' }));
    await context.route('**/*', async (route: Route) => {
      const r = route.request();
      const isMainDoc = r.isNavigationRequest() && r.frame() === r.frame().page().mainFrame();
      if (blocked.has(r.resourceType()) && !isMainDoc) return route.abort('blockedbyclient');
      try {
        // Chromium follows a redirect answered here without intercepting the next request (it would go to
        // the dead proxy), so redirects are followed on this side: subresources in forward(), the main
        // document by navigating again, every hop checked by the guard.
        const res = await this.opts.fetcher.forward({
          url: r.url(),
          method: r.method(),
          headers: await r.allHeaders(),
          body: r.postDataBuffer() ?? undefined,
          signal: req.signal,
          timeoutMs: left(),
          followRedirects: !isMainDoc,
        });
        if (isMainDoc && res.status >= 300 && res.status < 400 && res.headers.location) {
          redirectTo = new URL(res.headers.location, r.url()).toString();
          await route.fulfill({ status: 200, contentType: 'text/html', body: '' });
          return;
        }
        if (isMainDoc) {
          source = res.body.toString('utf8');
          contentType = res.headers['content-type'] ?? '';
        }
        await route.fulfill({ status: res.status, headers: res.headers, body: res.body });
      } catch (e) {
        const ssrf = e instanceof SsrfRefusal || (e instanceof GatewayError && e.code === 'invalid_input');
        if (isMainDoc && e instanceof GatewayError) refusal = e;
        if (ssrf) this.opts.log.info({ url: r.url() }, 'browser request refused by the SSRF guard');
        await route.abort(ssrf ? 'blockedbyclient' : 'failed').catch(() => undefined);
      }
    });

    const page = await context.newPage();
    let response: Awaited<ReturnType<typeof page.goto>>;
    try {
      response = await page.goto(req.url, { waitUntil: 'load', timeout: left() });
      for (let hop = 0; redirectTo !== undefined; hop++) {
        if (hop >= MAX_REDIRECTS) {
          throw new GatewayError(
            'upstream_rejected',
            `More than ${MAX_REDIRECTS} redirects from ${req.url}; nothing was charged.`,
          );
        }
        const next: string = redirectTo;
        redirectTo = undefined;
        response = await page.goto(next, { waitUntil: 'load', timeout: left() });
      }
    } catch (e) {
      if (e instanceof GatewayError) throw e;
      if (refusal) throw refusal;
      if (isTimeout(e)) throw pageTimeout(req.url);
      throw new GatewayError(
        'upstream_error',
        `The browser could not load ${req.url}; nothing was charged.`,
        {
          cause: e,
        },
      );
    }
    // Pages that fetch their content after `load`: give the network a moment to settle, without failing.
    await page.waitForLoadState('networkidle', { timeout: Math.min(3_000, left()) }).catch(() => undefined);
    if (req.waitForSelector) {
      try {
        await page.waitForSelector(req.waitForSelector, { state: 'attached', timeout: left() });
      } catch (e) {
        if (isTimeout(e)) {
          throw new GatewayError(
            'upstream_rejected',
            `The selector ${JSON.stringify(req.waitForSelector)} never appeared on the page; nothing was charged.`,
          );
        }
        throw invalidInput([{ path: 'wait_for_selector', message: 'not a valid CSS selector' }]);
      }
    }
    if (req.waitForMs) await page.waitForTimeout(Math.min(req.waitForMs, left()));
    if (req.jsSnippet) {
      try {
        await page.evaluate(req.jsSnippet);
      } catch (e) {
        throw new GatewayError(
          'upstream_rejected',
          'js_snippet threw an error in the page; nothing was charged.',
          {
            cause: e,
            details: { field: 'js_snippet' },
          },
        );
      }
    }
    const html = await page.content();
    const out: RenderResult = {
      url: page.url(),
      status: response?.status() ?? 200,
      contentType: contentType || 'text/html',
      html,
      source: source || html,
    };
    if (req.screenshot) {
      const png = await page.screenshot({
        type: 'png',
        fullPage: req.screenshot === 'fullPage',
        timeout: left(),
      });
      out.screenshot = png.toString('base64');
    }
    return out;
  }

  async close(): Promise<void> {
    this.closed = true;
    const b = this.browser;
    this.browser = undefined;
    if (b) await (await b.catch(() => undefined))?.close().catch(() => undefined);
  }
}

export function browserMissing(): GatewayError {
  return notConfigured('Browser rendering (headless Chromium)', [
    'TOLLGATE_CHROMIUM_PATH (or install chromium)',
  ]);
}

function isTimeout(e: unknown): boolean {
  return (e as { name?: string })?.name === 'TimeoutError';
}

function pageTimeout(url: string): GatewayError {
  return new GatewayError('upstream_timeout', `${url} did not finish loading in time; nothing was charged.`);
}

/** `a=1; b=2` → Playwright cookies for the URL's host. */
export function parseCookies(
  header: string,
  url: string,
): Array<{ name: string; value: string; url: string }> {
  const origin = new URL(url).origin;
  return header
    .split(';')
    .map((p) => p.trim())
    .filter((p) => p.includes('='))
    .map((p) => {
      const i = p.indexOf('=');
      return { name: p.slice(0, i).trim(), value: p.slice(i + 1).trim(), url: origin };
    })
    .filter((c) => c.name.length > 0);
}
