import { describe, expect, it } from 'vitest';
import { type Action, findAction } from '../../catalog/index.js';
import { inputJsonSchema, outputJsonSchema } from '../../catalog/json-schema.js';
import { composition } from '../../catalog/videoasm-composition.js';
import { zodIssues } from '../../src/run/zod-issues.js';
import { compositionOf, schemaIssues } from '../../tools/videoasm-compose.js';

// videoasm constraints (docs/spec.md §2.5, §4.2) on the catalog schemas, and the gateway's own composition checks.

const action = (id: string): Action => {
  const a = findAction(id);
  if (!a) throw new Error(`missing ${id}`);
  return a;
};
const paths = (id: string, body: unknown): string[] => {
  const r = action(id).input.safeParse(body);
  return r.success ? [] : zodIssues(r.error).map((i) => i.path);
};

const IDS = [
  'videoasm/upload',
  'videoasm/create_project',
  'videoasm/put_composition',
  'videoasm/validate',
  'videoasm/render',
  'videoasm/result',
];

const clip = (source: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  id: 'c1',
  startTime: 0,
  duration: 2,
  source,
  ...extra,
});
const comp = (clips: unknown[], kind = 'video') => ({
  v: 1,
  format: { aspectRatio: '9:16', fps: 30, resolution: 'fhd' },
  tracks: [{ id: 't1', kind, contents: clips }],
});
const media = (extra: Record<string, unknown> = {}) => ({ kind: 'media', mediaId: 'med_1', ...extra });
const segment = (extra: Record<string, unknown> = {}) => ({
  startSec: 0,
  endSec: 1,
  zoom: 1,
  focus: { mode: 'frame-center' },
  ...extra,
});
const compPaths = (c: unknown) => {
  const r = composition.safeParse(c);
  return r.success ? [] : zodIssues(r.error).map((i) => i.path);
};

describe('videoasm catalog entries', () => {
  it('[catalog:prices] [polls:free-unpriced] prices match docs/spec.md §4.1 (result, an unpriced poll, is free)', () => {
    expect(IDS.map((id) => action(id).priceCents)).toEqual([1, 1, 1, 1, 100, 0]);
    expect(action('videoasm/result').access).toBe('public');
    expect(action('videoasm/render').pollWith).toBe('videoasm/result');
    expect(action('videoasm/render').description).toMatch(/never re-run render/i);
  });

  it.each(IDS)('%s: four annotations, described fields, a valid example', (id) => {
    const a = action(id);
    // docs/spec.md §4.2: additional properties allowed, the poll action too (like every videoasm action).
    expect(a.strict).toBe(false);
    expect(Object.keys(a.annotations)).toHaveLength(4);
    const props = inputJsonSchema(a).properties as Record<string, { description?: string }>;
    for (const [k, v] of Object.entries(props)) expect(v.description, `${id}.${k}`).toBeTruthy();
    expect(outputJsonSchema(a).properties).toBeTruthy();
    expect(a.input.safeParse(a.example).success, JSON.stringify(a.input.safeParse(a.example).error)).toBe(
      true,
    );
  });

  it('[catalog:constraints] [videoasm:upload-content-types] upload: file_id, filename 1-500, accepted contentType', () => {
    expect(paths('videoasm/upload', { file_id: 'f', filename: 'x'.repeat(500), extra: true })).toEqual([]);
    expect(paths('videoasm/upload', { file_id: '' })).toEqual(['file_id']);
    expect(paths('videoasm/upload', { file_id: 'f', filename: 'x'.repeat(501) })).toEqual(['filename']);
    for (const t of [
      'video/mp4',
      'video/quicktime',
      'video/x-matroska',
      'video/webm',
      'audio/mpeg',
      'audio/wav',
    ]) {
      expect(paths('videoasm/upload', { file_id: 'f', contentType: t })).toEqual([]);
    }
    for (const t of ['audio/x-wav', 'audio/mp4', 'audio/aac', 'image/png', 'image/jpeg', 'IMAGE/WEBP']) {
      expect(paths('videoasm/upload', { file_id: 'f', contentType: t })).toEqual([]);
    }
    for (const t of ['', 'image/gif', 'application/pdf', 'video/avi']) {
      expect(paths('videoasm/upload', { file_id: 'f', contentType: t })).toEqual(['contentType']);
    }
  });

  it('[catalog:constraints] create_project: name 1-200, format enums', () => {
    expect(paths('videoasm/create_project', { name: 'x'.repeat(200), format: { fps: 60 } })).toEqual([]);
    expect(paths('videoasm/create_project', { name: '' })).toEqual(['name']);
    expect(paths('videoasm/create_project', { name: 'x'.repeat(201) })).toEqual(['name']);
    expect(paths('videoasm/create_project', { name: 'a', format: { aspectRatio: '4:3' } })).toEqual([
      'format.aspectRatio',
    ]);
    expect(paths('videoasm/create_project', { name: 'a', format: { fps: 25 } })).toEqual(['format.fps']);
    expect(paths('videoasm/create_project', { name: 'a', format: { resolution: '8k' } })).toEqual([
      'format.resolution',
    ]);
  });

  it('[catalog:constraints] render: project_id, intent, priority (interactive parses; refused by precheck)', () => {
    const p = action('videoasm/render').input.parse({ project_id: 'p' }) as Record<string, unknown>;
    expect(p.priority).toBe('standard');
    expect(paths('videoasm/render', { project_id: 'p', priority: 'interactive' })).toEqual([]);
    expect(paths('videoasm/render', { project_id: 'p', priority: 'urgent' })).toEqual(['priority']);
    expect(paths('videoasm/render', { project_id: 'p', intent: 'draft' })).toEqual(['intent']);
    expect(paths('videoasm/render', { project_id: '' })).toEqual(['project_id']);
    expect(paths('videoasm/result', { job_id: 'j', extra: 'kept' })).toEqual([]);
    expect(paths('videoasm/result', {})).toEqual(['job_id']);
  });

  it('[videoasm:composition-wrapper] put_composition: top-level fields or a wrapper, not neither or both', () => {
    const c = comp([clip(media())]);
    expect(paths('videoasm/put_composition', { project_id: 'p', ...c })).toEqual([]);
    expect(paths('videoasm/put_composition', { project_id: 'p', composition: c })).toEqual([]);
    expect(paths('videoasm/put_composition', { project_id: 'p' })).toEqual(['v', 'format', 'tracks']);
    expect(paths('videoasm/put_composition', { project_id: 'p', ...c, composition: c })).toEqual([
      'composition',
    ]);
    expect(paths('videoasm/put_composition', { project_id: 'p', composition: { ...c, v: 2 } })).toEqual([
      'composition.v',
    ]);
    expect(compositionOf({ project_id: 'p', ...c, markers: [] }, ['project_id'])).toEqual({
      ...c,
      markers: [],
    });
    expect(compositionOf({ project_id: 'p', composition: c }, ['project_id'])).toEqual(c);
    // validate accepts anything shaped like a body and reports problems as entries.
    expect(paths('videoasm/validate', { composition: { v: 7 } })).toEqual([]);
    expect(paths('videoasm/validate', { v: 1 })).toEqual(['tracks']);
  });

  it('[videoasm:composition-schema] v 1, format enums, track kinds, required clip fields', () => {
    expect(compPaths(comp([clip(media())]))).toEqual([]);
    expect(compPaths({ ...comp([]), v: 2 })).toEqual(['v']);
    expect(compPaths({ ...comp([]), format: { aspectRatio: '16:9', fps: 25, resolution: 'hd' } })).toEqual([
      'format.fps',
    ]);
    for (const k of ['video', 'audio', 'image', 'overlay', 'effect'])
      expect(compPaths(comp([], k))).toEqual([]);
    expect(compPaths(comp([], 'subtitle'))).toEqual(['tracks.0.kind']);
    for (const f of ['id', 'startTime', 'duration', 'source']) {
      const c = clip(media()) as Record<string, unknown>;
      delete c[f];
      expect(compPaths(comp([c]))).toEqual([`tracks.0.contents.0.${f}`]);
    }
    // Optional clip fields (types not shown by the spec) pass through to the provider's validator.
    expect(
      compPaths(comp([clip(media(), { opacity: 0.5, fit: 'cover', transitionIn: { type: 'fade' } })])),
    ).toEqual([]);
  });

  it('[videoasm:composition-schema] the four source kinds and their fields; volume 0-4', () => {
    expect(
      compPaths(comp([clip({ kind: 'component', componentId: 'title', props: { text: 'Hi' } })])),
    ).toEqual([]);
    expect(
      compPaths(comp([clip({ kind: 'effect', primitiveId: 'vignette', params: { intensity: 0.1 } })])),
    ).toEqual([]);
    const overlay = {
      kind: 'overlay',
      primitiveId: 'heroText',
      params: {},
      zPlane: 'behind-subject',
      anchor: 'c',
    };
    expect(compPaths(comp([clip(overlay)], 'overlay'))).toEqual([]);
    expect(compPaths(comp([clip({ kind: 'overlay', type: 'text', at: 1 })], 'overlay'))).toEqual([
      'tracks.0.contents.0.source.primitiveId',
    ]);
    expect(compPaths(comp([clip({ kind: 'sticker' })]))).toEqual(['tracks.0.contents.0.source.kind']);
    expect(compPaths(comp([clip(media({ volume: 4 }))]))).toEqual([]);
    expect(compPaths(comp([clip(media({ volume: 4.01 }))]))).toEqual(['tracks.0.contents.0.source.volume']);
    expect(compPaths(comp([clip(media({ volume: -1 }))]))).toEqual(['tracks.0.contents.0.source.volume']);
  });

  it('[videoasm:zoom-above-1-invalid] reframe: zoom at most 1.0; focus modes point (x, y), frame-center, face, others', () => {
    const reframe = (s: unknown) => comp([clip(media({ reframe: { segments: [s] } }))]);
    const at = 'tracks.0.contents.0.source.reframe.segments.0';
    expect(compPaths(reframe(segment({ zoom: 1.0 })))).toEqual([]);
    expect(
      compPaths(reframe(segment({ zoom: 0.5, ease: { in: 0.2, out: 0 }, bias: { x: -0.3, y: 0 } }))),
    ).toEqual([]);
    expect(compPaths(reframe(segment({ zoom: 1.01 })))).toEqual([`${at}.zoom`]);
    expect(compPaths(reframe(segment({ focus: { mode: 'point', x: 0.4, y: 0.5 } })))).toEqual([]);
    expect(compPaths(reframe(segment({ focus: { mode: 'point', x: 0.4 } })))).toEqual([`${at}.focus.y`]);
    expect(compPaths(reframe(segment({ focus: { mode: 'face' } })))).toEqual([]);
    expect(compPaths(reframe(segment({ focus: { mode: 'active-speaker' } })))).toEqual([]);
    expect(compPaths(reframe(segment({ startSec: 2, endSec: 1 })))).toEqual([`${at}.endSec`]);
    // validate reports the same rule as an entry, not as a refused call.
    const issues = schemaIssues(reframe(segment({ zoom: 1.5 })) as Record<string, unknown>);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ code: 'invalid_field', stage: 'schema', retryable: false });
    expect(issues[0]?.message).toContain(`${at}.zoom`);
  });
});
