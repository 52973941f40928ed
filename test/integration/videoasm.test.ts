import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeCueFrame, startFakeCueFrame } from '../fakes/cueframe.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { STORAGE_MODES, useStorage } from '../helpers/storage.js';

// The whole video flow through the HTTP shim against the fake CueFrame: files/upload → videoasm/upload →
// create_project → validate → put_composition → render → result, plus refusals, ownership and vendor failures.

type Json = Record<string, unknown>;

const FORMAT = { aspectRatio: '9:16', fps: 30, resolution: 'fhd' };
const composition = (mediaId: string, segment: Json = {}) => ({
  v: 1,
  format: FORMAT,
  tracks: [
    {
      id: 'track-video',
      kind: 'video',
      contents: [
        {
          id: 'clip-1',
          startTime: 0,
          duration: 2,
          fit: 'cover',
          source: {
            kind: 'media',
            mediaId,
            trim: { start: 0, end: 2 },
            volume: 1,
            reframe: { segments: [{ startSec: 0, endSec: 2, zoom: 1, focus: { mode: 'face' }, ...segment }] },
          },
        },
      ],
    },
    {
      id: 'track-title',
      kind: 'overlay',
      contents: [
        {
          id: 'title',
          startTime: 0,
          duration: 2,
          source: { kind: 'overlay', primitiveId: 'heroText', params: { text: 'HI' }, zPlane: 'front' },
        },
      ],
    },
  ],
});

describe.each(STORAGE_MODES)('videoasm (HTTP, fake CueFrame, %s storage)', (mode) => {
  const storage = useStorage(mode);
  let cf: FakeCueFrame;
  let t: TestGateway;
  let alice: string;
  let bob: string;
  let fileId: string;
  let mediaId: string;
  let projectId: string;

  const run = (action: string, body: unknown, key = alice) =>
    t.post(`/api/run/videoasm/${action}`, body, { key });
  const balance = async (key = alice): Promise<number> =>
    (await t.post('/api/run/platform/balance', {}, { key })).body.data.balance_micros;
  async function storeFile(key: string, mime: string, data: Buffer): Promise<string> {
    const r = await t.post(
      '/api/run/files/upload',
      { filename: 'clip.mp4', size_bytes: data.length, mime },
      { key },
    );
    const put = await request(r.body.data.put_url, { method: 'PUT', body: data });
    await put.body.dump();
    expect(put.statusCode).toBe(200);
    return r.body.data.file_id;
  }

  beforeAll(async () => {
    cf = await startFakeCueFrame();
    t = await startGateway({
      env: { TOLLGATE_CUEFRAME_API_KEY: cf.apiKey, TOLLGATE_CUEFRAME_BASE_URL: cf.url, ...storage.env() },
    });
    alice = (await t.account('5')).key;
    bob = (await t.account('5')).key;
    fileId = await storeFile(alice, 'video/mp4', Buffer.alloc(2048, 9));
  });
  afterAll(async () => {
    await t.close();
    await cf.close();
  });

  it('[videoasm:flow] [files:upload-put-get] upload imports the stored file through a signed get_url', async () => {
    const before = await balance();
    const r = await run('upload', { file_id: fileId, filename: 'intro.mp4' });
    expect(r.status).toBe(200);
    expect(r.body.charged_cents).toBe(1);
    expect(await balance()).toBe(before - 10_000);
    mediaId = r.body.data.media_id;
    expect(mediaId).toMatch(/^med_/);
    expect(r.body.data.status).toBe('importing');
    // CueFrame fetched the bytes from our storage by itself (the gateway, or the bucket).
    const [m] = [...cf.media.values()];
    await m?.done;
    expect(m?.status).toBe('ready');
    expect(m?.bytes?.equals(Buffer.alloc(2048, 9))).toBe(true);
    expect(m).toMatchObject({ filename: 'intro.mp4', contentType: 'video/mp4' });
    expect(m?.url.startsWith(storage.linkBase(t, fileId))).toBe(true);
    // Our media_id is a handle, not CueFrame's id.
    expect(mediaId).not.toBe(m?.id);
  });

  it('[videoasm:upload-content-types] a stored type outside the accepted list needs a contentType override', async () => {
    const textFile = await storeFile(alice, 'text/plain', Buffer.from('hello'));
    const before = await balance();
    const r = await run('upload', { file_id: textFile });
    expect(r.status).toBe(400);
    expect(r.body.error.details.issues[0].path).toBe('contentType');
    expect(await balance()).toBe(before);
    const overridden = await run('upload', { file_id: textFile, contentType: 'audio/mpeg' });
    expect(overridden.status).toBe(200);
    const pending = await t.post(
      '/api/run/files/upload',
      { filename: 'p.mp4', size_bytes: 9 },
      { key: alice },
    );
    const notYet = await run('upload', { file_id: pending.body.data.file_id });
    expect(notYet.status).toBe(400);
    expect(notYet.body.error.details.issues[0].path).toBe('file_id');
  });

  it('[videoasm:flow] create_project returns our project id', async () => {
    const r = await run('create_project', { name: 'Teaser', format: FORMAT, brandKitId: 'kit_1' });
    expect(r.status).toBe(200);
    expect(r.body.charged_cents).toBe(1);
    projectId = r.body.data.id;
    expect(projectId).toMatch(/^prj_/);
    expect(cf.requests.at(-1)?.body).toEqual({ name: 'Teaser', format: FORMAT, brandKitId: 'kit_1' });
  });

  it('[videoasm:validate-result] [videoasm:zoom-above-1-invalid] invalid compositions are a charged valid:false', async () => {
    const before = await balance();
    const zoom = await run('validate', composition(mediaId, { zoom: 1.5 }));
    expect(zoom.status).toBe(200);
    expect(zoom.body.charged_cents).toBe(1);
    expect(zoom.body.data.valid).toBe(false);
    expect(zoom.body.data.errors[0]).toMatchObject({
      code: 'invalid_field',
      stage: 'schema',
      retryable: false,
    });
    expect(zoom.body.data.errors[0].message).toContain('reframe.segments.0.zoom');
    const unknown = await run('validate', { composition: composition('med_not_mine') });
    expect(unknown.body.data).toMatchObject({ valid: false, errors: [{ code: 'unknown_media' }] });
    expect(await balance()).toBe(before - 20_000);
  });

  it('[videoasm:validate-result] [videoasm:composition-wrapper] a valid composition goes to CueFrame with its media ids', async () => {
    const r = await run('validate', { composition: composition(mediaId) });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ valid: true, errors: [] });
    const sent = cf.requests.at(-1);
    expect(sent?.path).toBe('/v1/composition/validate');
    const upstreamMedia = [...cf.media.values()][0]?.id as string;
    expect(JSON.stringify(sent?.body)).toContain(upstreamMedia);
    expect(JSON.stringify(sent?.body)).not.toContain(mediaId);
    // CueFrame's own findings come back in our ids.
    cf.script({
      path: '/v1/composition/validate',
      status: 200,
      body: {
        valid: false,
        errors: [
          {
            code: 'media_not_ready',
            stage: 'resolve',
            category: 'media',
            retryable: true,
            message: `media ${upstreamMedia} is still importing`,
            fix: { mediaId: upstreamMedia },
          },
        ],
      },
    });
    const v = await run('validate', composition(mediaId));
    expect(v.body.data.valid).toBe(false);
    expect(v.body.data.errors[0]).toEqual({
      code: 'media_not_ready',
      stage: 'resolve',
      category: 'media',
      retryable: true,
      message: `media ${mediaId} is still importing`,
      fix: { mediaId },
    });
  });

  it('[videoasm:flow] [videoasm:composition-wrapper] put_composition accepts top-level fields and a wrapper', async () => {
    const top = await run('put_composition', { project_id: projectId, ...composition(mediaId), markers: [] });
    expect(top.status).toBe(200);
    expect(top.body.data).toEqual({ project_id: projectId, saved: true, track_count: 2, clip_count: 2 });
    const stored = [...cf.projects.values()].at(-1)?.composition as Json;
    expect(stored.markers).toEqual([]);
    expect(stored.project_id).toBeUndefined();
    const wrapped = await run('put_composition', {
      project_id: projectId,
      composition: composition(mediaId),
    });
    expect(wrapped.status).toBe(200);
    expect(wrapped.body.charged_cents).toBe(1);
  });

  it('[videoasm:composition-schema] put_composition refuses an invalid composition or foreign media, uncharged', async () => {
    const before = await balance();
    const calls = cf.requests.length;
    const zoom = await run('put_composition', {
      project_id: projectId,
      ...composition(mediaId, { zoom: 2 }),
    });
    expect(zoom.status).toBe(400);
    expect(zoom.body.error.details.issues[0].path).toBe('tracks.0.contents.0.source.reframe.segments.0.zoom');
    const foreign = await run('put_composition', {
      project_id: projectId,
      ...composition('med_someone_else'),
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.details.issues[0].path).toBe('tracks.0.contents.0.source.mediaId');
    expect(cf.requests.length).toBe(calls);
    expect(await balance()).toBe(before);
  });

  it('[videoasm:render-interactive-403] priority interactive is 403 before any hold or vendor call', async () => {
    const before = await balance();
    const calls = cf.requests.length;
    const r = await run('render', { project_id: projectId, priority: 'interactive' });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('forbidden');
    expect(r.body.charged_cents).toBe(0);
    expect(cf.requests.length).toBe(calls);
    expect(await balance()).toBe(before);
    const tx = await t.post('/api/run/platform/transactions', { limit: 100 }, { key: alice });
    expect(tx.body.data.transactions.some((x: { error_code: string }) => x.error_code === 'forbidden')).toBe(
      false,
    );
  });

  it('[videoasm:flow] [videoasm:render-job-handle] render returns a job_id; result polls it to the MP4', async () => {
    const before = await balance();
    const r = await run('render', { project_id: projectId, intent: 'preview', priority: 'background' });
    expect(r.status).toBe(200);
    expect(r.body.charged_cents).toBe(100);
    expect(await balance()).toBe(before - 1_000_000);
    const jobId = r.body.data.job_id;
    expect(jobId).toMatch(/^rnd_/);
    expect(r.body.data.status).toBe('queued');
    const [render] = [...cf.renders.values()];
    expect(render?.body).toEqual({ priority: 'background', intent: 'preview' });

    const states: string[] = [];
    let last: Json = {};
    for (let i = 0; i < 5 && last.status !== 'complete'; i++) {
      const p = await run('result', { job_id: jobId });
      expect(p.status).toBe(200);
      expect(p.body.charged_cents).toBe(0); // [polls:free-unpriced] the spec prices no poll; it starts nothing
      last = p.body.data;
      expect(p.body.data.finished).toBe(last.status === 'complete');
      if (!p.body.data.finished) expect(p.body.data.next_poll_seconds).toBeGreaterThan(0);
      states.push(String(last.status));
    }
    expect(states).toEqual(['queued', 'rendering', 'complete']);
    expect(last).toMatchObject({ job_id: jobId, progress: 100, error: null });
    const mp4 = await request(String(last.output_url));
    expect(mp4.headers['content-type']).toBe('video/mp4');
    await mp4.body.dump();
    // Polling never started another render.
    expect(cf.renders.size).toBe(1);
    expect(await balance()).toBe(before - 1_000_000);

    // Another account's job_id is not found.
    const stolen = await run('result', { job_id: jobId }, bob);
    expect(stolen.status).toBe(404);
  });

  it('[videoasm:validate-before-render] render refuses, uncharged, a composition that has not passed validate', async () => {
    const p = await run('create_project', { name: 'Guarded' });
    const project = p.body.data.id;
    const renders = cf.renders.size;
    const before = await balance();
    // No composition stored yet.
    const none = await run('render', { project_id: project });
    expect(none.status).toBe(400);
    expect(none.body.charged_cents).toBe(0);
    expect(none.body.error.message).toMatch(/videoasm\/validate.*videoasm\/put_composition/);
    expect(none.body.error.details.run_first).toEqual(['videoasm/validate', 'videoasm/put_composition']);
    // Stored but never validated in this form (a different clip length): refused, naming validate.
    const edited = composition(mediaId, { endSec: 1 });
    expect((await run('put_composition', { project_id: project, ...edited })).status).toBe(200);
    const unvalidated = await run('render', { project_id: project });
    expect(unvalidated.status).toBe(400);
    expect(unvalidated.body.error.details.run_first).toEqual(['videoasm/validate']);
    expect(cf.renders.size).toBe(renders);
    expect(await balance()).toBe(before - 10_000); // only the put_composition
    // Validated (wrapped this time, keys in another order: the same composition), the render goes ahead.
    const v = await run('validate', { composition: JSON.parse(JSON.stringify(edited)) });
    expect(v.body.data.valid).toBe(true);
    const ok = await run('render', { project_id: project, intent: 'preview' });
    expect(ok.status).toBe(200);
    expect(ok.body.charged_cents).toBe(100);
  });

  it('[videoasm:ids-bound-to-account] another account cannot use my file, media or project ids; uncharged', async () => {
    const before = await balance(bob);
    expect((await run('upload', { file_id: fileId }, bob)).status).toBe(404);
    expect(
      (await run('put_composition', { project_id: projectId, ...composition(mediaId) }, bob)).status,
    ).toBe(404);
    expect((await run('render', { project_id: projectId }, bob)).status).toBe(404);
    const v = await run('validate', composition(mediaId), bob);
    expect(v.body.data.errors[0].code).toBe('unknown_media');
    // Only the validate (a successful call) was charged.
    expect(await balance(bob)).toBe(before - 10_000);
  });

  it('[billing:failed-job-refunded] a render that fails is refunded once when result reports it', async () => {
    const p = await run('create_project', { name: 'Empty' });
    const empty = { v: 1, format: FORMAT, tracks: [{ id: 't', kind: 'video', contents: [] }] };
    expect((await run('validate', empty)).body.data.valid).toBe(true);
    await run('put_composition', { project_id: p.body.data.id, ...empty });
    const before = await balance();
    const r = await run('render', { project_id: p.body.data.id, intent: 'final' });
    expect(r.body.charged_cents).toBe(100);
    await run('result', { job_id: r.body.data.job_id });
    const failed = await run('result', { job_id: r.body.data.job_id });
    expect(failed.body.data).toMatchObject({
      status: 'failed',
      output_url: null,
      error: { retryable: false },
    });
    expect(failed.text).not.toContain('empty scenes');
    // The $1 render is refunded; the polls are free. Polling again refunds nothing more.
    expect(failed.body.data.finished).toBe(true);
    expect(await balance()).toBe(before);
    await run('result', { job_id: r.body.data.job_id });
    expect(await balance()).toBe(before);
    const tx = await t.post('/api/run/platform/transactions', { limit: 10 }, { key: alice });
    expect(
      tx.body.data.transactions.find((x: { id: string }) => x.id === r.body.transaction_id),
    ).toMatchObject({
      status: 'refunded',
      charged_cents: 100,
      refunded_cents: 100,
    });
  });

  it('[videoasm:vendor-failure-uncharged] CueFrame errors charge nothing and show no vendor text', async () => {
    const cases: Array<[string, Json, number, number, string]> = [
      ['/v1/projects', { name: 'x' }, 500, 502, 'upstream_error'],
      ['/v1/projects', { name: 'x' }, 401, 503, 'upstream_unavailable'],
      ['/v1/projects', { name: 'x' }, 429, 503, 'upstream_busy'],
      ['/v1/projects', { name: 'x' }, 400, 422, 'upstream_rejected'],
    ];
    for (const [path, body, status, ours, code] of cases) {
      const before = await balance();
      cf.script({ path, status, body: { error: { code: 'boom', message: 'SECRET-VENDOR-TEXT' } } });
      const r = await run('create_project', body);
      expect(r.status, `${status}`).toBe(ours);
      expect(r.body.error.code).toBe(code);
      expect(r.text).not.toContain('SECRET-VENDOR-TEXT');
      expect(await balance()).toBe(before);
    }
    const before = await balance();
    cf.script({ status: 500, body: { error: { code: 'render_failed', message: 'SECRET-VENDOR-TEXT' } } });
    const render = await run('render', { project_id: projectId });
    expect(render.status).toBe(502);
    expect(render.body.charged_cents).toBe(0);
    // A 2xx that carries the error envelope is a failure too.
    cf.script({ status: 200, body: { error: { code: 'weird', message: 'SECRET-VENDOR-TEXT' } } });
    const odd = await run('create_project', { name: 'x' });
    expect(odd.status).toBe(502);
    expect(odd.text).not.toContain('SECRET-VENDOR-TEXT');
    expect(await balance()).toBe(before);
  });
});

describe('videoasm without a CueFrame key', () => {
  it('[http:not-configured] answers 503 naming TOLLGATE_CUEFRAME_API_KEY; interactive is still 403', async () => {
    const t = await startGateway();
    try {
      const { key } = await t.account('2');
      const r = await t.post('/api/run/videoasm/create_project', { name: 'x' }, { key });
      expect(r.status).toBe(503);
      expect(r.body.error.message).toContain('TOLLGATE_CUEFRAME_API_KEY');
      const f = await t.post(
        '/api/run/videoasm/render',
        { project_id: 'p', priority: 'interactive' },
        { key },
      );
      expect(f.status).toBe(403);
      const res = await t.post('/api/run/videoasm/result', { job_id: 'rnd_x' }, { key });
      expect(res.status).toBe(503);
    } finally {
      await t.close();
    }
  });
});
