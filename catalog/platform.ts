import { z } from 'zod';
import { defineAction, inputObject, outputObject } from './define.js';
import { group } from './group.js';

// platform (spec §4.3): the gateway's own meta-operations.

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

/** Spec §4.3 names the six social networks only by description; these are their lowercase names. */
export const SUPERSEARCH_PLATFORMS = [
  'tiktok',
  'instagram',
  'youtube',
  'twitter',
  'weibo',
  'reddit',
] as const;

const suggestedCall = z.object({
  service: z.string().describe('Service of the action to call.'),
  action: z
    .string()
    .describe('Action to call: POST /api/run/{service}/{action}, or MCP tool {service}_{action}.'),
  params: z.record(z.string(), z.unknown()).describe('Ready-to-run JSON body.'),
  price_cents: z.number().int().describe('Price of that call in cents, charged only if it succeeds.'),
  why: z.string().describe('Why this call fits the intent.'),
});

export const consult = defineAction({
  service: 'platform',
  action: 'consult',
  title: 'Plan calls for a goal',
  summary:
    'Turns a plain-English goal into ready-to-run catalog calls, each { service, action, params, price_cents }. ' +
    'Start here when you do not know which action fits. Parameters it can read from your text (URLs, ' +
    'addresses, zip codes, queries) are filled in; review them before posting each call to its own path.',
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
    calls: z.array(suggestedCall).describe('Suggested calls, best first.'),
    total_price_cents: z.number().int().describe('Sum of the suggested calls’ prices.'),
  }),
  annotations: readOnly,
  example: { intent: 'Get the rent estimate for 5500 Grand Lake Dr, San Antonio, TX 78244' },
  keywords: ['plan', 'help', 'which', 'recommend'],
});

export const supersearch = defineAction({
  service: 'platform',
  action: 'supersearch',
  title: 'Multi-source search with cited evidence',
  summary:
    'Flat-priced multi-source retrieval: plans the search, races independent indexes per facet, optionally ' +
    'extracts full page content, and returns normalized evidence in which every item cites a transaction id. ' +
    'Internal source calls are included in the price. When only query is given, the routing is inferred.',
  priceCents: 5,
  strict: true,
  input: inputObject(true, {
    query: z.string().min(1).max(2000).describe('What to search for (1-2000 chars).'),
    facets: z
      .array(z.enum(SUPERSEARCH_FACETS))
      .min(1)
      .max(15)
      .default(['web'])
      .describe(
        `Source families to search concurrently (1-15, default ["web"]): ${SUPERSEARCH_FACETS.join(', ')}.`,
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
    budgetCents: z.number().int().min(1).max(4).optional().describe('Internal budget hint, 1-4 cents.'),
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
        }),
      )
      .describe('Normalized evidence, best first.'),
  }),
  annotations: { ...readOnly, openWorldHint: true },
  timeoutMs: 120_000,
  example: { query: 'latest Node.js LTS release notes', facets: ['web'] },
  keywords: ['search', 'research', 'evidence', 'sources', 'web search', 'news'],
});

export const discover = defineAction({
  service: 'platform',
  action: 'discover',
  title: 'Search the catalog',
  summary:
    'Free keyword search over the catalog: returns matching actions with prices and descriptions. No ' +
    'authentication needed.',
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
  keywords: ['catalog', 'find', 'search actions', 'tools'],
});

export const balance = defineAction({
  service: 'platform',
  action: 'balance',
  title: 'My balance',
  summary:
    'Returns your account balance: posted credit, amount held by calls in flight, and what is available.',
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
  keywords: ['credit', 'account', 'funds', 'money left'],
});

export const transactions = defineAction({
  service: 'platform',
  action: 'transactions',
  title: 'My recent transactions',
  summary:
    'Lists your most recent transactions, newest first: calls with their price, charge, status and payment ' +
    'method, and the money that moved without a call (credits, card top-ups, settlements of the credit line, ' +
    'refunds, disputes).',
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
            .enum(['call', 'credit', 'topup', 'settlement', 'refund', 'dispute', 'dispute_reversal', 'line'])
            .describe('call, or money that moved without one (topup, settlement of the credit line, …).'),
          action: z.string().describe('Action id of a call; account/<kind> otherwise.'),
          amount_micros: z
            .number()
            .int()
            .describe('Effect on the balance in micro-USD, signed (a call: minus its net charge).'),
          status: z
            .enum(['pending', 'succeeded', 'failed', 'refunded'])
            .describe(
              'Outcome; refunded when the work it started failed later; a declined settlement failed.',
            ),
          refunded_cents: z.number().int().describe('Refunded, in cents.'),
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
  keywords: ['history', 'spend', 'charges', 'usage'],
});

export const platform = group(consult, supersearch, discover, balance, transactions);
