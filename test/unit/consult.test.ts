import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { type Action, findAction } from '../../catalog/index.js';
import { extract } from '../../tools/consult-extract.js';
import { ID_SLOTS } from '../../tools/consult-ids.js';
import { refineWithModel } from '../../tools/consult-llm.js';
import { type PlannedCall, planCalls } from '../../tools/consult-plan.js';
import { amounts } from '../../tools/consult-units.js';
import type { HandlerContext, LlmService } from '../../tools/context.js';
import { callAccounted } from '../agents/evaluate.js';

// platform/consult's deterministic planner, call by call: values read from the goal, every body validated,
// workflows as ordered steps, free actions, the plan's price, availability, and the optional model refinement.

const id = (c: PlannedCall | undefined) => c && `${c.service}/${c.action}`;
const valid = (c: PlannedCall) => findAction(`${c.service}/${c.action}`)?.input.safeParse(c.params).success;

describe('[consult:values-from-goal] values read from the goal', () => {
  it('addresses whole, split, with units, and in words', () => {
    const a = extract('Value 1600 Pennsylvania Ave NW, Washington, DC 20500 please').address;
    expect(a).toMatchObject({
      house: '1600',
      street: 'Pennsylvania Ave NW',
      city: 'Washington',
      state: 'DC',
    });
    expect(a?.zip).toBe('20500');
    const unit = extract('owner of 55 Main Street Apt 4B, Boise, Idaho 83702').address;
    expect(unit).toMatchObject({
      street: 'Main Street',
      unit: 'Apt 4B',
      city: 'Boise',
      state: 'ID',
      zip: '83702',
    });
    const noSuffix = extract('records for 100 Broadway, New York, NY 10005').address;
    expect(noSuffix).toMatchObject({ house: '100', street: 'Broadway', city: 'New York', state: 'NY' });
  });

  it('city and state alone, zip codes, coordinates, radius', () => {
    expect(extract('condos for sale in Salt Lake City, Utah')).toMatchObject({
      city: 'Salt Lake City',
      state: 'UT',
    });
    expect(extract('rentals in 02139 under $3k').zip).toBe('02139');
    expect(extract('rentals in 02139 under $3k').price).toBe('*-3000');
    expect(extract('parcels near 40.7128° N, 74.0060° W within 0.5 miles')).toMatchObject({
      coords: { latitude: 40.7128, longitude: -74.006 },
      radius: 0.5,
    });
    expect(extract('lat 51.5 lon -0.12').coords).toEqual({ latitude: 51.5, longitude: -0.12 });
  });

  it('URLs cleaned of sentence punctuation, bare domains made absolute, ids, counts, recency, files', () => {
    expect(extract('Can you scrape https://example.com/a?b=1?').urls).toEqual(['https://example.com/a?b=1']);
    expect(extract('read (https://en.wikipedia.org/wiki/Foo_(bar)).').urls).toEqual([
      'https://en.wikipedia.org/wiki/Foo_(bar)',
    ]);
    expect(extract('map docs.stripe.com/api please').urls).toEqual(['https://docs.stripe.com/api']);
    expect(extract('save report.pdf').urls).toEqual([]);
    expect(extract('is rnd_0mdx3k2a1b2c3d4e done').ids).toEqual([
      { prefix: 'rnd', value: 'rnd_0mdx3k2a1b2c3d4e' },
    ]);
    expect(extract('top 15 results from the past 3 days')).toMatchObject({ count: 15, recencyDays: 3 });
    expect(extract('upload clip.mov (12 MB)')).toMatchObject({
      filename: 'clip.mov',
      mime: 'video/quicktime',
      sizeBytes: 12_000_000,
    });
  });

  it('skiptrace gets the address split into its fields; propstats the whole address', () => {
    const trace = planCalls('Phone number of the owner of 17 Topeka Pass, Willingboro, NJ 08046').calls[0];
    expect(id(trace)).toBe('propdata/skiptrace');
    expect(trace?.params).toEqual({
      address: '17 Topeka Pass',
      city: 'Willingboro',
      state: 'NJ',
      zip: '08046',
    });
    const rent = planCalls('rent estimate for 17 Topeka Pass, Willingboro, NJ 08046').calls[0];
    expect(rent?.params).toMatchObject({ address: '17 Topeka Pass, Willingboro, NJ 08046' });
  });
});

describe('[consult:validated-calls] every returned call is checked against its schema', () => {
  const goals = [
    'Render project prj_0mdx3k2a1b2c3d4e5f6g7h8i9j as a quick preview',
    'Complete the address 9 Topeka Pa',
    'Scrape https://example.com/pricing?',
    'Estimate the rent of my house',
    'Find news about the Federal Reserve from the past week',
  ];
  it('bodies validate as returned, or say exactly what is missing', () => {
    for (const g of goals) {
      const plan = planCalls(g);
      const others = (plan.other_plans ?? []).flatMap((o) => o.calls);
      for (const c of [...plan.calls, ...plan.alternatives, ...others]) {
        if (c.missing) expect(c.missing.length, g).toBeGreaterThan(0);
        else if (!c.inputs_from) expect(valid(c), `${g} → ${id(c)}`).toBe(true);
        // [consult:validated-calls] never an unexplained invalid body: it validates or names what it lacks.
        expect(callAccounted(c), `${g} → ${id(c)}`).toBe(true);
      }
      // Alternatives are only ever ready to run.
      for (const c of plan.alternatives) expect(c.missing, g).toBeUndefined();
    }
  });

  it('no field gets the whole goal sentence: intent is an enum, search and query are the subject', () => {
    const render = planCalls(goals[0] as string).calls[0];
    expect(render?.params).toEqual({ project_id: 'prj_0mdx3k2a1b2c3d4e5f6g7h8i9j', intent: 'preview' });
    const auto = planCalls(goals[1] as string).calls[0];
    expect(auto?.params).toMatchObject({ search: '9 Topeka Pa' });
    const scrape = planCalls(goals[2] as string).calls[0];
    expect(scrape?.params.url).toBe('https://example.com/pricing');
    expect(scrape?.params.browser).toBeUndefined();
    const news = planCalls(goals[4] as string).calls[0];
    expect(news?.params.query).toBe('Federal Reserve');
  });

  it('a missing value is listed with what to put there', () => {
    const c = planCalls(goals[3] as string).calls[0];
    expect(id(c)).toBe('propstats/rent-estimate');
    expect(c?.missing?.[0]?.what).toMatch(/address/);
    expect(c?.why).toMatch(/Fill in/);
  });
});

describe('[consult:workflows] multi-step goals', () => {
  it('video assembly in the spec’s order, each step taking the outputs it needs', () => {
    const plan = planCalls(
      'Make a 15-second vertical video from https://cdn.example.com/beach.mp4 and render it',
    );
    expect(plan.calls.map((c) => c.action)).toEqual([
      'upload_from_url',
      'upload',
      'create_project',
      'validate',
      'put_composition',
      'render',
      'result',
    ]);
    const [store, upload, project, check, put, render, result] = plan.calls;
    expect(store?.params).toEqual({ url: 'https://cdn.example.com/beach.mp4' });
    expect(upload?.inputs_from).toEqual({ file_id: { step: 1, output: 'file_id' } });
    expect(project?.params.format).toEqual({ aspectRatio: '9:16', fps: 30, resolution: 'fhd' });
    const media = 'tracks.0.contents.0.source.mediaId';
    expect(check?.inputs_from?.[media]).toEqual({ step: 2, output: 'media_id' });
    expect(put?.inputs_from).toMatchObject({ project_id: { step: 3, output: 'id' } });
    expect(render?.inputs_from).toEqual({ project_id: { step: 3, output: 'id' } });
    expect(result?.inputs_from).toEqual({ job_id: { step: 6, output: 'job_id' } });
    const tracks = (check?.params.tracks ?? []) as Array<{ contents: Array<{ duration: number }> }>;
    expect(tracks[0]?.contents[0]?.duration).toBe(15);
    for (const c of plan.calls) expect(valid(c), c.action).toBe(true);
    // [consult:plan-price] the plan once: 1+1+1+1+1+100 and a free poll; alternatives are not added.
    expect(plan.total_price_cents).toBe(105);
  });

  it('a crawl is followed by its poll; a partial address is resolved before the lookup', () => {
    const crawl = planCalls('crawl https://docs.example.com, 30 pages').calls;
    expect(crawl.map(id)).toEqual(['scraperA/crawl', 'scraperA/crawl_status']);
    expect(crawl[1]?.params.id).toBe('<step 1: id>');
    const detail = planCalls('mortgage and liens of the property at 9 Topeka Pa').calls;
    expect(detail.map(id)).toEqual(['propdata/autocomplete', 'propdata/property-detail']);
    expect(detail[1]?.inputs_from).toEqual({ id: { step: 1, output: 'results.0.id' } });
  });
});

describe('[consult:ids-from-catalog] ids reach the field that takes their kind', () => {
  it('the kinds come from the catalog’s examples and field descriptions', () => {
    const kinds = new Set(
      ID_SLOTS.map((s) => `${s.action.id}.${s.path}:${s.prefix ?? (s.numeric ? '#' : '?')}`),
    );
    for (const k of [
      'scraperA/crawl_status.id:crawl_a',
      'scraperB/crawl_status.id:crawl_b',
      'scraperB/extract_status.id:extract_b',
      'videoasm/result.job_id:rnd',
      'videoasm/render.project_id:prj',
      'videoasm/upload.file_id:file',
      'videoasm/put_composition.tracks.0.contents.0.source.mediaId:med',
      'propdata/property-detail.id:#',
    ])
      expect(kinds).toContain(k);
    const upload = ID_SLOTS.find((s) => s.action.id === 'videoasm/upload');
    expect(upload?.producers.map((p) => p.id)).toEqual(['files/upload', 'files/upload_from_url']);
  });

  it('a handle of each kind, a family prefix, a prefix that names the kind, a UUID, a record number', () => {
    const first = (g: string) => planCalls(g).calls[0];
    expect(first('status of crawl_b_0mdx3k2a1b2c3d4e5f6g7h8i9j')).toMatchObject({
      service: 'scraperB',
      params: { id: 'crawl_b_0mdx3k2a1b2c3d4e5f6g7h8i9j' },
    });
    expect(first('what did crawl_7c1f0e9a2b find')?.params).toEqual({ id: 'crawl_7c1f0e9a2b' });
    expect(first('is render job render_7fa9c2 finished?')).toMatchObject({
      action: 'result',
      params: { job_id: 'render_7fa9c2' },
    });
    expect(first('status of crawl job 3f2b8c1e-1234-4abc-9def-0123456789ab')?.params).toEqual({
      id: '3f2b8c1e-1234-4abc-9def-0123456789ab',
    });
    expect(first('lender-grade valuation of property 30918842')).toMatchObject({
      action: 'avm',
      params: { id: '30918842' },
    });
    expect(first('import file_0mdx3k2a1b2c3d4e5f6g7h8i9j into video assembly')?.params).toEqual({
      file_id: 'file_0mdx3k2a1b2c3d4e5f6g7h8i9j',
    });
  });
});

describe('[consult:quoted-and-units] quoted text and numbers with units', () => {
  it('quoted text is the search, the query or the name, said exactly', () => {
    expect(planCalls('I only have "12 Maple Av" — the full address?').calls[0]).toMatchObject({
      action: 'autocomplete',
      params: { search: '12 Maple Av' },
    });
    expect(planCalls("web search 'best espresso grinder 2024', 8 results").calls[0]?.params).toMatchObject({
      query: 'best espresso grinder 2024',
      limit: 8,
    });
    expect(planCalls('new 4:5 video project “Q3 recap” in 4k').calls[0]?.params).toEqual({
      name: 'Q3 recap',
      format: { aspectRatio: '4:5', resolution: '4k' },
    });
    expect(extract("the owner's phone").quoted).toEqual([]);
  });

  it('durations in each field’s unit, depths, skips, sizes, distances, ranges, years built, dates', () => {
    expect(amounts('wait 3 seconds for the JavaScript, with a 10 second timeout')).toMatchObject({
      waitMs: 3000,
      timeoutSec: 10,
    });
    expect(
      planCalls('scrape https://app.example.io, give the JavaScript 3 seconds to load').calls[0]?.params,
    ).toMatchObject({
      waitFor: 3000,
    });
    expect(amounts('crawl two levels deep, skipping the first 100, 2.5 MB')).toMatchObject({
      depth: 2,
      skip: 100,
      sizeBytes: 2_500_000,
    });
    expect(
      amounts('at least 4 bedrooms, 2.5 baths, 5000+ sq ft, built 2010 or later, under 2,500 a month'),
    ).toEqual({
      bedrooms: '4-*',
      bathrooms: 2.5,
      squareFootage: '5000-*',
      yearBuilt: '2010-*',
      price: '*-2500',
    });
    expect(amounts('between 250k and 400k').price).toBe('250000-400000');
    expect(amounts('news from the last 48 hours').recencyDays).toBe(2);
    expect(amounts('archived as of January 5, 2021').date).toBe('20210105');
    expect(extract('parcels within half a mile of 39.7392, -104.9903').radius).toBe(0.5);
  });
});

describe('[consult:start-where-goal-starts] plans start where the goal starts', () => {
  it('a video from the person’s disk starts by getting the bytes in, then shows the workflow', () => {
    const plan = planCalls('I want to upload a video from my disk for a video edit');
    expect(plan.calls.map(id).slice(0, 2)).toEqual(['files/upload', 'videoasm/upload']);
    expect(plan.calls.map((c) => c.action)).toContain('render');
    // Only the person knows the file's name and size: named, not invented.
    expect(plan.calls[0]?.missing?.map((m) => m.field)).toEqual(['filename', 'size_bytes']);
  });

  it('several sources become several clips; given ids skip the steps that would produce them', () => {
    const two = planCalls('Upload https://e.com/a.mp4 and https://e.com/b.mp4 then make a video').calls;
    expect(two.filter((c) => c.action === 'upload_from_url')).toHaveLength(2);
    const tracks = two.find((c) => c.action === 'validate')?.params.tracks as Array<{ contents: unknown[] }>;
    expect(tracks[0]?.contents).toHaveLength(2);
    const given = planCalls(
      'use med_0mdx3k2a1b2c3d4e5f6g7h8i9j as the clip in prj_0mdx3k2a1b2c3d4e5f6g7h8i9j, then render',
    ).calls;
    expect(given.map((c) => c.action)).toEqual(['validate', 'put_composition', 'render', 'result']);
  });

  it('then-clauses chain, the later step taking what the earlier one produces', () => {
    const plan = planCalls('Find "55 Wall St NY" first, then get me the valuation of it').calls;
    expect(plan.map(id)).toEqual(['propdata/autocomplete', 'propdata/avm']);
    expect(plan[1]?.inputs_from).toEqual({ id: { step: 1, output: 'results.0.id' } });
  });

  it('asking how started work is going polls it (never starts it again); a poll without its id says so', () => {
    const poll = planCalls('check the crawl I started earlier').calls;
    expect(poll.map((c) => c.action)).toEqual(['crawl_status']);
    expect(poll[0]?.missing?.map((m) => m.field)).toEqual(['id']);
    expect(
      planCalls('Crawl https://docs.example.org and give me the markdown of all its pages').calls.map(
        (c) => c.action,
      ),
    ).toEqual(['crawl', 'crawl_status']);
  });
});

describe('[consult:second-reading] a goal that reads two ways', () => {
  it('gives both plans, the likelier first, and says so', () => {
    const plan = planCalls('upload song.mp3');
    expect(id(plan.calls[0])).toBe('files/upload');
    expect(plan.other_plans?.[0]?.calls.map(id)).toEqual(['mediastage/upload']);
    expect(plan.other_plans?.[0]?.why).toMatch(/Another reading/);
    expect(plan.calls[0]?.why).toMatch(/other_plans/);
    // One reading only: nothing else offered as a reading.
    expect(planCalls('stage cat.jpg as input for an image generation model').other_plans).toBeUndefined();
  });
});

describe('[consult:free-actions] free actions answer what they answer', () => {
  it('balance, transactions, files list and polls', () => {
    expect(id(planCalls('How much credit do I have left?').calls[0])).toBe('platform/balance');
    expect(planCalls('How much credit do I have left?').total_price_cents).toBe(0);
    expect(planCalls('show my last 5 charges').calls[0]?.params).toEqual({ limit: 5 });
    expect(id(planCalls('what files did I store already?').calls[0])).toBe('files/list');
    const poll = planCalls('is rnd_0mdx3k2a1b2c3d4e5f6g7h8i9j done?').calls[0];
    expect(poll).toMatchObject({
      action: 'result',
      price_cents: 0,
      params: { job_id: 'rnd_0mdx3k2a1b2c3d4e5f6g7h8i9j' },
    });
  });
});

describe('[catalog:availability] consult suggests only what can run', () => {
  it('an unavailable first choice gives way to an available sibling; nothing runnable → no plan', () => {
    const goal = 'What is 17 Topeka Pass, Willingboro, NJ 08046 worth?';
    const noStats = (a: Action) => a.service !== 'propstats';
    const plan = planCalls(goal, noStats);
    expect(id(plan.calls[0])).toBe('propdata/avm');
    for (const c of [...plan.calls, ...plan.alternatives]) expect(c.service).not.toBe('propstats');
    expect(planCalls(goal, (a) => !a.service.startsWith('prop')).calls).toEqual([]);
  });
});

function ctxWith(llm: LlmService | undefined): HandlerContext {
  return {
    signal: new AbortController().signal,
    now: () => Date.now(),
    owner: 'acct',
    transactionId: 'txn_test',
    log: pino({ level: 'silent' }),
    progress: () => {},
    account: { balance: () => Promise.reject(), transactions: () => Promise.reject() },
    services: { llm } as unknown as HandlerContext['services'],
  };
}

function llmAnswering(json: unknown, fail = false): LlmService & { calls: number } {
  const svc = {
    calls: 0,
    async complete() {
      svc.calls++;
      if (fail) throw new Error('upstream down');
      return {
        text: JSON.stringify(json),
        json,
        model: 'm',
        usage: { prompt_tokens: 1, completion_tokens: 1 },
        costMicros: 1,
      };
    },
  };
  return svc;
}

describe('[consult:model-refinement] the cheap tier may refine the first call', () => {
  const goal = 'Search the web for the best open source vector databases';
  const plan = planCalls(goal);
  it('a valid refinement of the same action replaces the params', async () => {
    const llm = llmAnswering({
      action: id(plan.calls[0]),
      params: { query: 'open source vector database comparison' },
    });
    const out = await refineWithModel(goal, plan, ctxWith(llm), () => true);
    expect(llm.calls).toBe(1);
    expect(out.calls[0]?.params).toEqual({ query: 'open source vector database comparison' });
    expect(out.calls[0]?.why).toMatch(/Refined by a model/);
  });

  it('an invalid, other-action or failed refinement keeps the deterministic plan', async () => {
    const invalid = llmAnswering({ action: id(plan.calls[0]), params: { query: '' } });
    expect(await refineWithModel(goal, plan, ctxWith(invalid), () => true)).toEqual(plan);
    const other = llmAnswering({ action: 'propdata/avm', params: { address: '1 Main St, Boise, ID 83702' } });
    expect(await refineWithModel(goal, plan, ctxWith(other), () => true)).toEqual(plan);
    const down = llmAnswering({}, true);
    expect(await refineWithModel(goal, plan, ctxWith(down), () => true)).toEqual(plan);
    expect(await refineWithModel(goal, plan, ctxWith(undefined), () => true)).toEqual(plan);
  });
});
