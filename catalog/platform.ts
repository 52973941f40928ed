import { z } from 'zod';
import { defineAction, inputObject, outputObject } from './define.js';
import { group } from './group.js';

// platform (docs/spec.md §4.3): the gateway's own meta-operations.

const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

const SUPERSEARCH_FACETS = [
  'web',
  'docs',
  'news',
  'academic',
  'code',
  'public-filings',
  'compliance',
  'funding',
  'financials',
  'legal',
  'nonprofits',
  'regulatory',
  'scrape',
  'scrape-hard',
  'social',
] as const;

/** docs/spec.md §4.3 names the six social networks only by description; these are their lowercase names. */
export const SUPERSEARCH_PLATFORMS = [
  'tiktok',
  'instagram',
  'youtube',
  'twitter',
  'weibo',
  'reddit',
] as const;

const suggestedCall = z.object({
  step: z.number().int().describe('Position in the plan (1 = run first). Alternatives are all step 1.'),
  service: z.string().describe('Service of the action to call.'),
  action: z
    .string()
    .describe('Action to call: POST /api/run/{service}/{action}, or MCP tool {service}_{action}.'),
  params: z
    .record(z.string(), z.unknown())
    .describe(
      'JSON body, validated against the action’s schema. A value "<step N: path>" comes from step N’s output ' +
        '(see inputs_from).',
    ),
  price_cents: z.number().int().describe('Price of that call in cents, charged only if it succeeds.'),
  why: z.string().describe('Why this call fits the goal, and what to do before running it.'),
  inputs_from: z
    .record(z.string(), z.object({ step: z.number().int(), output: z.string() }).describe('Where from.'))
    .optional()
    .describe('Fields to take from earlier steps: field path → { step, output path }.'),
  missing: z
    .array(
      z.object({
        field: z.string().describe('Field path, or "(body)" for a rule over several fields.'),
        what: z.string().describe('What to put there.'),
      }),
    )
    .optional()
    .describe('Values the goal did not give: fill them in before running the call.'),
});

export const consult = defineAction({
  service: 'platform',
  action: 'consult',
  title: 'Plan calls for a goal',
  summary:
    'Turns a plain-English goal into a plan of ready-to-run calls, each { step, service, action, params, ' +
    'price_cents, why }, validated against its action’s schema: values read from the goal (URLs, addresses ' +
    'whole and split, city/state, zip, coordinates, ids of every kind, quoted text, numbers with units, dates, ' +
    'file names) are filled in, the plan starts where the goal starts, later steps take earlier outputs ' +
    '(inputs_from), and anything the goal does not give is listed in missing. Returns { calls, alternatives, ' +
    'total_price_cents }, plus other_plans when the goal reads two ways (calls is the likelier); only actions ' +
    'this gateway can run are suggested, and a goal nothing fits answers 404, uncharged.',
  whenToUse:
    'Use it when you do not know which actions, in which order, a goal needs; it answers ' +
    'ready-to-run calls validated against their schemas. To search the catalog by keyword for free, ' +
    'use platform/discover.',
  priceCents: 1,
  strict: true,
  input: inputObject(true, {
    intent: z
      .string()
      .min(1)
      .max(2000)
      .describe('What you want to get done, in plain English (1-2000 chars).'),
  }),
  output: outputObject({
    calls: z
      .array(suggestedCall)
      .describe('The plan: ready-to-run calls in the order to run them (one, or a workflow).'),
    alternatives: z
      .array(suggestedCall)
      .describe('Other single calls that could answer the goal instead; not part of the plan.'),
    total_price_cents: z
      .number()
      .int()
      .describe('Cost of running the plan once (calls only, each poll once; alternatives excluded).'),
    other_plans: z
      .array(
        z.object({
          why: z.string().describe('The other reading of the goal, and why this plan fits it.'),
          calls: z.array(suggestedCall).describe('Its calls, in order.'),
          total_price_cents: z.number().int().describe('Cost of running it once.'),
        }),
      )
      .optional()
      .describe('When the goal reads two ways: the plan for the other reading (calls is the likelier one).'),
  }),
  annotations: readOnly,
  example: { intent: 'Get the rent estimate for 5500 Grand Lake Dr, San Antonio, TX 78244' },
  keywords: ['plan', 'help', 'which', 'recommend', 'steps', 'workflow', 'how do i'],
});

export const supersearch = defineAction({
  service: 'platform',
  action: 'supersearch',
  title: 'Multi-source search with cited evidence',
  summary:
    'Flat-priced multi-source retrieval. When only query is given, an intent classifier picks the facets ' +
    '(news with recency, academic papers, code, docs, social posts, filings, …); each facet searches its own ' +
    'kind of source concurrently (timeCritical races two indexes), within budgetCents. urls skip search and ' +
    'are extracted directly, hard pages through a browser or residential proxies (facet scrape-hard). Returns ' +
    '{ query, evidence, plan }: evidence merged across facets, deduplicated, every item citing this call’s ' +
    'transaction id; plan says how it was routed. Internal source calls are included in the price.',
  whenToUse:
    'Use it for research questions that need evidence from several kinds of sources (news, papers, ' +
    'code, docs, social posts, hard-to-scrape pages) merged and cited in one flat-priced call; for ' +
    'one plain web search use scraperA/search.',
  priceCents: 5,
  strict: true,
  input: inputObject(true, {
    query: z.string().min(1).max(2000).describe('What to search for (1-2000 chars).'),
    facets: z
      .array(z.enum(SUPERSEARCH_FACETS))
      .min(1)
      .max(15)
      .optional()
      .describe(
        `Source families to search concurrently (1-15): ${SUPERSEARCH_FACETS.join(', ')}. Omit it to let ` +
          'the intent classifier choose from the query (["web"] when nothing more specific fits).',
      ),
    timeCritical: z.boolean().optional().describe('Race two indexes and take the first answer.'),
    fidelityRequired: z
      .boolean()
      .optional()
      .describe('Fetch full page content; documents come back as markdown.'),
    recencyDays: z
      .number()
      .int()
      .min(1)
      .max(3650)
      .optional()
      .describe('Only results from the last N days (1-3650).'),
    domains: z
      .array(z.string().min(1))
      .max(10)
      .optional()
      .describe('Restrict to these domains (at most 10).'),
    excludeDomains: z
      .array(z.string().min(1))
      .max(10)
      .optional()
      .describe('Exclude these domains (at most 10).'),
    urls: z
      .array(z.url({ protocol: /^https?$/ }))
      .min(1)
      .max(5)
      .optional()
      .describe('Skip search and extract these URLs directly (1-5).'),
    asOf: z
      .string()
      .regex(/^\d{4,14}$/, 'digits, 4 to 14 long (YYYYMMDD)')
      .optional()
      .describe('Fetch archived copies as of this date, YYYYMMDD (4-14 digits).'),
    maxResults: z.number().int().min(1).max(25).optional().describe('Maximum evidence items (1-25).'),
    platform: z
      .enum(SUPERSEARCH_PLATFORMS)
      .optional()
      .describe(`Social network for the social facet: ${SUPERSEARCH_PLATFORMS.join(', ')}.`),
    budgetCents: z
      .number()
      .int()
      .min(1)
      .max(4)
      .optional()
      .describe(
        'Internal budget, 1-4 cents: source calls are costed at the catalog price of what they stand for ' +
          '(a search 1, a browser render 1, a residential fetch 4); facets that do not fit are skipped and ' +
          'reported in plan.skipped. Your price stays 5 cents.',
      ),
  }),
  output: outputObject({
    query: z.string().describe('The query as run.'),
    evidence: z
      .array(
        outputObject({
          title: z.string().describe('Title of the source.'),
          url: z.string().describe('Source URL.'),
          snippet: z.string().describe('Relevant excerpt.'),
          facet: z.string().describe('Facet that produced it.'),
          source: z.string().describe('Index or fetcher that produced it.'),
          transaction_id: z.string().describe('Transaction that paid for this evidence.'),
          markdown: z.string().optional().describe('Full content, when fidelityRequired.'),
          also_found_by: z
            .array(z.string())
            .optional()
            .describe('Other facets that found the same page (it ranks higher for it).'),
          published_at: z.string().optional().describe('Publication date, when the source gives one.'),
        }),
      )
      .describe('Normalized evidence, merged across facets, deduplicated, best first.'),
    plan: outputObject({
      routed_by: z
        .enum(['caller', 'classifier'])
        .describe('caller: your facets; classifier: chosen from the query.'),
      facets: z.array(z.string()).describe('Facets that ran (scrape or scrape-hard when urls were fetched).'),
      skipped: z
        .array(z.object({ facet: z.string(), reason: z.string() }).describe('A facet left out.'))
        .describe('Facets left out, and why (the budget).'),
      recency_days: z.number().int().optional().describe('Recency window applied (news defaults to 7).'),
      platform: z.string().optional().describe('Social network the social facet targeted.'),
      budget_cents: z.number().int().describe('Internal budget of this search, cents.'),
      spent_cents: z.number().int().describe('Internal budget used, cents.'),
      sources: z.array(z.string()).describe('Indexes and fetchers the evidence came from.'),
    }).describe('How the search was routed and what it used.'),
  }),
  annotations: { ...readOnly, openWorldHint: true },
  timeoutMs: 120_000,
  example: { query: 'latest Node.js LTS release notes' },
  keywords: [
    'research',
    'evidence',
    'sources',
    'citations',
    'cited',
    'multi-source',
    'academic',
    'papers',
    'studies',
    'github',
    'repositories',
    'code',
    'reddit',
    'twitter',
    'tweets',
    'threads',
    'social',
    'news',
    'docs',
    'documentation',
    'filings',
    'gather',
  ],
});

export const discover = defineAction({
  service: 'platform',
  action: 'discover',
  title: 'Search the catalog',
  summary:
    'Free keyword search over the actions this gateway can run: returns { results: [{ id, tool_name, title, ' +
    'description, price_cents, score }] }, best first. A plain sentence works too. No authentication needed.',
  whenToUse:
    'Use it first, for free, to find the action for a task by keywords; for a ready-to-run plan with ' +
    'filled-in parameters use platform/consult.',
  priceCents: 0,
  access: 'public',
  strict: true,
  input: inputObject(true, {
    query: z.string().min(1).max(500).describe('Keywords, e.g. "rent estimate" or "crawl website".'),
    limit: z.number().int().min(1).max(50).default(10).describe('Maximum results (1-50, default 10).'),
  }),
  output: outputObject({
    results: z
      .array(
        outputObject({
          id: z.string().describe('Action id, service/action.'),
          tool_name: z.string().describe('MCP tool name.'),
          title: z.string().describe('Title.'),
          description: z.string().describe('What it does, with its price.'),
          price_cents: z.number().int().describe('Price in cents.'),
          score: z.number().describe('Match score.'),
        }),
      )
      .describe('Matching actions, best first.'),
  }),
  annotations: readOnly,
  example: { query: 'property value' },
  keywords: [
    'catalog',
    'search actions',
    'tools',
    'which tool',
    'which action',
    'list actions',
    'available tools',
  ],
});

export const balance = defineAction({
  service: 'platform',
  action: 'balance',
  title: 'My balance',
  summary:
    'Returns your account balance: posted credit, amount held by calls in flight, and what is available.',
  whenToUse: 'Use it to check what you can still spend before a costly call such as videoasm/render.',
  priceCents: 0,
  access: 'account',
  strict: true,
  input: inputObject(true, {}),
  output: outputObject({
    balance_usd: z.string().describe('Posted balance in USD.'),
    available_usd: z
      .string()
      .describe('Balance minus holds of calls in flight, plus the credit line unless frozen, in USD.'),
    balance_micros: z
      .number()
      .int()
      .describe('Posted balance in micro-USD; below zero by what was drawn on the credit line.'),
    held_micros: z.number().int().describe('Held by calls in flight, micro-USD.'),
    available_micros: z.number().int().describe('Available to spend, micro-USD.'),
  }),
  annotations: readOnly,
  example: {},
  keywords: [
    'credit',
    'balance',
    'account',
    'funds',
    'money left',
    'credit left',
    'remaining',
    'how much left',
  ],
});

export const transactions = defineAction({
  service: 'platform',
  action: 'transactions',
  title: 'My recent transactions',
  summary:
    'Lists your most recent transactions, newest first: calls with their price, charge, status and payment ' +
    'method, and the money that moved without a call (credits, card top-ups, settlements of the credit line, ' +
    'refunds, disputes).',
  whenToUse:
    'Use it to see what each call was charged, whether a failed job was refunded, or what your card paid.',
  priceCents: 0,
  access: 'account',
  strict: true,
  input: inputObject(true, {
    limit: z.number().int().min(1).max(100).default(20).describe('How many (1-100, default 20).'),
  }),
  output: outputObject({
    transactions: z
      .array(
        outputObject({
          id: z.string().describe('Transaction id.'),
          created_at: z.string().describe('When the call started or the money moved (ISO 8601).'),
          kind: z
            .enum([
              'call',
              'credit',
              'topup',
              'settlement',
              'refund',
              'refund_reversal',
              'dispute',
              'dispute_reversal',
              'line',
              'call_refund',
              'adjustment',
            ])
            .describe(
              'call, or money that moved without one (topup, settlement of the credit line, call_refund: the ' +
                "operator gave back part or all of the call in meta.refund_of, adjustment: the operator's correction, …).",
            ),
          action: z.string().describe('Action id of a call; account/<kind> otherwise.'),
          amount_micros: z
            .number()
            .int()
            .describe(
              'Effect on the balance in micro-USD, signed (a call: minus its charge net of refunds of failed work; each operator refund is a call_refund row of its own).',
            ),
          status: z
            .enum(['pending', 'succeeded', 'failed', 'refunded'])
            .describe(
              'Outcome; refunded when the work it started failed later or the operator refunded it in full (in part: still succeeded, with refunded_cents); a declined settlement failed.',
            ),
          refunded_cents: z.number().int().describe('Refunded, in cents (failed work, or the operator).'),
          price_cents: z.number().int().describe('Quoted price in cents.'),
          charged_cents: z.number().int().describe('Charged, in cents (0 unless it succeeded).'),
          charged_micros: z.number().int().describe('Charged, in micro-USD.'),
          payment_method: z
            .string()
            .describe('api_key, oauth, x402; card or operator for money without a call.'),
          provider: z.string().nullable().describe('Upstream that served it.'),
          idempotency_key: z.string().nullable().describe('Idempotency-Key sent with the call.'),
          duration_ms: z.number().int().nullable().describe('How long it ran.'),
          error_code: z.string().nullable().describe('Why it failed, if it did.'),
          meta: z
            .record(z.string(), z.unknown())
            .nullable()
            .describe('Itemization (model, tokens, payer, …).'),
        }),
      )
      .describe('Transaction records, newest first.'),
  }),
  annotations: readOnly,
  example: { limit: 5 },
  keywords: [
    'history',
    'spend',
    'spent',
    'charges',
    'charged',
    'usage',
    'billing',
    'invoice',
    'refunded',
    'calls made',
  ],
});

export const platform = group(consult, supersearch, discover, balance, transactions);
