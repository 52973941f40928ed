import { type Action, catalog, findAction } from '../catalog/index.js';
import type { Extracted } from './consult-extract.js';
import { fillParams } from './consult-fill.js';

// platform/consult, step 3: goals that take more than one call. A step's input may come from an earlier step's
// output: the field holds a placeholder string "<step N: path>" (so the body validates as returned) and
// `inputs_from` says where to take the real value. Flows follow the catalog's own links: a start action's
// `pollWith` and `jobHandle`, a poll's `refundsStart.handleField`, and the spec's video assembly order.

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

/** A step whose `fields` take earlier outputs: { field path → [step, output path] }. */
function step(
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

const MAKE_VIDEO = /\b(make|create|assemble|produce|edit|render|build|cut|turn)\b/;
const VIDEO_WORD = /\b(video|clip|reel|movie|mp4|montage|slideshow|render)\b/;

/** The goal asks for a finished video from media it names (a URL, a local file name or a stored file id). */
export function wantsVideoPipeline(x: Extracted): boolean {
  const source = x.urls.length > 0 || x.filename !== undefined || x.ids.some((i) => i.kind === 'file');
  return (
    source && MAKE_VIDEO.test(x.lower) && VIDEO_WORD.test(x.lower) && !x.ids.some((i) => i.kind === 'project')
  );
}

/** Seconds of the clip when the goal says ("a 15-second video"), else the whole of a short default. */
function clipSeconds(x: Extracted): number {
  const m = /\b(\d{1,4})[- ]?(?:s|sec|secs|second|seconds)\b/.exec(x.lower);
  return m ? Number(m[1]) : 10;
}

/** docs/spec.md §4.2's order: store → import → project → validate → put_composition → render → result. */
export function videoPipeline(x: Extracted): Step[] {
  const steps: Step[] = [];
  const fileId = x.ids.find((i) => i.kind === 'file')?.value;
  let fileStep = 0;
  if (!fileId) {
    const store = x.urls.length > 0 ? catalog['files/upload_from_url'] : catalog['files/upload'];
    steps.push(
      step(
        store,
        fillParams(store, x),
        {},
        store === catalog['files/upload'] ? 'Then PUT the bytes to put_url.' : undefined,
      ),
    );
    fileStep = 1;
  }
  const upload = catalog['videoasm/upload'];
  steps.push(
    fileStep ? step(upload, {}, { file_id: [fileStep, 'file_id'] }) : step(upload, { file_id: fileId }),
  );
  const uploadStep = steps.length;
  const create = catalog['videoasm/create_project'];
  const format = {
    aspectRatio: x.aspectRatio ?? '16:9',
    fps: x.fps ?? 30,
    resolution: x.resolution ?? 'fhd',
  };
  steps.push(step(create, { name: x.name ?? 'New video', format }));
  const projectStep = steps.length;
  const seconds = clipSeconds(x);
  const composition = {
    v: 1,
    format,
    tracks: [
      {
        id: 'track-video',
        kind: 'video',
        contents: [
          {
            id: 'clip-1',
            startTime: 0,
            duration: seconds,
            source: { kind: 'media', mediaId: '', trim: { start: 0, end: seconds } },
          },
        ],
      },
    ],
  };
  const media = 'tracks.0.contents.0.source.mediaId';
  steps.push(
    step(
      catalog['videoasm/validate'],
      composition,
      { [media]: [uploadStep, 'media_id'] },
      'Repeat, fixing errors, until valid is true.',
    ),
  );
  steps.push(
    step(catalog['videoasm/put_composition'], composition, {
      project_id: [projectStep, 'id'],
      [media]: [uploadStep, 'media_id'],
    }),
  );
  const render = catalog['videoasm/render'];
  const renderParams = fillParams(render, x);
  delete renderParams.project_id;
  steps.push(step(render, renderParams, { project_id: [projectStep, 'id'] }));
  return withPoll(steps);
}

/** A lookup of a partial address: resolve it first (1 cent), then look up by the id it returns. */
export function viaAutocomplete(x: Extracted, lookup: Action): Step[] {
  const auto = catalog['propdata/autocomplete'];
  const params = fillParams(lookup, x);
  for (const k of ['address', 'search']) delete params[k];
  return [
    step(auto, fillParams(auto, x)),
    step(lookup, params, { id: [1, 'results.0.id'] }, 'Use the id of the right candidate.'),
  ];
}

export function single(action: Action, params: Params): Step[] {
  return withPoll([step(action, params)]);
}
