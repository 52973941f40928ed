import { type Action, catalog, findAction } from '../catalog/index.js';
import type { Extracted } from './consult-extract.js';
import { fillParams } from './consult-fill.js';
import { ID_SLOTS, type IdSlot, idFit, idFor, isPoll, producedAt } from './consult-ids.js';

// platform/consult, step 3: goals that take more than one call. A step's input may come from an earlier step's
// output: the field holds a placeholder string "<step N: path>" and `inputs_from` says where to take the real
// value. Flows follow the catalog's own links: a start action's `pollWith` and `jobHandle`, the actions a
// field's description names as its producers (consult-ids), and the spec's video assembly order.

export interface Step {
  action: Action;
  params: Record<string, unknown>;
  inputs_from: Record<string, { step: number; output: string }>;
  note?: string;
}

type Params = Record<string, unknown>;

export const ref = (step: number, output: string) => `<step ${step}: ${output}>`;

function setPath(obj: Params, path: string, value: unknown): void {
  const keys = path.split('.');
  let cur: Params = obj;
  keys.slice(0, -1).forEach((k, i) => {
    const next = keys[i + 1] as string;
    cur[k] ??= /^\d+$/.test(next) ? [] : {};
    cur = cur[k] as Params;
  });
  cur[keys[keys.length - 1] as string] = value;
}

/** A step whose `links` take earlier outputs: { field path → [step, output path] }. */
export function step(
  action: Action,
  params: Params,
  links: Record<string, [number, string]> = {},
  note?: string,
): Step {
  const out: Step = { action, params: structuredClone(params), inputs_from: {} };
  for (const [path, [n, output]] of Object.entries(links)) {
    setPath(out.params, path, ref(n, output));
    out.inputs_from[path] = { step: n, output };
  }
  if (note) out.note = note;
  return out;
}

/** The poll that follows a start action (crawl → crawl_status, render → result), linked to its handle. */
export function withPoll(steps: Step[]): Step[] {
  const last = steps[steps.length - 1];
  const poll = last?.action.pollWith ? findAction(last.action.pollWith) : undefined;
  if (!last || !poll || !last.action.jobHandle) return steps;
  // A start whose handle is optional (scraperB/extract usually answers inline) is polled only when it says so.
  const handle = (
    last.action.output.shape as Record<string, { safeParse(v: unknown): { success: boolean } }>
  )[last.action.jobHandle];
  if (handle?.safeParse(undefined).success) return steps;
  const field = poll.refundsStart?.handleField ?? last.action.jobHandle;
  return [
    ...steps,
    step(poll, {}, { [field]: [steps.length, last.action.jobHandle] }, 'Repeat until finished is true.'),
  ];
}

const MAKE_VIDEO =
  /\b(?:make|made|making|create[ds]?|creating|assembl(?:e|ed|ing)|produc(?:e|ed|ing)|edit(?:ed|ing)?|render(?:ed|ing)?|build|cut|turn(?:ed)?|stitch(?:ed)?|combine[ds]?)\b/;
const VIDEO_WORD = /\b(?:videos?|clips?|reels?|movie|mp4|montage|slideshow|footage|film)\b/;

const mediaSlot = ID_SLOTS.find(
  (s) => s.action.id === 'videoasm/put_composition' && s.path.endsWith('mediaId'),
);
const mediaIdOf = (x: Extracted) =>
  x.ids.find((i) => mediaSlot?.prefix !== undefined && i.prefix === mediaSlot.prefix)?.value;

/** Bytes the person holds: "from my disk", "on my laptop", "a local file". */
export const LOCAL =
  /\b(?:from|on|in|off) (?:my|the|our|your|this) (?:disk|drive|hard drive|computer|laptop|desktop|machine|pc|mac|phone|device|downloads|folder)\b|\blocal(?:ly)?\b|\bi have (?:a|the)? ?(?:video|file|clip)\b/;

/** The goal asks for a finished video from media it names (a URL, a local file, a stored file or a media id). */
export function wantsVideoPipeline(x: Extracted): boolean {
  const fileId = idFor(catalog['videoasm/upload'], 'file_id', x.ids);
  const media = mediaIdOf(x);
  const source =
    x.urls.length > 0 ||
    x.filename !== undefined ||
    fileId !== undefined ||
    media !== undefined ||
    LOCAL.test(x.lower);
  if (!source) return false;
  // A stored file or imported media is video material already: asking to render or edit it is enough.
  if ((media || fileId) && (MAKE_VIDEO.test(x.lower) || /\bclip\b|\btrack\b|\bcomposition\b/.test(x.lower)))
    return true;
  return MAKE_VIDEO.test(x.lower) && VIDEO_WORD.test(x.lower);
}

/** Seconds of the clip when the goal says ("a 15-second video"), else the whole of a short default. */
function clipSeconds(x: Extracted): number {
  const m = /\b(\d{1,4})[- ]?(?:s|sec|secs|second|seconds)\b/.exec(x.lower);
  return m ? Number(m[1]) : 10;
}

/** Every id in the goal that fits a slot's kind exactly (several stored files, several media items). */
function idsOfKind(x: Extracted, slot: IdSlot | undefined): string[] {
  return slot ? x.ids.filter((i) => idFit(slot, i) === 2).map((i) => i.value) : [];
}

/**
 * docs/spec.md §4.2's order, from where the goal starts: store → import → project → validate → put → render →
 * result. Each source the goal names (URLs, a local file, stored files, media items) becomes one clip, in order.
 */
export function videoPipeline(x: Extracted): Step[] {
  const steps: Step[] = [];
  const upload = catalog['videoasm/upload'];
  const fileSlot = ID_SLOTS.find((s) => s.action === upload && s.path === 'file_id');
  const projectId = idFor(catalog['videoasm/render'], 'project_id', x.ids);
  // Media already imported, or each source imported: [step, output] for a link, or the id itself.
  const clips: Array<[number, string] | string> = idsOfKind(x, mediaSlot);
  const uploadParams = fillParams(upload, x);
  delete uploadParams.file_id;
  for (const fileId of idsOfKind(x, fileSlot)) {
    steps.push(step(upload, { ...uploadParams, file_id: fileId }));
    clips.push([steps.length, 'media_id']);
  }
  const store = (action: Action, params: Params, note?: string) => {
    steps.push(step(action, params, {}, note));
    steps.push(step(upload, uploadParams, { file_id: [steps.length, 'file_id'] }));
    clips.push([steps.length, 'media_id']);
  };
  const fromUrl = catalog['files/upload_from_url'];
  for (const url of x.urls.slice(0, 5)) store(fromUrl, { ...fillParams(fromUrl, x), url });
  if (clips.length === 0) {
    const local = catalog['files/upload'];
    store(local, fillParams(local, x), 'Then PUT the bytes to put_url.');
  }
  const format = {
    aspectRatio: x.aspectRatio ?? '16:9',
    fps: x.fps ?? 30,
    resolution: x.resolution ?? 'fhd',
  };
  let project: [number, string] | undefined;
  if (!projectId) {
    steps.push(
      step(catalog['videoasm/create_project'], { name: x.name ?? x.quoted[0] ?? 'New video', format }),
    );
    project = [steps.length, 'id'];
  }
  const seconds = clipSeconds(x);
  const links: Record<string, [number, string]> = {};
  const contents = clips.map((c, i) => {
    if (typeof c !== 'string') links[`tracks.0.contents.${i}.source.mediaId`] = c;
    const source = {
      kind: 'media',
      mediaId: typeof c === 'string' ? c : '',
      trim: { start: 0, end: seconds },
    };
    return { id: `clip-${i + 1}`, startTime: i * seconds, duration: seconds, source };
  });
  const composition = { v: 1, format, tracks: [{ id: 'track-video', kind: 'video', contents }] };
  const projectLink: Record<string, [number, string]> = project ? { project_id: project } : {};
  const withProject = projectId ? { project_id: projectId } : {};
  steps.push(
    step(catalog['videoasm/validate'], composition, links, 'Repeat, fixing errors, until valid is true.'),
  );
  steps.push(
    step(
      catalog['videoasm/put_composition'],
      { ...withProject, ...composition },
      { ...projectLink, ...links },
    ),
  );
  const render = catalog['videoasm/render'];
  const renderParams = fillParams(render, x);
  delete renderParams.project_id;
  steps.push(step(render, { ...withProject, ...renderParams }, projectLink));
  return withPoll(steps);
}

/**
 * A render needs a stored composition that passed validation (the catalog's videoasm/render and put_composition
 * rules): when a plan renders a project it creates, or the goal speaks of validating its composition, the plan
 * gets validate → put_composition before the render. What the goal does not give (the tracks) is left missing.
 */
export function withComposition(steps: Step[], x: Extracted): Step[] {
  const r = steps.findIndex((s) => s.action.id === 'videoasm/render');
  if (r < 0 || steps.slice(0, r).some((s) => s.action.id === 'videoasm/put_composition')) return steps;
  const created = steps.slice(0, r).some((s) => s.action.id === 'videoasm/create_project');
  if (!created && !/\bvalidat|\bcomposition\b/.test(x.lower)) return steps;
  const render = steps[r] as Step;
  const link = render.inputs_from.project_id;
  const projectLink: Record<string, [number, string]> = link ? { project_id: [link.step, link.output] } : {};
  const given = link ? {} : { project_id: render.params.project_id };
  const out = steps.slice(0, r);
  const media = idsOfKind(x, mediaSlot);
  const seconds = clipSeconds(x);
  const format = {
    aspectRatio: x.aspectRatio ?? '16:9',
    fps: x.fps ?? 30,
    resolution: x.resolution ?? 'fhd',
  };
  const contents = media.map((m, i) => ({
    id: `clip-${i + 1}`,
    startTime: i * seconds,
    duration: seconds,
    source: { kind: 'media', mediaId: m, trim: { start: 0, end: seconds } },
  }));
  const tracks = contents.length > 0 ? { tracks: [{ id: 'track-video', kind: 'video', contents }] } : {};
  const composition = { v: 1, format, ...tracks };
  out.push(
    step(catalog['videoasm/validate'], composition, {}, 'Repeat, fixing errors, until valid is true.'),
  );
  out.push(step(catalog['videoasm/put_composition'], { ...given, ...composition }, projectLink));
  const params = { ...render.params };
  delete params.project_id;
  out.push(step(render.action, { ...given, ...params }, projectLink, render.note));
  return withPoll(out);
}

/** The slot of a required field of `action` the goal left empty, and an action that would produce it. */
export interface Prerequisite {
  slot: IdSlot;
  producer: Action;
}

/**
 * Where the goal starts when the action it wants needs an id it does not give: the producer of that id, if the
 * goal gives what the producer needs (a file to store, a partial address to resolve). A poll is never preceded
 * by its start: that would start, and charge for, new work.
 */
export function prerequisite(
  action: Action,
  missing: readonly string[],
  x: Extracted,
  runnable: (a: Action) => boolean,
  complete: (a: Action) => boolean,
): Prerequisite | undefined {
  if (isPoll(action)) return undefined;
  for (const slot of ID_SLOTS) {
    if (slot.action !== action || !missing.some((m) => m === slot.path || m === '(body)')) continue;
    // A producer the goal gives values for, or the one that takes the bytes the person says they hold.
    const local = (p: Action) => LOCAL.test(x.lower) && /\blocal/.test(p.whenToUse.split(';')[0] ?? '');
    const options = slot.producers.filter(
      (p) => runnable(p) && (Object.keys(fillParams(p, x)).length > 0 || local(p)),
    );
    const producer = options.find(complete) ?? options[0];
    if (producer) return { slot, producer };
  }
  return undefined;
}

/** The producer's steps, then the action's, its id taken from the producer's output. */
export function afterProducer(
  pre: Prerequisite,
  before: Step[],
  params: Params,
  producerStep = before.length,
): Step[] {
  const at = producedAt(pre.producer, pre.slot);
  const own = { ...params };
  if (pre.slot.numeric) for (const k of ['address', 'search', 'house', 'street']) delete own[k];
  const links: Record<string, [number, string]> = at ? { [pre.slot.path]: [producerStep, at] } : {};
  const note = pre.slot.numeric || at?.includes('.0.') ? 'Use the id of the right result.' : undefined;
  return withPoll([...before, step(pre.slot.action, own, links, note)]);
}
