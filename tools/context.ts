import type { Logger } from 'pino';

// What a handler is given. Handlers never see money or credentials: vendor clients carry their own keys,
// and the only account access is a read-only view of the caller's own account.

export interface HandlerContext {
  /** Aborted on client cancellation, timeout or shutdown; pass it to every upstream call. */
  signal: AbortSignal;
  now(): number;
  /** Opaque id of the account the call belongs to; binds server-minted handles (crawl ids, render ids). */
  owner: string;
  /** This call's transaction id (for evidence that cites it). */
  transactionId: string;
  log: Logger;
  /** Reports progress while a call blocks; the MCP door forwards it when the client asked for it. */
  progress(progress: number, total?: number, message?: string): void;
  account: AccountView;
  services: Services;
}

export interface AccountView {
  balance(): Promise<{ balance_micros: number; held_micros: number; available_micros: number }>;
  transactions(limit: number): Promise<TransactionView[]>;
}

export type TransactionView = {
  id: string;
  created_at: string;
  action: string;
  status: 'pending' | 'succeeded' | 'failed';
  price_cents: number;
  charged_cents: number;
  charged_micros: number;
  payment_method: string;
  provider: string | null;
  idempotency_key: string | null;
  duration_ms: number | null;
  error_code: string | null;
  meta: Record<string, unknown> | null;
};

/**
 * Infrastructure injected by the composition root (src/main.ts). Each member is optional where it depends on
 * operator configuration; handlers answer `not_configured` when what they need is absent.
 */
export interface Services {
  publicUrl: string;
  vendors: VendorClients;
  /** Server-side fetch of a caller's URL through the SSRF guard. */
  web: WebFetcher;
  /** Server-minted handles bound to an owner (crawl ids, render ids, …). */
  handles: HandleStore;
  /** The model router's upstream for internal use (extraction, summaries); absent without TOLLGATE_LLM_API_KEY. */
  llm?: LlmService;
}

export type LlmTier = 'platform/cheap' | 'platform/mid' | 'platform/best';

export interface LlmMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * One-shot completions used inside actions (scraper extraction, summaries). Their cost is the gateway's own,
 * included in the action's flat price; the caller is not billed per token for them.
 */
export interface LlmService {
  complete(req: {
    tier: LlmTier;
    messages: LlmMessage[];
    /** When set, the answer must be JSON matching this schema; `json` holds it parsed and validated. */
    jsonSchema?: Record<string, unknown>;
    maxTokens?: number;
    signal: AbortSignal;
  }): Promise<{
    text: string;
    json?: unknown;
    model: string;
    usage: { prompt_tokens: number; completion_tokens: number };
    costMicros: number;
  }>;
}

// Each vendor adapter adds its (optional) client here as it lands.
// biome-ignore lint/complexity/noBannedTypes: filled in by the vendor adapters
export type VendorClients = {};

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

export interface HandleRecord {
  handle: string;
  owner: string;
  kind: string;
  ref: string;
  data: Record<string, unknown>;
  created_at: number;
}

export interface HandleStore {
  /** Mints a new handle for `owner` pointing at an upstream (or local) reference. */
  mint(owner: string, kind: string, ref: string, data?: Record<string, unknown>): Promise<string>;
  /** The handle's record if it exists *and belongs to owner*; another account's handle is not found. */
  resolve(owner: string, kind: string, handle: string): Promise<HandleRecord | undefined>;
  update(handle: string, data: Record<string, unknown>): Promise<void>;
}
