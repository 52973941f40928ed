import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Response, Router } from 'express';
import type { Logger } from 'pino';
import type { Authenticator } from '../../auth/authenticator.js';
import type { Principal } from '../../auth/principal.js';
import { GatewayError, notConfigured, toGatewayError } from '../errors.js';
import { type JsonBodyOptions, readJsonBody } from '../lib/json-body.js';
import { DEFAULT_JSON_LIMITS } from '../lib/json-limits.js';
import { trackRequest } from '../lib/request-log.js';
import { stages } from '../lib/stage-timing.js';
import { encodeChallenge, encodeReceipt } from '../run/x402/codec.js';
import type { ChatRunner } from './chat.js';
import { sendOpenAiError, sseErrorEvent, writeJson } from './openai-errors.js';
import type { LlmRouter } from './router.js';
import type { ChatStreamSink, MeteredDeps } from './types.js';
import { memoByLoad, modelsView, pricingView } from './views.js';

// The model router door at /api/llm/v1 (docs/spec.md §4.9): OpenAI wire format in and out, errors as OpenAI-style
// bodies. It only translates HTTP; ./chat.ts decides prices, holds and charges on the money lifecycle.

export const LLM_BASE = '/api/llm/v1';

export interface LlmRoutesDeps {
  auth: Authenticator;
  log: Logger;
  /**
   * Absent without TOLLGATE_LLM_API_KEY: every route then answers 503 not_configured. `run` is ./chat.ts's
   * runChatCompletion, handed in by the composition root, which loads it (and the router) only when configured.
   */
  llm: { metered: MeteredDeps; router: LlmRouter; run: ChatRunner } | undefined;
  maxBodyBytes: number;
}

export interface LlmRoutes {
  /** The free listings and the 404/405s, on express. */
  router: Router;
  /**
   * `POST /api/llm/v1/chat/completions`, served straight from node:http (its time to first byte is what an agent
   * waits for); false for any other request.
   */
  hot(req: IncomingMessage, res: ServerResponse): boolean;
}

const CHAT_PATH = `${LLM_BASE}/chat/completions`;

export function llmRoutes(deps: LlmRoutesDeps): LlmRoutes {
  const r = Router();
  const bodyOpts: JsonBodyOptions = {
    maxBytes: deps.maxBodyBytes,
    limits: DEFAULT_JSON_LIMITS,
    empty: 'refuse',
  };
  const llm = deps.llm;
  const unconfigured = notConfigured('The model router', ['TOLLGATE_LLM_API_KEY']);
  const pricing =
    llm &&
    memoByLoad(llm.router.catalog, () =>
      pricingView(llm.router.catalog, llm.router.tiers, llm.metered.limits.dailyCapMicros),
    );
  const models = llm && memoByLoad(llm.router.catalog, () => modelsView(llm.router.catalog));

  // Free and public (docs/spec.md §4.9, §5): no credentials read. Without an upstream they still answer: no model is
  // servable, and the listing says why.
  r.get(`${LLM_BASE}/pricing`, async (_req, res) => {
    if (!llm || !pricing) return res.json(UNCONFIGURED_PRICING);
    if (await listingReady(llm.router, res)) res.json(pricing());
  });
  r.get(`${LLM_BASE}/models`, async (_req, res) => {
    if (!llm || !models) return res.json({ object: 'list', data: [] });
    if (await listingReady(llm.router, res)) res.json(models());
  });

  async function chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const timer = stages();
    if (timer) {
      timer.start();
      res.once('finish', () => timer.finish('the stream, the capture'));
    }
    trackRequest(deps.log, req, res, CHAT_PATH);
    let principal: Principal;
    let body: unknown;
    try {
      principal = await deps.auth.fromAuthorization(req.headers.authorization);
      timer?.mark('HTTP in, auth');
      // After authentication: a bad key is a 401 whether or not the router is configured.
      if (!llm) throw unconfigured;
      body = await readJsonBody(req, bodyOpts);
      timer?.mark('body');
    } catch (e) {
      req.resume();
      return sendOpenAiError(res, toGatewayError(e));
    }
    // A client that hangs up aborts the upstream call; the metered path settles what it consumed.
    const gone = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const outcome = await llm.run(llm.metered, principal, body, {
      signal: gone.signal,
      sink: sseSink(res, gone.signal),
      payment: req.headers['payment-signature'],
      trace: req.headers,
    });
    if (outcome.streamed || res.headersSent || res.destroyed) return;
    if (!outcome.ok) {
      // x402 (accountless, `upto`): the challenge in PAYMENT-REQUIRED, mirrored as the body (docs/spec.md §7).
      if (outcome.paymentResponse) res.setHeader('PAYMENT-RESPONSE', encodeReceipt(outcome.paymentResponse));
      if (outcome.paymentRequired) {
        res.setHeader('PAYMENT-REQUIRED', encodeChallenge(outcome.paymentRequired));
        res.setHeader('Cache-Control', 'no-store');
        res.setHeader('Access-Control-Expose-Headers', 'PAYMENT-REQUIRED, PAYMENT-RESPONSE');
        return writeJson(res, 402, outcome.paymentRequired);
      }
      return sendOpenAiError(res, outcome.error);
    }
    for (const [k, v] of Object.entries(outcome.headers)) res.setHeader(k, v);
    writeJson(res, 200, outcome.body);
  }

  function hot(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method !== 'POST' || req.url !== CHAT_PATH) return false;
    chat(req, res).catch((err: unknown) => {
      deps.log.error({ err }, 'chat completion failed');
      if (!res.headersSent)
        sendOpenAiError(res, new GatewayError('internal', 'The gateway hit an internal error.'));
    });
    return true;
  }

  r.use(LLM_BASE, (req, res) => {
    const known = ['/chat/completions', '/pricing', '/models'].includes(req.path);
    const method = req.path === '/chat/completions' ? 'POST' : 'GET';
    if (known) res.setHeader('Allow', method);
    sendOpenAiError(
      res,
      known
        ? new GatewayError('method_not_allowed', `Use ${method} ${LLM_BASE}${req.path}.`)
        : new GatewayError(
            'not_found',
            `No route ${req.method} ${LLM_BASE}${req.path}: the model router serves POST /chat/completions, GET /models and GET /pricing.`,
          ),
    );
  });

  return { router: r, hot };
}

/** GET /pricing without an upstream: the same document, with nothing in it, and why. */
const UNCONFIGURED_PRICING = {
  object: 'pricing',
  currency: 'USD',
  unit: 'USD per million tokens',
  updated_at: null,
  available: false,
  message: 'The model router is not configured on this gateway (the operator sets TOLLGATE_LLM_API_KEY).',
  tiers: [],
  models: [],
};

async function listingReady(router: LlmRouter, res: Response): Promise<boolean> {
  try {
    await router.catalog.ensureLoaded();
    return true;
  } catch (e) {
    if (router.catalog.all().length > 0) return true; // overrides only: show what is known
    sendOpenAiError(res, toGatewayError(e));
    return false;
  }
}

/** The streaming response: SSE events written as they arrive, with backpressure from the client's socket. */
function sseSink(res: ServerResponse, signal: AbortSignal): ChatStreamSink {
  const ready = Promise.resolve();
  let wrote = false;
  // Each event is written as it comes; node:http corks the socket until the end of the tick, so events that arrived
  // in one upstream read leave in one syscall. `flush` lets them leave before the capture's commit runs.
  return {
    signal,
    open(headers) {
      // Not flushed on its own: the head goes out with the first event, in one write.
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        'x-accel-buffering': 'no',
        ...headers,
      });
    },
    write(text) {
      if (res.destroyed) return ready;
      if (!wrote) {
        wrote = true;
        stages()?.mark('first byte written');
      }
      if (res.write(text)) return ready;
      return new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    },
    flush() {
      // node:http uncorks on process.nextTick, which runs before the loop's next check phase.
      return new Promise<void>((resolve) => setImmediate(resolve));
    },
    fail(e) {
      if (!res.destroyed) res.end(sseErrorEvent(e));
    },
    end() {
      if (!res.destroyed) res.end();
    },
  };
}
