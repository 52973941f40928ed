import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SupportedResponse } from '@x402/core/types';
import { UpstreamPool } from '../../lib/upstream-pool.js';
import { classifyingFacilitator, type Facilitator } from './facilitator.js';

// A remote facilitator over HTTP (x402 v2 §7: POST /verify, POST /settle, GET /supported), on a pooled undici
// agent with a deadline per request. Replies are returned as-is when they carry an x402 answer (2xx, and 4xx
// with `isValid`/`success`, which some facilitators use for refusals); anything else throws, which the
// classifier turns into "unavailable" (verify) or "unknown" (settle).

export interface RemoteFacilitatorOptions {
  url: string;
  /** Sent on every request. A secret: never logged, never part of an error message. */
  authHeader: { name: string; value: string } | undefined;
  timeoutMs: number;
}

export class FacilitatorHttpError extends Error {
  constructor(
    readonly path: string,
    readonly status: number,
  ) {
    super(`facilitator ${path} answered HTTP ${status}`);
    this.name = 'FacilitatorHttpError';
  }
}

/** JSON with bigints as decimal strings (the wire form of uint256 fields). */
function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
}

export function remoteFacilitator(opts: RemoteFacilitatorOptions): Facilitator {
  const pool = new UpstreamPool({
    connections: 32,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
  });
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (opts.authHeader) headers[opts.authHeader.name.toLowerCase()] = opts.authHeader.value;

  async function call(path: string, method: 'GET' | 'POST', answerKey: string, body?: unknown) {
    const res = await pool.request(`${opts.url}/${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : toJson(body),
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
    const text = await res.body.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const isAnswer = typeof json === 'object' && json !== null && answerKey in json;
    if (isAnswer && res.statusCode < 500) return json;
    throw new FacilitatorHttpError(path, res.statusCode);
  }

  const wire = (payload: PaymentPayload, req: PaymentRequirements) => ({
    x402Version: payload.x402Version,
    paymentPayload: payload,
    paymentRequirements: req,
  });

  const client: FacilitatorClient = {
    verify: (p, r) =>
      call('verify', 'POST', 'isValid', wire(p, r)) as ReturnType<FacilitatorClient['verify']>,
    settle: (p, r) =>
      call('settle', 'POST', 'success', wire(p, r)) as ReturnType<FacilitatorClient['settle']>,
    getSupported: () => call('supported', 'GET', 'kinds') as Promise<SupportedResponse>,
  };
  return classifyingFacilitator(client, () => pool.close());
}
