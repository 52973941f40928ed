import { composition as compositionSchema } from '../catalog/videoasm-composition.js';
import type { ValidationIssue } from '../src/upstreams/cueframe.js';
import type { HandlerContext } from './context.js';

// Compositions on their way to CueFrame: unwrapping, the gateway's own docs/spec.md §2.5 checks, and the translation of
// our media ids (owner-bound handles minted by videoasm/upload) into CueFrame's. A mediaId that is not one of
// the caller's own media items never reaches CueFrame, so one account cannot render another's media.

export const MEDIA_HANDLE = 'med';

type Json = Record<string, unknown>;

/** The composition of a body: its `composition` wrapper, else the body minus the action's own fields. */
export function compositionOf(body: Json, own: readonly string[]): Json {
  if (body.composition && typeof body.composition === 'object' && !Array.isArray(body.composition)) {
    return body.composition as Json;
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(body)) if (!own.includes(k) && k !== 'composition') out[k] = v;
  return out;
}

/** docs/spec.md §2.5 checks (enums, required clip fields, volume 0-4, zoom at most 1.0, …) as validation entries. */
export function schemaIssues(composition: Json): ValidationIssue[] {
  const parsed = compositionSchema.safeParse(composition);
  if (parsed.success) return [];
  return parsed.error.issues.slice(0, 50).map((i) => {
    const path = i.path.map(String).join('.');
    return {
      code: 'invalid_field',
      stage: 'schema',
      category: 'schema',
      retryable: false,
      message: path ? `${path}: ${i.message}` : i.message,
      fix: { path },
    };
  });
}

interface MediaRef {
  path: string;
  source: Json;
  id: string;
}

function mediaRefs(composition: Json): MediaRef[] {
  const refs: MediaRef[] = [];
  const tracks = Array.isArray(composition.tracks) ? composition.tracks : [];
  tracks.forEach((t, ti) => {
    const contents = t && typeof t === 'object' ? (t as Json).contents : undefined;
    if (!Array.isArray(contents)) return;
    contents.forEach((c, ci) => {
      const source = c && typeof c === 'object' ? (c as Json).source : undefined;
      if (!source || typeof source !== 'object') return;
      const s = source as Json;
      if (s.kind === 'media' && typeof s.mediaId === 'string') {
        refs.push({ path: `tracks.${ti}.contents.${ci}.source.mediaId`, source: s, id: s.mediaId });
      }
    });
  });
  return refs;
}

export interface Translated {
  composition: Json;
  /** mediaIds that are not the caller's media items, by body path. */
  unknown: Array<{ path: string; id: string }>;
  /** CueFrame media id → our media_id, to speak our ids in CueFrame's validation messages. */
  reverse: Map<string, string>;
}

/** A deep copy of the composition with every media handle replaced by CueFrame's media id. */
export async function translateMedia(composition: Json, ctx: HandlerContext): Promise<Translated> {
  const copy = structuredClone(composition);
  const unknown: Translated['unknown'] = [];
  const reverse = new Map<string, string>();
  const cache = new Map<string, string | undefined>();
  for (const ref of mediaRefs(copy)) {
    if (!cache.has(ref.id)) {
      const rec = await ctx.services.handles.resolve(ctx.owner, MEDIA_HANDLE, ref.id);
      cache.set(ref.id, rec?.ref);
    }
    const upstreamId = cache.get(ref.id);
    if (upstreamId === undefined) {
      unknown.push({ path: ref.path, id: ref.id });
      continue;
    }
    ref.source.mediaId = upstreamId;
    reverse.set(upstreamId, ref.id);
  }
  return { composition: copy, unknown, reverse };
}

/** CueFrame's validation entries with its media ids replaced by ours. */
export function speakOurIds(issues: ValidationIssue[], reverse: Map<string, string>): ValidationIssue[] {
  if (reverse.size === 0) return issues;
  const swap = (s: string) => {
    let out = s;
    for (const [theirs, ours] of reverse) out = out.split(theirs).join(ours);
    return out;
  };
  return issues.map((i) => ({
    ...i,
    message: swap(i.message),
    ...(i.fix === undefined ? {} : { fix: JSON.parse(swap(JSON.stringify(i.fix))) as unknown }),
  }));
}

export function countClips(composition: Json): { tracks: number; clips: number } {
  const tracks = Array.isArray(composition.tracks) ? composition.tracks : [];
  let clips = 0;
  for (const t of tracks) {
    const contents = t && typeof t === 'object' ? (t as Json).contents : undefined;
    if (Array.isArray(contents)) clips += contents.length;
  }
  return { tracks: tracks.length, clips };
}
