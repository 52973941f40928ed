import type { Logger } from 'pino';
import { GatewayError } from '../errors.js';
import type { Clock } from '../lib/clock.js';
import { type ModelPrice, usdPerTokenToPerM, usdToMicrosCeil } from './cost.js';
import { generatesMedia } from './request.js';

// The model router's price list: the upstream's model listing (OpenRouter: USD per token as decimal strings),
// loaded once, refreshed on an interval, with operator overrides on top. A model with no known price is never
// billed at a guess: it is simply not servable.

export interface ModelInfo {
  id: string;
  created: number | undefined;
  price: ModelPrice | undefined;
  /** Outputs images, audio or video: refused (docs/spec.md §4.9 rule 6). */
  generatesMedia: boolean;
  /** `override`: the operator set its token prices; calls are billed tokens × these prices. */
  source: 'upstream' | 'override';
}

/** Operator override, micro-USD per million tokens. */
export interface PriceOverride {
  promptPerM: number;
  completionPerM: number;
}

export interface PriceCatalogOptions {
  listModels(signal: AbortSignal): Promise<unknown>;
  overrides: Record<string, PriceOverride>;
  refreshMs: number;
  clock: Clock;
  log: Logger;
}

/** After a failed load, requests fail fast for this long instead of each retrying the listing. */
const RETRY_AFTER_FAILURE_MS = 5_000;

export class PriceCatalog {
  private models = new Map<string, ModelInfo>();
  private loadedAt: number | undefined;
  private inflight: Promise<void> | undefined;
  private lastFailure: { at: number; error: GatewayError } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly stopped = new AbortController();

  constructor(private readonly opts: PriceCatalogOptions) {
    this.models = merge(new Map(), opts.overrides);
  }

  /** When the listing was last loaded (ms), or undefined if never. */
  get updatedAt(): number | undefined {
    return this.loadedAt;
  }

  /** Waits for the first successful load; throws 503 while the listing cannot be had. */
  async ensureLoaded(): Promise<void> {
    if (this.loadedAt !== undefined) return;
    const f = this.lastFailure;
    if (f && this.opts.clock.now() - f.at < RETRY_AFTER_FAILURE_MS && !this.inflight) throw f.error;
    await this.refresh();
  }

  /** Reloads the listing (one load at a time); on failure the previous prices stay in use. */
  refresh(): Promise<void> {
    this.inflight ??= this.load().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async load(): Promise<void> {
    try {
      const listing = parseListing(await this.opts.listModels(this.stopped.signal));
      this.models = merge(listing, this.opts.overrides);
      this.loadedAt = this.opts.clock.now();
      this.lastFailure = undefined;
    } catch (e) {
      const error =
        e instanceof GatewayError
          ? e
          : new GatewayError(
              'upstream_unavailable',
              'The model price list could not be read; retry shortly.',
              {
                cause: e,
                retryAfterSeconds: 5,
              },
            );
      this.lastFailure = { at: this.opts.clock.now(), error };
      this.opts.log.warn(
        { err: error.cause ?? e },
        'model price list refresh failed; keeping previous prices',
      );
      throw error;
    }
  }

  lookup(id: string): ModelInfo | undefined {
    return this.models.get(id);
  }

  all(): ModelInfo[] {
    return [...this.models.values()];
  }

  start(): void {
    this.timer = setInterval(() => {
      this.refresh().catch(() => undefined);
    }, this.opts.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.stopped.abort();
  }
}

/** Reads an OpenRouter-style listing; entries that cannot be read are left out, unpriced ones kept unpriced. */
export function parseListing(raw: unknown): Map<string, ModelInfo> {
  const data = (raw as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw new Error('model listing without a data array');
  const out = new Map<string, ModelInfo>();
  for (const m of data as Array<Record<string, unknown> | null>) {
    if (m === null || typeof m !== 'object' || typeof m.id !== 'string' || m.id === '') continue;
    const arch = m.architecture as { output_modalities?: unknown } | undefined;
    const outputs = Array.isArray(arch?.output_modalities)
      ? (arch.output_modalities as unknown[]).filter((x): x is string => typeof x === 'string')
      : undefined;
    out.set(m.id, {
      id: m.id,
      created: typeof m.created === 'number' ? m.created : undefined,
      price: readPrice(m.pricing),
      generatesMedia: generatesMedia(outputs),
      source: 'upstream',
    });
  }
  return out;
}

type PriceField = string | number | undefined;

function readPrice(p: unknown): ModelPrice | undefined {
  if (p === null || typeof p !== 'object') return undefined;
  const o = p as Record<string, PriceField>;
  if (o.prompt === undefined || o.completion === undefined) return undefined;
  const prompt = usdPerTokenToPerM(o.prompt);
  const completion = usdPerTokenToPerM(o.completion);
  const reasoning = o.internal_reasoning === undefined ? 0 : usdPerTokenToPerM(o.internal_reasoning);
  const request = o.request === undefined ? 0 : usdToMicrosCeil(o.request);
  const image = o.image === undefined ? 0 : usdToMicrosCeil(o.image);
  // Any part unknown (OpenRouter's "-1" marks a variable price) makes the whole price unknown.
  if (
    prompt === undefined ||
    completion === undefined ||
    reasoning === undefined ||
    request === undefined ||
    image === undefined
  ) {
    return undefined;
  }
  // Reasoning tokens are counted as completion tokens; a dearer reasoning price is held and billed for all.
  return {
    promptPerM: prompt,
    completionPerM: Math.max(completion, reasoning),
    requestMicros: request,
    imageMicros: image,
  };
}

function merge(
  listing: Map<string, ModelInfo>,
  overrides: Record<string, PriceOverride>,
): Map<string, ModelInfo> {
  const out = new Map(listing);
  for (const [id, o] of Object.entries(overrides)) {
    const listed = listing.get(id);
    out.set(id, {
      id,
      created: listed?.created,
      // Fees from the listing stay: the upstream charges them whatever the operator's token prices are.
      price: {
        promptPerM: o.promptPerM,
        completionPerM: o.completionPerM,
        requestMicros: listed?.price?.requestMicros ?? 0,
        imageMicros: listed?.price?.imageMicros ?? 0,
      },
      generatesMedia: listed?.generatesMedia ?? false,
      source: 'override',
    });
  }
  return out;
}
