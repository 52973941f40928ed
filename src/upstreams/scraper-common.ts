import type { Logger } from 'pino';
import type { z } from 'zod';
import { GatewayError } from '../errors.js';
import type { UpstreamPool } from '../lib/upstream-pool.js';
import {
  classifyStatus,
  parseJson,
  sendRequest,
  type UpstreamRequest,
  type UpstreamResponse,
} from './http.js';

// What the Firecrawl and fastCRW adapters share: JSON over HTTP with a bearer key, and their common success
// rule — HTTP 2xx *and* `success` not false. Everything else is a failure, classified by fault and never
// charged; the vendor's own words go to the log only.

export interface VendorClientOptions {
  baseUrl: string;
  apiKey: string;
  pool: UpstreamPool;
  log: Logger;
  /** Upper bound of one request (the action's own timeout usually ends it sooner). */
  timeoutMs?: number;
}

/** The two requests these APIs are made of, each answer checked against its schema. */
export interface VendorJson {
  /** POST a JSON body (within `timeoutMs`, else the client's own bound). */
  post<T extends z.ZodType>(
    path: string,
    schema: T,
    json: unknown,
    signal: AbortSignal,
    timeoutMs?: number,
  ): Promise<z.output<T>>;
  /** GET a job's status, within 30 s; `success: false` with a job status is an answer (the job failed). */
  status<T extends z.ZodType>(
    path: string,
    schema: T,
    signal: AbortSignal,
    query?: UpstreamRequest['query'],
  ): Promise<z.output<T>>;
}

export function vendorJson(
  vendor: string,
  opts: VendorClientOptions,
  classify?: (res: UpstreamResponse) => GatewayError | undefined,
): VendorJson {
  const base = opts.baseUrl.replace(/\/+$/, '');
  /** `allowDeclaredFailure` (status polls): `success: false` with a job status is an answer, not a failed call. */
  async function call<T extends z.ZodType>(
    path: string,
    schema: T,
    req: Omit<UpstreamRequest, 'url' | 'headers'>,
    allowDeclaredFailure = false,
  ): Promise<z.output<T>> {
    const res = await sendRequest(opts.pool, vendor, {
      ...req,
      url: `${base}${path}`,
      headers: { authorization: `Bearer ${opts.apiKey}` },
    });
    if (res.status < 200 || res.status >= 300) {
      const err = classify?.(res) ?? classifyStatus(vendor, res);
      logFailure(opts.log, vendor, path, res, err);
      throw err;
    }
    const body = parseJson(vendor, res);
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw badShape(vendor, opts.log, path, res.text);
    }
    const obj = body as Record<string, unknown>;
    if (obj.success === false && !(allowDeclaredFailure && typeof obj.status === 'string')) {
      opts.log.warn({ vendor, path, body: res.text.slice(0, 2000) }, 'vendor declared failure');
      throw new GatewayError(
        'upstream_rejected',
        `${vendor} could not complete the request (it reported a failure); nothing was charged.`,
        { cause: { vendor, body: res.text.slice(0, 2000) } },
      );
    }
    const parsed = schema.safeParse(obj);
    if (!parsed.success) throw badShape(vendor, opts.log, path, JSON.stringify(obj));
    return parsed.data;
  }
  return {
    post: (path, schema, json, signal, timeoutMs) =>
      call(path, schema, {
        method: 'POST',
        json,
        signal,
        timeoutMs: timeoutMs ?? opts.timeoutMs ?? 120_000,
      }),
    status: (path, schema, signal, query) =>
      call(path, schema, { method: 'GET', query, signal, timeoutMs: 30_000 }, true),
  };
}

export function logFailure(
  log: Logger,
  vendor: string,
  path: string,
  res: UpstreamResponse,
  err: GatewayError,
) {
  const level = err.code === 'upstream_unavailable' ? 'error' : 'warn';
  log[level]({ vendor, path, status: res.status, body: res.text.slice(0, 2000) }, 'vendor request failed');
}

export function badShape(vendor: string, log: Logger, path: string, text: string): GatewayError {
  log.error({ vendor, path, body: text.slice(0, 2000) }, 'vendor answered in an unexpected shape');
  return new GatewayError('bad_response', `${vendor} answered in an unexpected shape; nothing was charged.`);
}
