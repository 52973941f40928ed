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

type JsonCall = (
  req: Omit<UpstreamRequest, 'url' | 'timeoutMs'> & {
    path: string;
    timeoutMs?: number;
    /** Status polls: `success: false` with a job status is an answer (the job failed), not a failed call. */
    allowDeclaredFailure?: boolean;
  },
) => Promise<{ body: Record<string, unknown>; res: UpstreamResponse }>;

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
  const call = jsonCaller(vendor, opts, classify);
  const shape = <T extends z.ZodType>(path: string, schema: T, body: unknown) =>
    expectShape(vendor, opts.log, path, schema, body);
  return {
    post: async (path, schema, json, signal, timeoutMs) =>
      shape(path, schema, (await call({ method: 'POST', path, json, signal, timeoutMs })).body),
    status: async (path, schema, signal, query) => {
      const req = {
        method: 'GET' as const,
        path,
        query,
        signal,
        timeoutMs: 30_000,
        allowDeclaredFailure: true,
      };
      return shape(path, schema, (await call(req)).body);
    },
  };
}

function jsonCaller(
  vendor: string,
  opts: VendorClientOptions,
  classify?: (res: UpstreamResponse) => GatewayError | undefined,
): JsonCall {
  const base = opts.baseUrl.replace(/\/+$/, '');
  return async ({ path, timeoutMs, headers, allowDeclaredFailure, ...rest }) => {
    const res = await sendRequest(opts.pool, vendor, {
      ...rest,
      url: `${base}${path}`,
      headers: { authorization: `Bearer ${opts.apiKey}`, ...headers },
      timeoutMs: timeoutMs ?? opts.timeoutMs ?? 120_000,
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
    return { body: obj, res };
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

/** Parses a vendor body with a schema, or fails as bad_response (logged). */
export function expectShape<T extends z.ZodType>(
  vendor: string,
  log: Logger,
  path: string,
  schema: T,
  body: unknown,
): z.output<T> {
  const r = schema.safeParse(body);
  if (!r.success) throw badShape(vendor, log, path, JSON.stringify(body));
  return r.data;
}
