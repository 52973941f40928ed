import { z } from 'zod';
import { defineAction, inputObject, outputObject } from './define.js';
import { group } from './group.js';
import { pollFields } from './shared.js';
import { composition, compositionFields, partialFormat } from './videoasm-composition.js';

// videoasm (docs/spec.md §4.2): video assembly on CueFrame. upload → create_project → validate → put_composition →
// render → result. Additional properties are allowed (spec), except on the poll action, whose shape we chose.

const LOOSE = false;
const write = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };
const read = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true };

/** docs/spec.md §4.2: video (mp4, quicktime, mkv, webm); audio (mpeg, wav, x-wav, mp4, aac); image (png, jpeg, webp). */
export const ACCEPTED_CONTENT_TYPES = [
  'video/mp4',
  'video/quicktime',
  'video/x-matroska',
  'video/matroska',
  'video/webm',
  'audio/mpeg',
  'audio/wav',
  'audio/x-wav',
  'audio/mp4',
  'audio/aac',
  'image/png',
  'image/jpeg',
  'image/webp',
] as const;

/** The bare media type of a Content-Type value, lower-cased, parameters dropped. */
export function baseMediaType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

export function isAcceptedContentType(contentType: string): boolean {
  return (ACCEPTED_CONTENT_TYPES as readonly string[]).includes(baseMediaType(contentType));
}

const projectId = z.string().min(1).describe('Project id returned by videoasm/create_project.');

export const upload = defineAction({
  service: 'videoasm',
  action: 'upload',
  title: 'Import a stored file for video assembly',
  summary:
    'Step 1 of video assembly. Imports a file you stored with files/upload (or files/upload_from_url) onto the ' +
    'video provider and returns { media_id, status } at once; processing finishes server-side. Reference ' +
    `media_id in compositions as source.mediaId. Accepted types: ${ACCEPTED_CONTENT_TYPES.join(', ')}.`,
  whenToUse:
    'Use it once per clip, image or audio file the video will use, after storing the file with ' +
    'files/upload or files/upload_from_url.',
  priceCents: 1,
  strict: LOOSE,
  input: inputObject(LOOSE, {
    file_id: z
      .string()
      .min(1)
      .describe('file_id from files/upload or files/upload_from_url (your own file).'),
    filename: z.string().min(1).max(500).optional().describe('Name to give the media item (1-500 chars).'),
    contentType: z
      .string()
      .min(1, { abort: true })
      .refine(isAcceptedContentType, `must be one of ${ACCEPTED_CONTENT_TYPES.join(', ')}`)
      .optional()
      .describe('Overrides the stored file’s type; must be an accepted video, audio or image type.'),
  }),
  output: outputObject({
    media_id: z.string().describe('Media id to use as source.mediaId in compositions.'),
    status: z.string().describe('Import status at creation, e.g. "importing".'),
  }),
  annotations: write,
  example: { file_id: 'file_0mdx3k2a1b2c3d4e5f6g7h8i9j', filename: 'intro.mp4' },
  keywords: ['video', 'media', 'import', 'clip', 'footage', 'assemble', 'video editor', 'into the editor'],
});

export const createProject = defineAction({
  service: 'videoasm',
  action: 'create_project',
  title: 'Create a video project',
  summary:
    'Step 2 of video assembly. Creates a project and returns { id }, the project_id for put_composition and ' +
    'render. The format can be set here or later in the composition.',
  whenToUse: 'Use it once per video, before videoasm/put_composition and videoasm/render.',
  priceCents: 1,
  strict: LOOSE,
  input: inputObject(LOOSE, {
    name: z.string().min(1).max(200).describe('Project name (1-200 chars).'),
    format: partialFormat.optional(),
    brandKitId: z
      .string()
      .min(1)
      .optional()
      .describe('Brand kit whose colours and fonts $brand: tokens use.'),
  }),
  output: outputObject({
    id: z.string().describe('Project id (project_id of the other videoasm actions).'),
    name: z.string().describe('Project name.'),
  }),
  annotations: write,
  example: { name: 'Launch teaser', format: { aspectRatio: '9:16', fps: 30, resolution: 'fhd' } },
  keywords: ['video', 'project', 'new project', 'edit', 'assemble', 'create project'],
});

const wrapper = composition
  .optional()
  .describe('The composition, as a nested wrapper instead of top-level fields.');

export const putComposition = defineAction({
  service: 'videoasm',
  action: 'put_composition',
  title: 'Set a project’s composition',
  summary:
    'Step 3 of video assembly. Replaces the project’s composition: send project_id with v, format and tracks ' +
    'at the top level (or inside a composition wrapper). Run videoasm/validate first and repeat until valid: ' +
    'clips that fail validation are silently dropped and an invalid edit wastes a paid render. Returns ' +
    '{ project_id, saved, track_count, clip_count }.',
  whenToUse:
    'Use it after videoasm/validate answered valid: true for exactly this composition; ' +
    'videoasm/render refuses a project whose stored composition has not passed validation.',
  priceCents: 1,
  strict: LOOSE,
  input: inputObject(LOOSE, {
    project_id: projectId,
    v: compositionFields.v.optional(),
    format: compositionFields.format.optional(),
    tracks: compositionFields.tracks.optional(),
    composition: wrapper,
  }).superRefine((b, ctx) => {
    const topLevel = b.v !== undefined || b.format !== undefined || b.tracks !== undefined;
    if (b.composition !== undefined) {
      if (topLevel) {
        ctx.addIssue({
          code: 'custom',
          path: ['composition'],
          message: 'send either the wrapper or top-level fields',
        });
      }
      return;
    }
    for (const k of ['v', 'format', 'tracks'] as const) {
      if (b[k] === undefined) {
        ctx.addIssue({ code: 'custom', path: [k], message: 'required (or send a composition wrapper)' });
      }
    }
  }),
  output: outputObject({
    project_id: z.string().describe('The project whose composition was set.'),
    saved: z.boolean().describe('true: the composition is stored.'),
    track_count: z.number().int().describe('Tracks in the stored composition.'),
    clip_count: z.number().int().describe('Clips in the stored composition.'),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  example: {
    project_id: 'prj_0mdx3k2a1b2c3d4e5f6g7h8i9j',
    v: 1,
    format: { aspectRatio: '16:9', fps: 30, resolution: 'fhd' },
    tracks: [
      {
        id: 'track-video',
        kind: 'video',
        contents: [
          {
            id: 'clip-1',
            startTime: 0,
            duration: 4,
            source: { kind: 'media', mediaId: 'med_0mdx3k2a1b2c3d4e5f6g7h8i9j', trim: { start: 0, end: 4 } },
          },
        ],
      },
    ],
  },
  keywords: [
    'video',
    'timeline',
    'edit',
    'composition',
    'clips',
    'tracks',
    'save composition',
    'set timeline',
  ],
});

export const validate = defineAction({
  service: 'videoasm',
  action: 'validate',
  title: 'Validate a composition (dry run)',
  summary:
    'Dry run: checks a composition without saving or rendering it and returns { valid, errors: [{ code, stage, ' +
    'category, retryable, message, fix? }] }. Send v, format and tracks at the top level (or a composition ' +
    'wrapper), shaped as in videoasm/put_composition. Required before put_composition and render: repeat ' +
    'until valid is true. A result with valid: false is a successful (charged) call.',
  whenToUse:
    'Use it before every videoasm/put_composition and videoasm/render, fixing the errors and ' +
    'repeating until valid is true; it is the cheap way to avoid a wasted $1.00 render.',
  priceCents: 1,
  strict: LOOSE,
  input: inputObject(LOOSE, {
    v: z.unknown().optional().describe('Composition wire version; 1.'),
    format: z
      .unknown()
      .optional()
      .describe('{ aspectRatio 16:9|9:16|1:1|4:5, fps 24|30|60, resolution hd|fhd|4k }.'),
    tracks: z
      .unknown()
      .optional()
      .describe('Tracks [{ id, kind, contents: [clip] }], as in put_composition.'),
    composition: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('The composition, as a nested wrapper instead of top-level fields.'),
  }).superRefine((b, ctx) => {
    if (b.composition === undefined && b.tracks === undefined) {
      ctx.addIssue({ code: 'custom', path: ['tracks'], message: 'send the composition (v, format, tracks)' });
    }
  }),
  output: outputObject({
    valid: z.boolean().describe('true when the composition would render as written.'),
    errors: z
      .array(
        outputObject({
          code: z.string().describe('Machine-readable error code.'),
          stage: z.string().describe('Validation stage that found it.'),
          category: z.string().describe('Error category.'),
          retryable: z.boolean().describe('Whether retrying unchanged may succeed.'),
          message: z.string().describe('What is wrong.'),
          fix: z.unknown().optional().describe('Suggested fix, when known.'),
        }),
      )
      .describe('Problems found; empty when valid.'),
  }),
  annotations: read,
  example: {
    v: 1,
    format: { aspectRatio: '16:9', fps: 30, resolution: 'fhd' },
    tracks: [{ id: 'track-video', kind: 'video', contents: [] }],
  },
  keywords: ['video', 'check', 'lint', 'composition', 'dry run', 'valid', 'validate', 'errors'],
});

export const render = defineAction({
  service: 'videoasm',
  action: 'render',
  title: 'Render a project to MP4',
  summary:
    'Step 4 of video assembly. Starts an asynchronous render of the project’s composition and returns ' +
    '{ job_id } at once. Poll videoasm/result with the job_id every few seconds until it is complete; never ' +
    're-run render to check on it: each render call starts and charges a new render. intent preview is a fast ' +
    'draft, final the full-resolution master. priority interactive is reserved for editor sessions (403). ' +
    'If the render fails, its price is refunded when videoasm/result reports the failure.',
  whenToUse:
    'Use it once the composition stored with videoasm/put_composition has passed videoasm/validate ' +
    '(otherwise it is refused, uncharged, and told to validate); use intent preview for a draft ' +
    'before a final render.',
  priceCents: 100,
  strict: LOOSE,
  input: inputObject(LOOSE, {
    project_id: projectId,
    intent: z.enum(['preview', 'final']).optional().describe('preview (fast cheap draft) or final (master).'),
    format: partialFormat.optional(),
    priority: z
      .enum(['standard', 'background', 'interactive'])
      .default('standard')
      .describe('standard (default) or background. interactive is reserved for editor sessions: 403.'),
  }),
  output: outputObject({
    job_id: z.string().describe('Render job id; poll videoasm/result with it.'),
    status: z.string().describe('Status at creation, e.g. "queued".'),
  }),
  annotations: write,
  pollWith: 'videoasm/result',
  jobHandle: 'job_id',
  timeoutMs: 60_000,
  example: { project_id: 'prj_0mdx3k2a1b2c3d4e5f6g7h8i9j', intent: 'preview' },
  keywords: ['video', 'render', 'export', 'mp4', 'make video', 'produce'],
});

export const RENDER_STATES = ['queued', 'rendering', 'complete', 'failed', 'cancelled'] as const;

export const result = defineAction({
  service: 'videoasm',
  action: 'result',
  title: 'Poll a render',
  summary:
    'Returns the state of a render started by videoasm/render: queued, rendering, complete (with output_url, ' +
    'the MP4), failed or cancelled, and finished. While it runs, wait next_poll_seconds between polls; polling ' +
    'never starts a new render. Free (not priced by the spec), rate-limited.',
  whenToUse:
    'Use it after videoasm/render, with its job_id, to learn when the MP4 is ready; it is free, and ' +
    'once finished is true further polls return the same answer.',
  // Not in the spec's price list: free (docs/decisions.md, "Polls"). Public: an accountless (x402) payer polls
  // its render with the job_id alone; an account's job ids need its credential.
  priceCents: 0,
  access: 'public',
  strict: false,
  input: inputObject(false, {
    job_id: z.string().min(1).describe('job_id returned by videoasm/render.'),
  }),
  output: outputObject({
    job_id: z.string().describe('The render job.'),
    status: z.enum(RENDER_STATES).describe('queued, rendering, complete, failed or cancelled.'),
    progress: z.number().nullable().describe('Percent done (0-100) when known.'),
    output_url: z.string().nullable().describe('The finished MP4, when complete.'),
    output_expires_at: z
      .string()
      .nullable()
      .describe('When output_url stops working; poll again for a new one.'),
    error: outputObject({
      message: z.string().describe('Why the render failed.'),
      retryable: z.boolean().describe('Whether rendering again unchanged may succeed.'),
    })
      .nullable()
      .describe('Set when the render failed.'),
    ...pollFields,
  }),
  annotations: read,
  // A render that fails (or is cancelled upstream) is refunded when a poll sees it.
  refundsStart: {
    start: 'videoasm/render',
    handleField: 'job_id',
    failed: (o) => o.status === 'failed' || o.status === 'cancelled',
  },
  example: { job_id: 'rnd_0mdx3k2a1b2c3d4e5f6g7h8i9j' },
  keywords: [
    'video',
    'render',
    'status',
    'poll',
    'download',
    'finished',
    'ready',
    'done',
    'mp4 link',
    'output',
  ],
});

export const videoasm = group(upload, createProject, putComposition, validate, render, result);
