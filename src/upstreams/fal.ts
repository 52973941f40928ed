import type { Logger } from 'pino';
import { GatewayError } from '../errors.js';
import type { UpstreamPool } from '../lib/upstream-pool.js';
import { classifyStatus, parseJson, sendRequest, type UpstreamResponse } from './http.js';

// fal.ai storage (docs/vendors.md §6): `POST {base}/storage/upload/initiate?storage_type=fal-cdn-v3`
// with `Authorization: Key …` returns a presigned PUT URL and the CDN URL the file will have. The client PUTs
// the bytes to fal directly; the gateway never handles them.

const VENDOR = 'fal.ai storage';

export interface FalClientOptions {
  baseUrl: string;
  apiKey: string;
  pool: UpstreamPool;
  timeoutMs: number;
  /** Where vendor error text goes (it is never shown to callers). */
  log?: Logger;
}

export type StagedUpload = {
  upload_url: string;
  file_url: string;
};

export interface FalClient {
  initiateUpload(
    req: { file_name: string; content_type: string },
    opts: { signal: AbortSignal },
  ): Promise<StagedUpload>;
}

function isHttpUrl(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  try {
    const u = new URL(v);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

export function createFalClient(opts: FalClientOptions): FalClient {
  const base = opts.baseUrl.replace(/\/+$/, '');

  function fail(res: UpstreamResponse): GatewayError {
    const e = classifyStatus(VENDOR, res);
    // Their refusal of our key or account is the operator's problem: log it loudly.
    const level = e.code === 'upstream_unavailable' ? 'error' : 'warn';
    opts.log?.[level](
      { vendor: VENDOR, status: res.status, body: res.text.slice(0, 2000) },
      'upstream error',
    );
    return e;
  }

  return {
    async initiateUpload(req, { signal }) {
      const res = await sendRequest(opts.pool, VENDOR, {
        method: 'POST',
        url: `${base}/storage/upload/initiate`,
        query: { storage_type: 'fal-cdn-v3' },
        headers: { authorization: `Key ${opts.apiKey}` },
        json: { content_type: req.content_type, file_name: req.file_name },
        signal,
        timeoutMs: opts.timeoutMs,
      });
      if (res.status < 200 || res.status >= 300) throw fail(res);
      const body = parseJson(VENDOR, res) as { upload_url?: unknown; file_url?: unknown } | null;
      if (!isHttpUrl(body?.upload_url) || !isHttpUrl(body?.file_url)) {
        opts.log?.warn(
          { vendor: VENDOR, body: res.text.slice(0, 2000) },
          'upstream answered an unexpected shape',
        );
        throw new GatewayError(
          'bad_response',
          `${VENDOR} answered without upload URLs; nothing was charged.`,
        );
      }
      return { upload_url: body.upload_url, file_url: body.file_url };
    },
  };
}
