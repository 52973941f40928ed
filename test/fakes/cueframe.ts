import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

// A fake CueFrame API on 127.0.0.1 under /v1 (docs/vendors.md §7). Bearer auth; every error is
// `{ error: { code, message, details } }`. Media import fetches the given URL itself in the background (as
// CueFrame does) and moves importing → ready | failed. Validate checks v, track kinds, clip fields, media
// references and reframe zoom (> 1.0 fails). Renders are project-scoped, progress queued → rendering →
// complete over successive polls, and fail with "empty scenes" when the composition has no clips; priority
// interactive is refused with 403 as for API keys.

export interface CueFrameScripted {
  path?: string;
  status: number;
  body?: unknown;
}

export interface FakeMedia {
  id: string;
  url: string;
  filename: string;
  contentType: string;
  status: 'importing' | 'ready' | 'failed';
  bytes?: Buffer;
  done: Promise<void>;
}

export interface FakeCueFrame {
  /** Base URL to configure, with the /v1 prefix. */
  url: string;
  apiKey: string;
  requests: Array<{ method: string; path: string; body: unknown }>;
  media: Map<string, FakeMedia>;
  projects: Map<string, { id: string; name: string; composition: Record<string, unknown> | null }>;
  renders: Map<
    string,
    { id: string; projectId: string; body: Record<string, unknown>; polls: number; clips: number }
  >;
  script(answer: CueFrameScripted): void;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;
type Issue = {
  code: string;
  stage: string;
  category: string;
  retryable: boolean;
  message: string;
  fix?: unknown;
};

const TRACK_KINDS = ['video', 'audio', 'image', 'overlay', 'effect'];

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      try {
        resolve(raw ? JSON.parse(raw) : undefined);
      } catch {
        resolve(raw);
      }
    });
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const err = (code: string, message: string) => ({ error: { code, message, details: {} } });

export async function startFakeCueFrame(apiKey = 'cf_test_fakekey'): Promise<FakeCueFrame> {
  const requests: FakeCueFrame['requests'] = [];
  const media: FakeCueFrame['media'] = new Map();
  const projects: FakeCueFrame['projects'] = new Map();
  const renders: FakeCueFrame['renders'] = new Map();
  const scripted: CueFrameScripted[] = [];
  let seq = 0;
  let base = '';
  const next = (p: string) => `${p}_${(++seq).toString(36).padStart(6, '0')}`;

  function validate(c: Json): Issue[] {
    const out: Issue[] = [];
    const issue = (code: string, category: string, message: string, fix?: unknown, retryable = false) =>
      out.push({
        code,
        stage: 'normalize',
        category,
        retryable,
        message,
        ...(fix === undefined ? {} : { fix }),
      });
    if (c.v !== 1) issue('unsupported_version', 'schema', 'v must be 1', { v: 1 });
    if (!Array.isArray(c.tracks)) {
      issue('missing_tracks', 'schema', 'tracks must be an array');
      return out;
    }
    for (const t of c.tracks as Json[]) {
      if (!TRACK_KINDS.includes(String(t.kind)))
        issue('unknown_track_kind', 'schema', `track ${t.id}: unknown kind`);
      for (const clip of (Array.isArray(t.contents) ? t.contents : []) as Json[]) {
        const s = (clip.source ?? {}) as Json;
        if (s.kind === 'media') {
          const m = media.get(String(s.mediaId));
          if (!m)
            issue('media_not_found', 'media', `clip ${clip.id}: media ${s.mediaId} not found`, {
              clipId: clip.id,
            });
          else if (m.status === 'importing')
            issue(
              'media_not_ready',
              'media',
              `clip ${clip.id}: media ${s.mediaId} still importing`,
              undefined,
              true,
            );
          const segments = ((s.reframe as Json | undefined)?.segments ?? []) as Json[];
          for (const seg of segments) {
            if (typeof seg.zoom === 'number' && seg.zoom > 1) {
              issue('reframe_zoom_out_of_range', 'reframe', `clip ${clip.id}: zoom must be <= 1.0`, {
                zoom: 1,
              });
            }
          }
        }
      }
    }
    return out;
  }

  function importMedia(m: FakeMedia): Promise<void> {
    return request(m.url)
      .then(async (r) => {
        const bytes = Buffer.from(await r.body.arrayBuffer());
        if (r.statusCode !== 200) throw new Error(`HTTP ${r.statusCode}`);
        m.bytes = bytes;
        m.status = 'ready';
      })
      .catch(() => {
        m.status = 'failed';
      });
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const u = new URL(req.url ?? '/', 'http://fake');
    const body = await readJson(req);
    const method = req.method ?? 'GET';
    const path = u.pathname;
    const b = (body && typeof body === 'object' ? body : {}) as Json;
    requests.push({ method, path, body });

    const renderOutput = /^\/v1\/renders\/([\w-]+)\/output\.mp4$/.exec(path);
    if (method === 'GET' && renderOutput) {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      return void res.end(Buffer.from('fake-mp4'));
    }
    const i = scripted.findIndex((s) => s.path === undefined || s.path === path);
    const s = i >= 0 ? scripted.splice(i, 1)[0] : undefined;
    if (s) return send(res, s.status, s.body ?? err('scripted', 'scripted failure'));
    if (req.headers.authorization !== `Bearer ${apiKey}`)
      return send(res, 401, err('unauthorized', 'Invalid API key'));

    if (method === 'POST' && path === '/v1/media/import') {
      if (typeof b.url !== 'string') return send(res, 400, err('validation_error', 'url is required'));
      const m: FakeMedia = {
        id: next('media'),
        url: b.url,
        filename: String(b.filename ?? ''),
        contentType: String(b.contentType ?? ''),
        status: 'importing',
        done: Promise.resolve(),
      };
      m.done = importMedia(m);
      media.set(m.id, m);
      return send(res, 202, { id: m.id, status: 'importing' });
    }
    const mediaGet = /^\/v1\/media\/([\w-]+)$/.exec(path);
    if (method === 'GET' && mediaGet) {
      const m = media.get(mediaGet[1] as string);
      if (!m) return send(res, 404, err('not_found', 'Media not found'));
      return send(res, 200, {
        id: m.id,
        status: m.status,
        name: m.filename,
        mimeType: m.contentType,
        fileSize: m.bytes?.length ?? null,
      });
    }
    if (method === 'POST' && path === '/v1/projects') {
      if (typeof b.name !== 'string' || b.name === '')
        return send(res, 400, err('validation_error', 'name is required'));
      const p = { id: next('proj'), name: b.name, composition: null };
      projects.set(p.id, p);
      return send(res, 201, {
        ...p,
        format: b.format ?? { aspectRatio: '16:9', fps: 30, resolution: 'fhd' },
        webUrl: null,
        createdAt: new Date().toISOString(),
        brandKitId: b.brandKitId ?? null,
        lastRender: null,
        description: null,
        activeCompositionId: null,
      });
    }
    if (method === 'POST' && path === '/v1/composition/validate') {
      const errors = validate(b);
      return send(res, 200, { valid: errors.length === 0, errors });
    }
    const comp = /^\/v1\/projects\/([\w-]+)\/composition$/.exec(path);
    if (comp) {
      const p = projects.get(comp[1] as string);
      if (!p) return send(res, 404, err('not_found', 'Project not found'));
      if (method !== 'PUT') return send(res, 405, err('method_not_allowed', 'Use PUT'));
      p.composition = b;
      return send(res, 200, { ...b, etag: `W/"${next('etag')}"` });
    }
    const renderCreate = /^\/v1\/projects\/([\w-]+)\/renders$/.exec(path);
    if (method === 'POST' && renderCreate) {
      const p = projects.get(renderCreate[1] as string);
      if (!p) return send(res, 404, err('not_found', 'Project not found'));
      if (b.priority === 'interactive')
        return send(res, 403, err('forbidden', 'interactive needs an editor session'));
      const tracks = (p.composition?.tracks ?? []) as Json[];
      const clips = tracks.reduce((n, t) => n + (Array.isArray(t.contents) ? t.contents.length : 0), 0);
      const r = { id: next('render'), projectId: p.id, body: b, polls: 0, clips };
      renders.set(r.id, r);
      return send(res, 201, { renderId: r.id, status: 'queued' });
    }
    const renderGet = /^\/v1\/projects\/([\w-]+)\/renders\/([\w-]+)$/.exec(path);
    if (method === 'GET' && renderGet) {
      const r = renders.get(renderGet[2] as string);
      if (!r || r.projectId !== renderGet[1]) return send(res, 404, err('not_found', 'Render not found'));
      r.polls++;
      const job = { id: r.id, outputUrl: null, outputExpiresAt: null, outputSizeBytes: null, error: null };
      if (r.polls === 1)
        return send(res, 200, { ...job, status: 'queued', progress: { phase: 'queued', percent: 0 } });
      if (r.clips === 0) {
        return send(res, 200, {
          ...job,
          status: 'error',
          progress: null,
          error: {
            phase: 'render',
            message: 'empty scenes: no renderable clips',
            detail: null,
            retryable: false,
          },
        });
      }
      if (r.polls === 2)
        return send(res, 200, { ...job, status: 'rendering', progress: { phase: 'encode', percent: 50 } });
      return send(res, 200, {
        ...job,
        status: 'complete',
        progress: { phase: 'done', percent: 100 },
        outputUrl: `${base}/v1/renders/${r.id}/output.mp4`,
        outputExpiresAt: new Date(Date.now() + 3_600_000).toISOString(),
        outputSizeBytes: 8,
      });
    }
    send(res, 404, err('not_found', `No route ${method} ${path}`));
  }

  const server = createServer((req, res) => {
    route(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/v1`,
    apiKey,
    requests,
    media,
    projects,
    renders,
    script: (a) => scripted.push(a),
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
