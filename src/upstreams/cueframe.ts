import type { Logger } from 'pino';
import { z } from 'zod';
import { GatewayError } from '../errors.js';
import type { UpstreamPool } from '../lib/upstream-pool.js';
import {
  classifyStatus,
  parseJson,
  sendRequest,
  type UpstreamRequest,
  type UpstreamResponse,
} from './http.js';

// CueFrame (docs/vendors.md §7), base `https://api.cueframe.ai/v1`, `Authorization: Bearer cf_…`.
// Errors everywhere are `{ error: { code, message, details } }`; the text is logged, never shown.
//
// Verified from CueFrame's docs: POST /media/import, POST /projects, POST /composition/validate.
// Inferred (recorded in docs/decisions.md, "CueFrame"): PUT /projects/{id}/composition replaces the
// composition; POST /projects/{id}/renders with { intent, priority, format } creates a render and answers
// { id | renderId | jobId, status }; GET /projects/{id}/renders/{renderId} answers the export-style job shape
// { id, status, progress, outputUrl, outputExpiresAt, error: { retryable } }. All of it lives in this file.

const VENDOR = 'CueFrame';

export interface CueFrameClientOptions {
  baseUrl: string;
  apiKey: string;
  pool: UpstreamPool;
  timeoutMs: number;
  log?: Logger;
}

type Call = { signal: AbortSignal };

export type ValidationIssue = {
  code: string;
  stage: string;
  category: string;
  retryable: boolean;
  message: string;
  fix?: unknown;
};

export type RenderStatus = 'queued' | 'rendering' | 'complete' | 'failed' | 'cancelled';

export interface RenderState {
  status: RenderStatus;
  progress: number | null;
  outputUrl: string | null;
  outputExpiresAt: string | null;
  retryable: boolean;
}

export interface CueFrameClient {
  importMedia(
    req: { url: string; filename: string; contentType: string },
    o: Call,
  ): Promise<{ id: string; status: string }>;
  createProject(
    req: { name: string; format?: Record<string, unknown>; brandKitId?: string },
    o: Call,
  ): Promise<{ id: string }>;
  putComposition(projectId: string, composition: Record<string, unknown>, o: Call): Promise<void>;
  validateComposition(
    composition: Record<string, unknown>,
    o: Call,
  ): Promise<{ valid: boolean; errors: ValidationIssue[] }>;
  createRender(
    projectId: string,
    req: { intent?: string; priority: string; format?: Record<string, unknown> },
    o: Call,
  ): Promise<{ id: string; status: string }>;
  getRender(projectId: string, renderId: string, o: Call): Promise<RenderState>;
}

const idShape = z.looseObject({ id: z.string().min(1) });
const mediaShape = z.looseObject({ id: z.string().min(1), status: z.string().default('importing') });
const renderCreated = z
  .looseObject({
    id: z.string().min(1).optional(),
    renderId: z.string().min(1).optional(),
    jobId: z.string().min(1).optional(),
    status: z.string().default('queued'),
  })
  .transform((r) => ({ id: r.id ?? r.renderId ?? r.jobId, status: r.status }));
const validation = z.looseObject({
  valid: z.boolean(),
  errors: z
    .array(
      z.looseObject({
        code: z.string(),
        stage: z.string().default('unknown'),
        category: z.string().default('unknown'),
        retryable: z.boolean().default(false),
        message: z.string().default(''),
        fix: z.unknown().optional(),
      }),
    )
    .default([]),
});
const renderJob = z.looseObject({
  status: z.string(),
  progress: z.union([z.number(), z.looseObject({ percent: z.number().optional() })]).nullish(),
  outputUrl: z.string().nullish(),
  outputExpiresAt: z.string().nullish(),
  error: z.looseObject({ retryable: z.boolean().optional() }).nullish(),
});

const STATUS_MAP: Record<string, RenderStatus> = {
  queued: 'queued',
  pending: 'queued',
  waiting: 'queued',
  complete: 'complete',
  completed: 'complete',
  succeeded: 'complete',
  done: 'complete',
  error: 'failed',
  failed: 'failed',
  cancelled: 'cancelled',
  canceled: 'cancelled',
};

function isEnvelope(body: unknown): boolean {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return false;
  const keys = Object.keys(body);
  return keys.length === 1 && keys[0] === 'error' && typeof (body as { error: unknown }).error === 'object';
}

export function createCueFrameClient(opts: CueFrameClientOptions): CueFrameClient {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const seg = encodeURIComponent;

  function fail(res: UpstreamResponse): GatewayError {
    let upstreamCode: unknown;
    try {
      upstreamCode = (JSON.parse(res.text) as { error?: { code?: unknown } })?.error?.code;
    } catch {}
    const e =
      res.status === 404
        ? new GatewayError(
            'resource_not_found',
            `${VENDOR} has no such item; check the id. Nothing was charged.`,
          )
        : classifyStatus(VENDOR, res);
    const level = e.code === 'upstream_unavailable' ? 'error' : 'warn';
    opts.log?.[level](
      { vendor: VENDOR, status: res.status, upstreamCode, body: res.text.slice(0, 2000) },
      'upstream error',
    );
    return e;
  }

  async function call<T>(
    req: Omit<UpstreamRequest, 'url' | 'timeoutMs' | 'signal'> & { path: string },
    shape: z.ZodType<T>,
    o: Call,
  ): Promise<T> {
    const res = await sendRequest(opts.pool, VENDOR, {
      ...req,
      url: `${base}${req.path}`,
      headers: { authorization: `Bearer ${opts.apiKey}`, ...req.headers },
      signal: o.signal,
      timeoutMs: opts.timeoutMs,
    });
    if (res.status < 200 || res.status >= 300) throw fail(res);
    const body = res.text === '' ? {} : parseJson(VENDOR, res);
    // A 2xx that is nothing but the error envelope is a failure too (a job's own `error` field is not).
    if (isEnvelope(body)) throw fail({ ...res, status: 502 });
    const parsed = shape.safeParse(body);
    if (!parsed.success) {
      opts.log?.warn(
        { vendor: VENDOR, path: req.path, issues: parsed.error.issues.slice(0, 5) },
        'upstream answered an unexpected shape',
      );
      throw new GatewayError(
        'bad_response',
        `${VENDOR} answered in an unexpected shape; nothing was charged.`,
      );
    }
    return parsed.data;
  }

  return {
    importMedia: (req, o) => call({ method: 'POST', path: '/media/import', json: req }, mediaShape, o),

    async createProject(req, o) {
      const r = await call({ method: 'POST', path: '/projects', json: req }, idShape, o);
      return { id: r.id };
    },

    async putComposition(projectId, composition, o) {
      await call(
        { method: 'PUT', path: `/projects/${seg(projectId)}/composition`, json: composition },
        z.unknown(),
        o,
      );
    },

    validateComposition: (composition, o) =>
      call({ method: 'POST', path: '/composition/validate', json: composition }, validation, o),

    async createRender(projectId, req, o) {
      const r = await call(
        { method: 'POST', path: `/projects/${seg(projectId)}/renders`, json: req },
        renderCreated,
        o,
      );
      if (!r.id)
        throw new GatewayError('bad_response', `${VENDOR} did not return a render id; nothing was charged.`);
      return { id: r.id, status: r.status };
    },

    async getRender(projectId, renderId, o) {
      const r = await call(
        { method: 'GET', path: `/projects/${seg(projectId)}/renders/${seg(renderId)}` },
        renderJob,
        o,
      );
      const status = STATUS_MAP[r.status.toLowerCase()] ?? 'rendering';
      if (status === 'complete' && !r.outputUrl) {
        throw new GatewayError(
          'bad_response',
          `${VENDOR} reported a finished render without its output URL.`,
        );
      }
      const progress = typeof r.progress === 'number' ? r.progress : (r.progress?.percent ?? null);
      return {
        status,
        progress,
        outputUrl: status === 'complete' ? (r.outputUrl ?? null) : null,
        outputExpiresAt: status === 'complete' ? (r.outputExpiresAt ?? null) : null,
        retryable: r.error?.retryable ?? false,
      };
    },
  };
}
