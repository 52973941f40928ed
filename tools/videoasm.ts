import { baseMediaType, isAcceptedContentType } from '../catalog/videoasm.js';
import { GatewayError, invalidInput, notConfigured } from '../src/errors.js';
import type { CueFrameClient } from '../src/upstreams/cueframe.js';
import type { HandleRecord, HandlerContext, Services } from './context.js';
import { pollableHandle, pollState } from './poll.js';
import type { InputOf, ServiceHandlers } from './types.js';
import {
  compositionOf,
  countClips,
  MEDIA_HANDLE,
  schemaIssues,
  speakOurIds,
  translateMedia,
} from './videoasm-compose.js';
import { recordStored, recordValidated, requireValidated } from './videoasm-guard.js';

// videoasm: CueFrame. Every id we hand out (media_id, project id, job_id) is a server-minted handle bound to
// the caller's account and mapped to CueFrame's id; CueFrame's ids never leave the gateway, so one account
// cannot touch another's projects, media or renders through a shared vendor account.

const PROJECT_HANDLE = 'prj';
const RENDER_HANDLE = 'rnd';

const notConfiguredError = () => notConfigured('Video assembly (videoasm)', ['TOLLGATE_CUEFRAME_API_KEY']);
const precheckConfigured = (_input: unknown, services: Services) =>
  services.vendors.cueframe ? undefined : notConfiguredError();

function cueframe(ctx: HandlerContext): CueFrameClient {
  const c = ctx.services.vendors.cueframe;
  if (!c) throw notConfiguredError();
  return c;
}

async function ownProject(ctx: HandlerContext, projectId: string): Promise<HandleRecord> {
  const rec = await ctx.services.handles.resolve(ctx.owner, PROJECT_HANDLE, projectId);
  if (!rec) {
    throw new GatewayError(
      'resource_not_found',
      'No project with this project_id in your account; create one with videoasm/create_project. Nothing was charged.',
      { details: { issues: [{ path: 'project_id', message: 'not found' }] } },
    );
  }
  return rec;
}

/** The content type videoasm/upload imports with: the override, else the stored file's, checked against docs/spec.md §4.2. */
function importType(input: InputOf<'videoasm/upload'>, storedMime: string | null): string {
  if (input.contentType !== undefined) return baseMediaType(input.contentType);
  if (storedMime && isAcceptedContentType(storedMime)) return baseMediaType(storedMime);
  throw invalidInput([
    {
      path: 'contentType',
      message: `the stored file's type (${storedMime ?? 'unknown'}) is not an accepted video, audio or image type; pass contentType`,
    },
  ]);
}

export const videoasmHandlers: ServiceHandlers<'videoasm'> = {
  'videoasm/upload': {
    precheck: precheckConfigured,
    provider: () => 'cueframe',
    run: async (input, ctx) => {
      const file = await ctx.services.files.get(ctx.owner, input.file_id);
      if (!file) {
        throw new GatewayError(
          'resource_not_found',
          'No file with this file_id in your account; files/list shows your files. Nothing was charged.',
          { details: { issues: [{ path: 'file_id', message: 'not found' }] } },
        );
      }
      if (file.status !== 'stored') {
        throw invalidInput([
          { path: 'file_id', message: 'the file has no bytes yet: PUT them to its put_url first' },
        ]);
      }
      const contentType = importType(input, file.mime);
      // CueFrame fetches the bytes itself, through a signed download link of our storage.
      const { url } = await ctx.services.files.link(file, 'GET');
      const media = await cueframe(ctx).importMedia(
        { url, filename: input.filename ?? file.filename, contentType },
        { signal: ctx.signal },
      );
      const mediaId = await ctx.services.handles.mint(ctx.owner, MEDIA_HANDLE, media.id, {
        file_id: file.file_id,
      });
      return { media_id: mediaId, status: media.status };
    },
  },

  'videoasm/create_project': {
    precheck: precheckConfigured,
    provider: () => 'cueframe',
    run: async (input, ctx) => {
      const project = await cueframe(ctx).createProject(
        {
          name: input.name,
          ...(input.format ? { format: input.format } : {}),
          ...(input.brandKitId ? { brandKitId: input.brandKitId } : {}),
        },
        { signal: ctx.signal },
      );
      const id = await ctx.services.handles.mint(ctx.owner, PROJECT_HANDLE, project.id, { name: input.name });
      return { id, name: input.name };
    },
  },

  'videoasm/put_composition': {
    precheck: precheckConfigured,
    provider: () => 'cueframe',
    run: async (input, ctx) => {
      const project = await ownProject(ctx, input.project_id);
      const composition = compositionOf(input, ['project_id']);
      const t = await translateMedia(composition, ctx);
      if (t.unknown.length > 0) {
        throw invalidInput(
          t.unknown.map((u) => ({
            path: u.path,
            message: `${u.id} is not one of your media items (videoasm/upload)`,
          })),
        );
      }
      await cueframe(ctx).putComposition(project.ref, t.composition, { signal: ctx.signal });
      await recordStored(ctx, project, composition);
      const n = countClips(composition);
      return { project_id: input.project_id, saved: true, track_count: n.tracks, clip_count: n.clips };
    },
  },

  'videoasm/validate': {
    precheck: precheckConfigured,
    provider: () => 'cueframe',
    run: async (input, ctx) => {
      const composition = compositionOf(input, []);
      // The gateway's own checks first: a structurally broken composition is reported without a round trip,
      // as validation entries (docs/spec.md §7 rule 3), not as a refused call.
      const issues = schemaIssues(composition);
      const t = await translateMedia(composition, ctx);
      for (const u of t.unknown) {
        issues.push({
          code: 'unknown_media',
          stage: 'references',
          category: 'media',
          retryable: false,
          message: `${u.path}: ${u.id} is not one of your media items; import it with videoasm/upload`,
          fix: { path: u.path },
        });
      }
      if (issues.length > 0) return { valid: false, errors: issues };
      const res = await cueframe(ctx).validateComposition(t.composition, { signal: ctx.signal });
      const errors = speakOurIds(res.errors, t.reverse);
      if (res.valid) await recordValidated(ctx, composition);
      return { valid: res.valid, errors };
    },
  },

  'videoasm/render': {
    // docs/spec.md §7: priority interactive is reserved for editor-session tokens; an API caller gets 403 before any hold.
    precheck: (input, services) =>
      input.priority === 'interactive'
        ? new GatewayError(
            'forbidden',
            'priority "interactive" is reserved for editor sessions; use standard or background. Nothing was charged.',
            {
              details: {
                issues: [{ path: 'priority', message: 'interactive is not available to API callers' }],
              },
            },
          )
        : precheckConfigured(input, services),
    provider: () => 'cueframe',
    run: async (input, ctx) => {
      const project = await ownProject(ctx, input.project_id);
      await requireValidated(ctx, project);
      const projectRef = project.ref;
      const render = await cueframe(ctx).createRender(
        projectRef,
        {
          priority: input.priority,
          ...(input.intent ? { intent: input.intent } : {}),
          ...(input.format ? { format: input.format } : {}),
        },
        { signal: ctx.signal },
      );
      const jobId = await ctx.services.handles.mint(ctx.owner, RENDER_HANDLE, render.id, {
        project: projectRef,
        project_id: input.project_id,
        intent: input.intent ?? null,
        priority: input.priority,
      });
      return { job_id: jobId, status: render.status };
    },
  },

  'videoasm/result': {
    precheck: precheckConfigured,
    provider: () => 'cueframe',
    run: async (input, ctx) => {
      const rec = await pollableHandle(ctx, RENDER_HANDLE, input.job_id);
      if (!rec || typeof rec.data.project !== 'string') {
        throw new GatewayError('resource_not_found', 'No render with this job_id in your account.', {
          details: { issues: [{ path: 'job_id', message: 'not found' }] },
        });
      }
      const r = await cueframe(ctx).getRender(rec.data.project, rec.ref, { signal: ctx.signal });
      return pollState(
        {
          job_id: input.job_id,
          status: r.status,
          progress: r.progress,
          output_url: r.outputUrl,
          output_expires_at: r.outputExpiresAt,
          error:
            r.status === 'failed'
              ? {
                  message:
                    'The render failed. Validate the composition with videoasm/validate, fix it, then render again.',
                  retryable: r.retryable,
                }
              : null,
        },
        ['queued', 'rendering'],
      );
    },
  },
};
