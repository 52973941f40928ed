import { z } from 'zod';
import { defineAction, inputObject, outputObject } from './define.js';
import { group } from './group.js';
import { httpUrl } from './shared.js';

// files (docs/spec.md §2.3, §4.4): the file library. Files persist across tasks and belong to the caller's account.

const STRICT = true;

/** docs/spec.md §8: 100 MB per file. */
export const MAX_FILE_BYTES = 104_857_600;

/** type/subtype with optional parameters, printable ASCII only: it is sent back as the Content-Type header. */
export const MEDIA_TYPE = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(?:\s*;[\x20-\x7e]*)?$/;

const filename = z.string().min(1).max(200).describe('File name (1-200 chars), e.g. "intro.mp4".');
const tags = z
  .array(z.string().min(1).max(40))
  .max(10)
  .describe('Labels to find the file by later (at most 10, each 1-40 chars).');
const note = z.string().max(500).describe('Free-text note kept with the file (at most 500 chars).');

const fileId = z.string().describe('Id of the stored file; pass it to videoasm/upload and other actions.');
const getUrl = z
  .string()
  .describe(
    'Signed link that downloads the bytes (HTTP GET); expires at get_expires_at, files/list renews it.',
  );
const getExpiresAt = z.string().describe('When get_url stops working (ISO 8601).');

export const upload = defineAction({
  service: 'files',
  action: 'upload',
  title: 'Store a file (direct upload)',
  summary:
    'Creates a stored file and returns { file_id, put_url, get_url }. Then HTTP PUT the raw bytes to put_url: ' +
    'the body must be exactly size_bytes long (at most 100 MB). Files persist across tasks; check files/list ' +
    'before uploading the same file again. The call is charged when the link is issued.',
  whenToUse:
    'Use it to store bytes you have locally; for a file that is already on the web use ' +
    'files/upload_from_url, which needs no PUT.',
  priceCents: 1,
  strict: STRICT,
  input: inputObject(STRICT, {
    filename,
    size_bytes: z
      .number()
      .int()
      .positive()
      .max(MAX_FILE_BYTES)
      .describe(`Exact size of the bytes you will PUT, in bytes (1 to ${MAX_FILE_BYTES}).`),
    mime: z
      .string()
      .max(100)
      .regex(MEDIA_TYPE, 'must be a media type such as "video/mp4"')
      .optional()
      .describe('Media type of the file, e.g. "video/mp4" (at most 100 chars); served back on download.'),
    tags: tags.optional(),
    note: note.optional(),
  }),
  output: outputObject({
    file_id: fileId,
    put_url: z
      .string()
      .describe('Signed link: HTTP PUT exactly size_bytes raw bytes here before put_expires_at.'),
    get_url: getUrl,
    put_expires_at: z.string().describe('When put_url stops working (ISO 8601).'),
    get_expires_at: getExpiresAt,
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  example: { filename: 'intro.mp4', size_bytes: 1048576, mime: 'video/mp4', tags: ['launch'] },
  keywords: ['file', 'upload', 'store', 'storage', 'local file', 'put bytes', 'keep'],
});

export const uploadFromUrl = defineAction({
  service: 'files',
  action: 'upload_from_url',
  title: 'Store a file fetched from a URL',
  summary:
    'Fetches a public http(s) URL on the server side and stores the bytes as a file (at most 100 MB). Returns ' +
    '{ file_id, get_url }. Private and internal addresses are refused. Check files/list first to avoid ' +
    'storing the same file twice.',
  whenToUse:
    'Use it when the file is at a public URL: the gateway fetches it for you. For bytes you hold ' +
    'locally use files/upload.',
  priceCents: 1,
  strict: STRICT,
  input: inputObject(STRICT, {
    url: httpUrl('Public http(s) URL of the file to fetch.'),
    filename: filename
      .optional()
      .describe('File name (1-200 chars); default: the last part of the URL path.'),
    tags: tags.optional(),
    note: note.optional(),
  }),
  output: outputObject({
    file_id: fileId,
    get_url: getUrl,
    get_expires_at: getExpiresAt,
    size_bytes: z.number().int().describe('Size of the stored file, bytes.'),
    mime: z.string().describe('Media type the server reported.'),
    filename: z.string().describe('Name the file was stored under.'),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  timeoutMs: 300_000,
  example: { url: 'https://example.com/video.mp4', tags: ['source'] },
  keywords: [
    'file',
    'download',
    'fetch',
    'import',
    'url',
    'mirror',
    'store',
    'save',
    'library',
    'save from url',
    'pdf',
  ],
});

export const list = defineAction({
  service: 'files',
  action: 'list',
  title: 'List my stored files',
  summary:
    'Lists the files stored by your account, newest first, with fresh get_url links. Use it before ' +
    'files/upload to avoid storing the same file twice. Needs your API key or token.',
  whenToUse:
    'Use it before files/upload to avoid storing the same file twice, or to get fresh download ' + 'links.',
  priceCents: 0,
  access: 'account',
  strict: STRICT,
  input: inputObject(STRICT, {
    tag: z.string().min(1).max(40).optional().describe('Only files carrying this tag.'),
    filename: z.string().min(1).max(200).optional().describe('Only files with exactly this name.'),
    limit: z.number().int().min(1).max(100).default(50).describe('How many (1-100, default 50).'),
    offset: z.number().int().min(0).default(0).describe('Skip this many (paging).'),
  }),
  output: outputObject({
    files: z
      .array(
        outputObject({
          file_id: fileId,
          filename: z.string().describe('File name.'),
          size_bytes: z.number().int().describe('Size in bytes (declared size while still pending).'),
          mime: z.string().nullable().describe('Media type, when known.'),
          tags: z.array(z.string()).describe('Tags.'),
          note: z.string().nullable().describe('Note.'),
          status: z.enum(['pending', 'stored']).describe('pending: bytes not uploaded yet; stored: ready.'),
          created_at: z.string().describe('When it was created (ISO 8601).'),
          get_url: z.string().nullable().describe('Signed download link (null while pending).'),
          get_expires_at: z.string().nullable().describe('When get_url stops working (ISO 8601).'),
        }),
      )
      .describe('Your files, newest first.'),
    total: z.number().int().describe('How many files match, over all pages.'),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  example: { tag: 'launch', limit: 20 },
  keywords: [
    'files',
    'list',
    'my files',
    'library',
    'stored',
    'find file',
    'tagged',
    'already uploaded',
    'files uploaded',
    'what files',
  ],
});

export const files = group(upload, uploadFromUrl, list);
