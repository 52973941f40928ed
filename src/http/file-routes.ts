import type { Readable } from 'node:stream';
import { type Request, type Response, Router } from 'express';
import { GatewayError, toGatewayError } from '../errors.js';
import { inlineDisposition } from '../lib/content-disposition.js';
import { sendError } from './respond.js';

// The endpoints behind local storage's put_url and get_url: `PUT|GET /files/{file_id}?expires=…&signature=…`
// (with S3 storage the links are presigned URLs of the bucket, and these routes are not mounted).
// The signed link is the capability (no API key: the caller may hand it to a tool or a vendor). PUT bodies
// are streamed to disk and must be exactly the declared size; GET streams the bytes back with the stored
// type. Nothing here is charged: files/upload was charged when it issued the links.

interface LinkedFile {
  file_id: string;
  filename: string;
  size_bytes: number;
  mime: string | null;
  status: 'pending' | 'stored';
}

/** What the routes need from local storage (src/storage/gateway-links.ts implements it). */
export interface FileContentStore {
  /** The file the link grants `method` on; rejects `forbidden` (bad or expired link) or `resource_not_found`. */
  authorize(fileId: string, method: 'GET' | 'PUT', expires?: string, signature?: string): Promise<LinkedFile>;
  receive(file: LinkedFile, body: Readable, contentType: string | undefined): Promise<void>;
  objectPath(fileId: string): string;
}

function param(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** Refuses without reading the body, and closes the connection so a large body is not drained. */
function refuse(res: Response, e: GatewayError): void {
  res.setHeader('Connection', 'close');
  sendError(res, e);
}

export function fileRoutes(store: FileContentStore): Router {
  const r = Router();

  const authorize = (req: Request, method: 'GET' | 'PUT') =>
    store.authorize(String(req.params.file_id), method, param(req.query.expires), param(req.query.signature));

  r.put('/files/:file_id', async (req: Request, res: Response) => {
    let file: LinkedFile;
    try {
      file = await authorize(req, 'PUT');
    } catch (e) {
      return refuse(res, toGatewayError(e));
    }
    const length = req.headers['content-length'];
    const declared = length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined;
    if (declared !== file.size_bytes) {
      const details = { issues: [{ path: 'Content-Length', message: `must be ${file.size_bytes}` }] };
      return refuse(
        res,
        declared === undefined
          ? new GatewayError(
              'invalid_input',
              `Send the bytes with a Content-Length header of exactly ${file.size_bytes} (size_bytes).`,
              { details },
            )
          : new GatewayError(
              declared > file.size_bytes ? 'payload_too_large' : 'invalid_input',
              `The body is ${declared} bytes but the file was declared with size_bytes ${file.size_bytes}; ` +
                'send exactly that many bytes, or create a new upload with the right size.',
              { details },
            ),
      );
    }
    try {
      await store.receive(file, req, param(req.headers['content-type']));
    } catch (e) {
      const error = toGatewayError(e);
      if (error.code === 'internal') req.log.warn({ err: e, file_id: file.file_id }, 'file upload failed');
      if (!res.headersSent && !res.destroyed) refuse(res, error);
      return;
    }
    res.json({ ok: true, file_id: file.file_id, size_bytes: file.size_bytes });
  });

  r.get('/files/:file_id', async (req: Request, res: Response) => {
    let file: LinkedFile;
    try {
      file = await authorize(req, 'GET');
    } catch (e) {
      return sendError(res, toGatewayError(e));
    }
    if (file.status !== 'stored') {
      return sendError(
        res,
        new GatewayError('resource_not_found', 'This file has no bytes yet: PUT them to its put_url first.'),
      );
    }
    res.setHeader('Content-Type', file.mime ?? 'application/octet-stream');
    res.setHeader('Content-Disposition', inlineDisposition(file.filename));
    // Stored bytes are the caller's, served from our origin: never sniffed, never run as a page.
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
    res.setHeader('Cache-Control', 'private, max-age=3600');
    res.sendFile(
      store.objectPath(file.file_id),
      { acceptRanges: true, etag: false, lastModified: false, cacheControl: false },
      (err) => {
        if (!err) return;
        if (res.headersSent) return;
        req.log.error({ err, file_id: file.file_id }, 'stored file could not be read');
        sendError(res, new GatewayError('internal', 'The stored file could not be read.'));
      },
    );
  });

  r.all('/files/:file_id', (req: Request, res: Response) => {
    res.setHeader('Allow', 'GET, HEAD, PUT');
    sendError(
      res,
      new GatewayError('method_not_allowed', `Use PUT to upload or GET to download ${req.path}.`),
    );
  });

  return r;
}
