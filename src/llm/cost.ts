// Money for per-token billing (the model router). Never a float for money:
// - token prices are integers in micro-USD per million tokens (the same number as pico-USD per token), so a
//   call's cost is an exact integer sum of products, computed in BigInt;
// - the upstream's decimal USD (price strings, `usage.cost` numbers) is read as decimal text, never through
//   float arithmetic;
// - rounding: a price is rounded UP to the pico-USD per token (never under-priced); `usage.cost` is first
//   rounded to the nearest pico-USD (that strips binary-float noise such as 0.30000000000000004), and a call's
//   total is rounded UP to the micro-USD, once per call.

export interface ModelPrice {
  /** micro-USD per 1,000,000 prompt tokens (= pico-USD per token). */
  promptPerM: number;
  /** micro-USD per 1,000,000 completion tokens; reasoning tokens are billed as completion tokens. */
  completionPerM: number;
  /** Flat micro-USD per request (a few models have one; usually 0). */
  requestMicros: number;
  /** micro-USD per input image (usually 0: images are then billed as prompt tokens). */
  imageMicros: number;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** The upstream's own cost of the call in micro-USD, when it reported one. */
  costMicros: number | undefined;
}

/** Prompt tokens assumed per input image for the hold (Claude ≈ 1,600 max, GPT-4o ≈ 1,100, Gemini 258). */
export const IMAGE_TOKEN_ALLOWANCE = 2_048;
/** Typical UTF-8 bytes per token, used only to estimate what a disconnected stream consumed. */
export const TYPICAL_BYTES_PER_TOKEN = 4;

const MILLION = 1_000_000n;
const DECIMAL = /^(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,3}))?$/;

/**
 * A non-negative decimal ("0.000003", "3e-6", 1.5e-7) as an integer count of 10^-scale units, rounded per
 * `mode` beyond that scale. Undefined for anything that is not a finite non-negative decimal (OpenRouter
 * marks variable prices with "-1"): such a price is unknown, never guessed.
 */
export function decimalToUnits(
  v: string | number,
  scale: number,
  mode: 'ceil' | 'nearest',
): bigint | undefined {
  if (typeof v === 'number' && (!Number.isFinite(v) || v < 0)) return undefined;
  const s = (typeof v === 'number' ? String(v) : v).trim();
  const m = DECIMAL.exec(s);
  if (!m || (m[1] === '' && (m[2] ?? '') === '')) return undefined;
  const frac = m[2] ?? '';
  const digits = BigInt(`${m[1] ?? ''}${frac}` || '0');
  const shift = Number(m[3] ?? '0') - frac.length + scale;
  if (shift >= 0) return digits * 10n ** BigInt(shift);
  const div = 10n ** BigInt(-shift);
  const q = digits / div;
  const r = digits % div;
  if (r === 0n) return q;
  if (mode === 'ceil') return q + 1n;
  return r * 2n >= div ? q + 1n : q;
}

function toSafe(n: bigint, what: string): number {
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`${what} out of range: ${n}`);
  return Number(n);
}

/** USD per token (the upstream listing's unit) → micro-USD per million tokens, rounded up. */
export function usdPerTokenToPerM(v: string | number): number | undefined {
  const n = decimalToUnits(v, 12, 'ceil');
  return n === undefined ? undefined : toSafe(n, 'price');
}

/** USD (a per-request or per-image fee) → micro-USD, rounded up. */
export function usdToMicrosCeil(v: string | number): number | undefined {
  const n = decimalToUnits(v, 6, 'ceil');
  return n === undefined ? undefined : toSafe(n, 'fee');
}

/** The upstream's reported cost in USD → micro-USD: nearest pico-USD first (float noise), then up. */
export function reportedCostToMicros(v: number | string): number | undefined {
  const picos = decimalToUnits(v, 12, 'nearest');
  if (picos === undefined) return undefined;
  return toSafe((picos + MILLION - 1n) / MILLION, 'cost');
}

/** Cost of a call from token counts: Σ tokens × price + the request fee, rounded up to the micro-USD. */
export function tokensCostMicros(
  price: ModelPrice,
  promptTokens: number,
  completionTokens: number,
  images = 0,
): number {
  const picos =
    BigInt(promptTokens) * BigInt(price.promptPerM) + BigInt(completionTokens) * BigInt(price.completionPerM);
  const micros = (picos + MILLION - 1n) / MILLION + BigInt(price.requestMicros + images * price.imageMicros);
  return toSafe(micros, 'cost');
}

/** What the prompt can cost at most: its size in bytes (see `promptBytes`) and its images. */
export interface PromptEstimate {
  /** UTF-8 bytes of the prompt's JSON (messages, tools, response format), images left out. */
  bytes: number;
  images: number;
}

/**
 * The worst case of one call, held before the upstream is called. Byte-level BPE and byte-fallback
 * tokenizers never emit more tokens than the text has UTF-8 bytes, and the JSON punctuation counted with it
 * covers the chat template's per-message tokens, so `bytes` bounds the prompt tokens from above; each image
 * adds a fixed allowance of tokens plus the model's per-image fee; the completion is at most `maxTokens`.
 */
export function worstCaseMicros(price: ModelPrice, prompt: PromptEstimate, maxTokens: number): number {
  return tokensCostMicros(
    price,
    prompt.bytes + prompt.images * IMAGE_TOKEN_ALLOWANCE,
    maxTokens,
    prompt.images,
  );
}

/** The actual cost from the upstream's usage: its reported cost when given, else tokens × price. */
export function usageCostMicros(
  price: ModelPrice,
  usage: Usage,
  images: number,
): { micros: number; source: 'upstream_cost' | 'tokens_x_price' } {
  if (usage.costMicros !== undefined) return { micros: usage.costMicros, source: 'upstream_cost' };
  return {
    micros: tokensCostMicros(price, usage.promptTokens, usage.completionTokens, images),
    source: 'tokens_x_price',
  };
}

/** Tokens estimated from bytes at the typical ratio (for streams cut short before the usage chunk). */
export function typicalTokens(bytes: number): number {
  return Math.ceil(bytes / TYPICAL_BYTES_PER_TOKEN);
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/**
 * Reads an OpenAI-style `usage` object (OpenRouter adds `cost`, USD). Undefined when the token counts are
 * missing or malformed: the caller then estimates instead of trusting a half-read record.
 */
export function readUsage(u: unknown): Usage | undefined {
  if (u === null || typeof u !== 'object') return undefined;
  const o = u as Record<string, unknown>;
  if (!isCount(o.prompt_tokens) || !isCount(o.completion_tokens)) return undefined;
  const cost =
    typeof o.cost === 'number' || typeof o.cost === 'string' ? reportedCostToMicros(o.cost) : undefined;
  return { promptTokens: o.prompt_tokens, completionTokens: o.completion_tokens, costMicros: cost };
}

/** An integer count of millionths as decimal text ("0.10", "3.00", "0.0375"): micro-USD → USD, or micro-USD
 * per million tokens → USD per million tokens. Exact, no float. */
export function millionthsToDecimal(n: number): string {
  const whole = Math.floor(n / 1_000_000);
  const frac = String(n % 1_000_000)
    .padStart(6, '0')
    .replace(/0+$/, '')
    .padEnd(2, '0');
  return `${whole}.${frac}`;
}
