import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A fake OpenRouter (OpenAI-compatible) on 127.0.0.1:0, quirks included: a model listing with USD-per-token
// prices as strings, `usage.cost` in USD, SSE with `: OPENROUTER PROCESSING` comments, a final usage chunk with
// empty `choices`, `[DONE]`, errors before the first byte as HTTP errors, and errors after streaming began as
// a 200 SSE event carrying `error` and `finish_reason: "error"`.

export interface FakeModel {
  id: string;
  /** USD per token, as OpenRouter writes them ("0.000003"); "-1" marks a variable price. */
  prompt: string;
  completion: string;
  request?: string;
  image?: string;
  outputModalities?: string[];
}

/** How the fake answers chat completions for one model. */
export interface Scenario {
  /** Answer this HTTP status with an OpenRouter error body, before any byte of a completion. */
  status?: number;
  retryAfter?: string;
  /** Non-streaming: wait this long before the response head. */
  headersDelayMs?: number;
  /** Streaming: the head goes out at once, then keep-alive comments until the first chunk after this long. */
  firstChunkDelayMs?: number;
  /** The answer, streamed in `chunks` pieces. */
  text?: string;
  chunks?: number;
  chunkDelayMs?: number;
  /** Streaming: a `: OPENROUTER PROCESSING` comment between chunks. */
  commentsBetween?: boolean;
  promptTokens?: number;
  completionTokens?: number;
  /** `usage.cost` in USD; null leaves it out (tokens × price then applies). Default: computed from prices. */
  cost?: number | null;
  /** Send no usage at all. */
  omitUsage?: boolean;
  /** Streaming: after this many content chunks, fail with an in-band error event. */
  midStreamErrorAfter?: number;
  /** Streaming: after this many content chunks, end the response (no finish, no usage, no `[DONE]`). */
  cutAfter?: number;
  /** Streaming: end after the finish and usage chunks without `data: [DONE]`. */
  noDone?: boolean;
  /** Non-streaming: HTTP 200 whose body is an error object with this code. */
  errorInBody?: number;
  /** Served model name reported back (default: the requested slug). */
  servedAs?: string;
}

export interface RecordedRequest {
  model: string;
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
  /** The client (the gateway) closed the connection before the fake finished answering. */
  aborted: boolean;
  finished: boolean;
}

export interface FakeOpenRouter {
  /** Base URL as TOLLGATE_LLM_BASE_URL expects it (…/api/v1). */
  url: string;
  apiKey: string;
  requests: RecordedRequest[];
  listings: number;
  models: FakeModel[];
  scenario(model: string, s: Scenario): void;
  /** Forgets scenarios and recorded requests. */
  reset(): void;
  /** Resolves when a chat request for `model` has been closed (finished or aborted). */
  closed(model: string): Promise<RecordedRequest>;
  failListing: boolean;
  close(): Promise<void>;
}

export const FAKE_KEY = 'sk-or-v1-fake';

export async function startFakeOpenRouter(models: FakeModel[]): Promise<FakeOpenRouter> {
  const scenarios = new Map<string, Scenario>();
  const waiters: Array<{ model: string; resolve: (r: RecordedRequest) => void }> = [];
  const fake: FakeOpenRouter = {
    url: '',
    apiKey: FAKE_KEY,
    requests: [],
    listings: 0,
    models,
    failListing: false,
    scenario: (m, s) => scenarios.set(m, s),
    reset: () => {
      scenarios.clear();
      fake.requests.length = 0;
      fake.failListing = false;
    },
    closed: (model) => new Promise((resolve) => waiters.push({ model, resolve })),
    close: async () => undefined,
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method === 'GET' && path === '/api/v1/models') {
      fake.listings++;
      if (fake.failListing) return sendError(res, 503, 'listing unavailable');
      const all = new URL(req.url ?? '/', 'http://x').searchParams.get('output_modalities') === 'all';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: models.filter((m) => all || !isMedia(m)).map(listing) }));
      return;
    }
    if (req.method !== 'POST' || path !== '/api/v1/chat/completions') return sendError(res, 404, 'Not Found');
    if (req.headers.authorization !== `Bearer ${FAKE_KEY}`)
      return sendError(res, 401, 'No auth credentials found');
    const body = JSON.parse(await readBody(req)) as Record<string, unknown>;
    const model = String(body.model);
    const rec: RecordedRequest = { model, body, headers: req.headers, aborted: false, finished: false };
    fake.requests.push(rec);
    res.on('close', () => {
      rec.aborted = !res.writableFinished;
      rec.finished = res.writableFinished;
      for (let i = waiters.length - 1; i >= 0; i--) {
        const w = waiters[i];
        if (w && w.model === model) {
          waiters.splice(i, 1);
          w.resolve(rec);
        }
      }
    });
    const m = models.find((x) => x.id === model);
    if (!m) return sendError(res, 400, `${model} is not a valid model ID`);
    const s = scenarios.get(model) ?? {};
    if (s.status) return sendError(res, s.status, `scripted failure ${s.status}`, s.retryAfter);
    if (body.stream === true) return stream(res, m, s, body);
    if (s.headersDelayMs) await sleep(s.headersDelayMs);
    if (res.destroyed) return;
    if (s.errorInBody) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: s.errorInBody, message: 'Provider returned error' } }));
      return;
    }
    const text = s.text ?? `Hello from ${model}`;
    const out: Record<string, unknown> = {
      id: 'gen-1',
      provider: 'FakeProvider',
      model: s.servedAs ?? model,
      object: 'chat.completion',
      created: 1_700_000_000,
      choices: [
        {
          index: 0,
          finish_reason: 'stop',
          native_finish_reason: 'stop',
          message: { role: 'assistant', content: text },
        },
      ],
    };
    if (!s.omitUsage) out.usage = usage(m, s, text);
    res.writeHead(200, { 'content-type': 'application/json', 'x-generation-id': 'gen-1' });
    res.end(JSON.stringify(out));
  }

  async function stream(res: ServerResponse, m: FakeModel, s: Scenario, body: Record<string, unknown>) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(': OPENROUTER PROCESSING\n\n');
    if (s.firstChunkDelayMs) {
      const until = Date.now() + s.firstChunkDelayMs;
      while (Date.now() < until && !res.destroyed) {
        await sleep(Math.min(50, until - Date.now()));
        if (!res.destroyed) res.write(': OPENROUTER PROCESSING\n\n');
      }
    }
    const text = s.text ?? `Hello from ${m.id}`;
    const n = Math.max(1, s.chunks ?? 3);
    const size = Math.ceil(text.length / n);
    const base = {
      id: 'gen-1',
      provider: 'FakeProvider',
      model: s.servedAs ?? m.id,
      object: 'chat.completion.chunk',
      created: 1,
    };
    const send = (o: unknown) => !res.destroyed && res.write(`data: ${JSON.stringify(o)}\n\n`);
    for (let i = 0; i < n; i++) {
      if (res.destroyed) return;
      if (s.midStreamErrorAfter !== undefined && i === s.midStreamErrorAfter) {
        send({
          ...base,
          error: { code: 502, message: 'Provider disconnected' },
          choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }],
        });
        res.end();
        return;
      }
      if (s.cutAfter !== undefined && i === s.cutAfter) {
        res.end();
        return;
      }
      const delta: Record<string, unknown> = { content: text.slice(i * size, (i + 1) * size) };
      if (i === 0) delta.role = 'assistant';
      send({ ...base, choices: [{ index: 0, delta, finish_reason: null, native_finish_reason: null }] });
      if (s.commentsBetween && !res.destroyed) res.write(': OPENROUTER PROCESSING\n\n');
      if (s.chunkDelayMs) await sleep(s.chunkDelayMs);
    }
    send({
      ...base,
      choices: [{ index: 0, delta: {}, finish_reason: 'stop', native_finish_reason: 'stop' }],
    });
    const wantsUsage =
      (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    if (wantsUsage && !s.omitUsage) send({ ...base, choices: [], usage: usage(m, s, text) });
    if (!res.destroyed) res.end(s.noDone ? undefined : 'data: [DONE]\n\n');
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  fake.url = `http://127.0.0.1:${port}/api/v1`;
  fake.close = () =>
    new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return fake;
}

function isMedia(m: FakeModel): boolean {
  return (m.outputModalities ?? ['text']).some((x) => x !== 'text');
}

function listing(m: FakeModel) {
  return {
    id: m.id,
    canonical_slug: m.id,
    name: m.id,
    created: 1_700_000_000,
    context_length: 128_000,
    architecture: { input_modalities: ['text'], output_modalities: m.outputModalities ?? ['text'] },
    pricing: {
      prompt: m.prompt,
      completion: m.completion,
      request: m.request ?? '0',
      image: m.image ?? '0',
      web_search: '0',
      internal_reasoning: '0',
    },
    top_provider: { context_length: 128_000, max_completion_tokens: 16_384, is_moderated: false },
    per_request_limits: null,
    supported_parameters: ['max_tokens', 'temperature'],
  };
}

function usage(m: FakeModel, s: Scenario, text: string) {
  const prompt = s.promptTokens ?? 10;
  const completion = s.completionTokens ?? Math.max(1, Math.ceil(text.length / 4));
  const u: Record<string, unknown> = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
  // OpenRouter computes its cost in floating point; so does the fake.
  if (s.cost !== null) u.cost = s.cost ?? prompt * Number(m.prompt) + completion * Number(m.completion);
  return u;
}

function sendError(res: ServerResponse, status: number, message: string, retryAfter?: string): void {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (retryAfter) headers['retry-after'] = retryAfter;
  res.writeHead(status, headers);
  res.end(JSON.stringify({ error: { code: status, message } }));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The models most router tests use. Prices are USD per token: cheap-a is 0.10/0.40 USD per million tokens;
 * cheap-pricey (1/4) is above the default cheap ceiling (0.30/1.20); flat has prompt 0 and completion 1 USD/M,
 * so its hold is exactly max_tokens micro-USD.
 */
export const TEST_MODELS: FakeModel[] = [
  { id: 'test/cheap-a', prompt: '0.0000001', completion: '0.0000004' },
  { id: 'test/cheap-pricey', prompt: '0.000001', completion: '0.000004' },
  { id: 'test/cheap-b', prompt: '0.0000002', completion: '0.0000008' },
  { id: 'test/best-a', prompt: '0.000003', completion: '0.000015' },
  { id: 'test/flat', prompt: '0', completion: '0.000001' },
  { id: 'test/fee', prompt: '0.0000001', completion: '0.0000004', request: '0.001' },
  { id: 'test/unpriced', prompt: '-1', completion: '-1' },
  { id: 'test/override', prompt: '0.0000001', completion: '0.0000004' },
  { id: 'test/image-gen', prompt: '0.0000003', completion: '0.0000025', outputModalities: ['image', 'text'] },
];

/**
 * Gateway env for a fake: cheap = a, pricey (above the ceiling), b, missing; mid = flat; best = best-a; the
 * operator prices test/override at 2/4 USD per million tokens.
 */
export function llmEnv(fake: FakeOpenRouter, extra: Record<string, string> = {}): Record<string, string> {
  return {
    TOLLGATE_LLM_API_KEY: fake.apiKey,
    TOLLGATE_LLM_BASE_URL: fake.url,
    TOLLGATE_LLM_TIER_CHEAP: 'test/cheap-a,test/cheap-pricey,test/cheap-b,test/missing',
    TOLLGATE_LLM_TIER_MID: 'test/flat',
    TOLLGATE_LLM_TIER_BEST: 'test/best-a',
    TOLLGATE_LLM_PRICE_OVERRIDES: 'test/override=2/4',
    TOLLGATE_RATE_LIMIT_PER_SECOND: '0',
    ...extra,
  };
}
