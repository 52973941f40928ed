import { MAX_FILE_BYTES, MEDIA_TYPE } from '../catalog/files.js';
import type { Download, StoredFile } from './context.js';
import type { ServiceHandlers } from './types.js';

// files: the file library (src/storage: local disk or S3 for the bytes, the gateway's database for the rest). Every file belongs to ctx.owner; the
// store answers another owner's file_id as not found.

const iso = (ms: number) => new Date(ms).toISOString();

/** The name a fetched file is stored under: Content-Disposition's, else the URL's last path segment. */
export function downloadName(dl: Download): string {
  const cd = dl.contentDisposition ?? '';
  const star = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(cd)?.[1];
  const plain = /filename\s*=\s*"?([^";]+)"?/.exec(cd)?.[1];
  let name: string | undefined;
  try {
    name = star ? decodeURIComponent(star) : plain;
    if (!name) name = decodeURIComponent(new URL(dl.url).pathname.split('/').pop() ?? '');
  } catch {
    name = undefined;
  }
  // Only the base name, without control characters: it ends up in a Content-Disposition header.
  const clean =
    (name ?? '')
      .split(/[/\\]/)
      .pop()
      ?.split('')
      .filter((c) => c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) !== 0x7f)
      .join('')
      .trim() ?? '';
  return (clean || 'download').slice(0, 200);
}

function mediaType(contentType: string | undefined): string {
  return contentType && contentType.length <= 100 && MEDIA_TYPE.test(contentType)
    ? contentType
    : 'application/octet-stream';
}

async function listed(f: StoredFile, link: (f: StoredFile) => Promise<{ url: string; expires_at: number }>) {
  const get = f.status === 'stored' ? await link(f) : undefined;
  return {
    file_id: f.file_id,
    filename: f.filename,
    size_bytes: f.size_bytes,
    mime: f.mime,
    tags: f.tags,
    note: f.note,
    status: f.status,
    created_at: iso(f.created_at),
    get_url: get?.url ?? null,
    get_expires_at: get ? iso(get.expires_at) : null,
  };
}

export const filesHandlers: ServiceHandlers<'files'> = {
  'files/upload': {
    provider: () => 'local',
    // Charged when the links are issued: the action's work (reserving the file, signing its links) is done
    // even if the caller never PUTs the bytes (docs/decisions.md).
    run: async (input, ctx) => {
      const files = ctx.services.files;
      const f = await files.create(ctx.owner, {
        filename: input.filename,
        size_bytes: input.size_bytes,
        mime: input.mime,
        tags: input.tags,
        note: input.note,
      });
      const [put, get] = await Promise.all([files.link(f, 'PUT'), files.link(f, 'GET')]);
      return {
        file_id: f.file_id,
        put_url: put.url,
        get_url: get.url,
        put_expires_at: iso(put.expires_at),
        get_expires_at: iso(get.expires_at),
      };
    },
  },

  'files/upload_from_url': {
    provider: () => 'local',
    run: async (input, ctx) => {
      const dl = await ctx.services.download.open(input.url, {
        signal: ctx.signal,
        maxBytes: MAX_FILE_BYTES,
      });
      let f: StoredFile;
      try {
        f = await ctx.services.files.ingest(
          ctx.owner,
          {
            filename: input.filename ?? downloadName(dl),
            mime: mediaType(dl.contentType),
            tags: input.tags,
            note: input.note,
            source_url: input.url,
          },
          dl.body,
          { maxBytes: MAX_FILE_BYTES, signal: ctx.signal, length: dl.contentLength },
        );
      } finally {
        dl.cancel();
      }
      const get = await ctx.services.files.link(f, 'GET');
      return {
        file_id: f.file_id,
        get_url: get.url,
        get_expires_at: iso(get.expires_at),
        size_bytes: f.size_bytes,
        mime: f.mime ?? 'application/octet-stream',
        filename: f.filename,
      };
    },
  },

  'files/list': {
    provider: () => 'local',
    run: async (input, ctx) => {
      const files = ctx.services.files;
      const page = await files.list(ctx.owner, input);
      const listing = await Promise.all(page.files.map((f) => listed(f, (file) => files.link(file, 'GET'))));
      return { files: listing, total: page.total };
    },
  },
};
