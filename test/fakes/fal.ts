import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A fake fal.ai storage on 127.0.0.1 (docs/vendors.md §6): `POST /storage/upload/initiate?storage_type=
// fal-cdn-v3` with `Authorization: Key …` answers { upload_url, file_url }; the upload_url is a presigned-style
// PUT sink on this server that insists on the declared Content-Type (as a presigned S3 URL does), and the
// file_url GETs the bytes back. Errors are fal's `{ detail }` bodies; 422 carries a list of `{ loc, msg, type }`.

export interface FalScripted {
  status: number;
  body?: unknown;
}

export interface FakeFal {
  url: string;
  apiKey: string;
  /** Initiate calls seen (method, query, auth header, JSON body). */
  initiates: Array<{ query: Record<string, string>; authorization: string | undefined; body: unknown }>;
  /** Stored objects by file URL path. */
  stored: Map<string, { contentType: string; bytes: Buffer }>;
  /** The next initiate call gets this answer instead. */
  script(answer: FalScripted): void;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'x-fal-request-id': randomBytes(8).toString('hex'),
  });
  res.end(JSON.stringify(body));
}

export async function startFakeFal(apiKey = 'fal-test-key:secret'): Promise<FakeFal> {
  const initiates: FakeFal['initiates'] = [];
  const stored: FakeFal['stored'] = new Map();
  const pending = new Map<string, { contentType: string; filePath: string; signature: string }>();
  const scripted: FalScripted[] = [];
  let base = '';

  const server = createServer((req, res) => {
    void (async () => {
      const u = new URL(req.url ?? '/', 'http://fake');
      const body = await readBody(req);

      if (req.method === 'POST' && u.pathname === '/storage/upload/initiate') {
        let parsed: unknown;
        try {
          parsed = body.length ? JSON.parse(body.toString('utf8')) : undefined;
        } catch {
          parsed = body.toString('utf8');
        }
        initiates.push({
          query: Object.fromEntries(u.searchParams),
          authorization: req.headers.authorization,
          body: parsed,
        });
        const s = scripted.shift();
        if (s) return json(res, s.status, s.body ?? { detail: 'scripted' });
        if (req.headers.authorization !== `Key ${apiKey}`) {
          return json(res, 401, { detail: 'Invalid Key Authorization header format or invalid key' });
        }
        if (u.searchParams.get('storage_type') !== 'fal-cdn-v3') {
          return json(res, 400, { detail: 'Unsupported storage type' });
        }
        const b = (parsed ?? {}) as { content_type?: unknown; file_name?: unknown };
        const missing = (['content_type', 'file_name'] as const).filter((k) => typeof b[k] !== 'string');
        if (missing.length > 0) {
          return json(res, 422, {
            detail: missing.map((k) => ({
              loc: ['body', k],
              msg: 'field required',
              type: 'value_error.missing',
            })),
          });
        }
        const token = randomBytes(12).toString('hex');
        const signature = randomBytes(16).toString('hex');
        const filePath = `/files/b/${token}/${encodeURIComponent(String(b.file_name))}`;
        pending.set(token, { contentType: String(b.content_type), filePath, signature });
        return json(res, 200, {
          upload_url: `${base}/upload/${token}?X-Amz-Expires=3600&X-Amz-Signature=${signature}`,
          file_url: `${base}${filePath}`,
        });
      }

      const put = /^\/upload\/([0-9a-f]+)$/.exec(u.pathname);
      if (req.method === 'PUT' && put) {
        const p = pending.get(put[1] as string);
        if (!p || u.searchParams.get('X-Amz-Signature') !== p.signature) {
          res.writeHead(403, { 'content-type': 'application/xml' });
          return res.end('<Error><Code>AccessDenied</Code></Error>');
        }
        // A presigned PUT is signed for its Content-Type: another one does not match the signature.
        if (req.headers['content-type'] !== p.contentType) {
          res.writeHead(403, { 'content-type': 'application/xml' });
          return res.end('<Error><Code>SignatureDoesNotMatch</Code></Error>');
        }
        stored.set(p.filePath, { contentType: p.contentType, bytes: body });
        res.writeHead(200, { etag: `"${randomBytes(8).toString('hex')}"` });
        return res.end();
      }

      const file = stored.get(u.pathname);
      if (req.method === 'GET' && file) {
        res.writeHead(200, { 'content-type': file.contentType, 'content-length': file.bytes.length });
        return res.end(file.bytes);
      }
      json(res, 404, { detail: 'Not Found' });
    })().catch(() => res.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    apiKey,
    initiates,
    stored,
    script: (a) => scripted.push(a),
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
