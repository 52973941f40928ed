import type { InputOf } from './types.js';

// platform/supersearch's routing. When the caller gives only a query (no facets), an intent classifier picks the
// facets (docs/spec.md §4.3): plain rules over the query's words, so it costs nothing, needs no model and is the same
// every time. Then the plan is fitted into the internal budget: every source call is costed at the catalog
// price of the action it stands for (a search 1 cent, a browser render 1, a residential fetch 4; the built-in
// plain fetch is free), and facets that do not fit are skipped and reported.

type Input = InputOf<'platform/supersearch'>;

export type Facet = NonNullable<Input['facets']>[number];

/** Internal cost of one source call, in cents (the catalog price of the equivalent action). */
export const COST = { search: 1, browser: 1, residential: 4, fetch: 0 } as const;

/** Without budgetCents: every facet's first index, plus this much for fallbacks, races and hard pages. */
export const DEFAULT_EXTRA_CENTS = 4;

const RULES: Array<[Facet, RegExp]> = [
  [
    'news',
    /\b(news|latest|today|breaking|this week|yesterday|announced|announcement|headlines?|just released|current events|recent(?:ly)?)\b/i,
  ],
  [
    'academic',
    /\b(papers?|stud(?:y|ies)|arxiv|journals?|peer[- ]reviewed|doi|scholarly|academic|preprints?|meta-analysis|research on)\b/i,
  ],
  [
    'code',
    /\b(github|gitlab|repos?|repositor(?:y|ies)|librar(?:y|ies)|packages?|npm|pypi|crates?|sdk|source code|code|stack ?trace|exception|compile|snippet)\b/i,
  ],
  [
    'docs',
    /\b(docs|documentation|api reference|reference manual|how to (?:configure|install|set up|use)|tutorial|guide|manual|changelog|release notes)\b/i,
  ],
  [
    'social',
    /\b(reddit|subreddit|twitter|tweets?|tiktok|instagram|youtube|weibo|forums?|people (?:are )?saying|opinions?|sentiment|threads?|hacker news)\b/i,
  ],
  ['public-filings', /\b(10-k|10-q|8-k|s-1|sec filings?|edgar|annual report|proxy statement)\b/i],
  [
    'financials',
    /\b(revenue|earnings|profits?|ebitda|financial results|quarterly results|guidance|market cap)\b/i,
  ],
  ['funding', /\b(raised|funding|series [a-e]|seed round|investors?|venture capital)\b/i],
  ['legal', /\b(lawsuits?|court|ruling|sued|litigation|statutes?|case law|judge|verdict)\b/i],
  ['regulatory', /\b(regulations?|regulatory|fda|ftc|federal register|rulemaking|epa|fcc)\b/i],
  ['compliance', /\b(compliance|gdpr|hipaa|soc ?2|sanctions|ofac|aml|kyc|pci)\b/i],
  ['nonprofits', /\b(nonprofits?|non-profits?|charit(?:y|ies)|501\(c\)|form 990)\b/i],
];

const PLATFORM_WORDS: Array<[RegExp, Input['platform'] & string]> = [
  [/\btik ?tok\b/i, 'tiktok'],
  [/\binstagram\b/i, 'instagram'],
  [/\byoutube\b/i, 'youtube'],
  [/\btwitter\b|\btweets?\b/i, 'twitter'],
  [/\bweibo\b/i, 'weibo'],
  [/\breddit\b|\bsubreddit\b/i, 'reddit'],
];

const URL_RE = /\bhttps?:\/\/[^\s<>"'`]+/gi;

export interface Route {
  routedBy: 'caller' | 'classifier';
  /** Search facets to run, strongest first (empty when `urls` are extracted instead). */
  facets: Facet[];
  recencyDays?: number;
  platform?: Input['platform'];
  /** URLs to extract directly (the caller's `urls`, or URLs the query itself names): search is skipped. */
  urls: string[];
  /** Extract `urls` through the browser (and residential proxies) rather than a plain fetch first. */
  hard: boolean;
  skipped: Array<{ facet: Facet; reason: string }>;
  budgetCents: number;
}

/** The facets a query asks for, strongest first; web joins unless two specialised facets were found. */
export function classify(query: string): Facet[] {
  const found = RULES.filter(([, re]) => re.test(query)).map(([f]) => f);
  if (found.length >= 2) return found;
  return [...found, 'web'];
}

export function route(input: Input, searchIndexes: number): Route {
  const named = [...input.query.matchAll(URL_RE)].map((m) => m[0].replace(/[.,;:!?)]+$/, ''));
  const urls = (input.urls ?? (input.facets === undefined ? named : [])).slice(0, 5);
  const byCaller = input.facets !== undefined;
  const asked: Facet[] = byCaller ? [...new Set(input.facets)] : classify(input.query);
  const out: Route = {
    routedBy: byCaller ? 'caller' : 'classifier',
    facets: [],
    urls,
    hard:
      asked.includes('scrape-hard') ||
      (!byCaller && /\b(blocked|captcha|anti-?bot|cloudflare|403)\b/i.test(input.query)),
    skipped: [],
    budgetCents: 0,
  };
  if (input.recencyDays !== undefined) out.recencyDays = input.recencyDays;
  else if (asked.includes('news')) out.recencyDays = 7;
  const platform =
    input.platform ?? (byCaller ? undefined : PLATFORM_WORDS.find(([re]) => re.test(input.query))?.[1]);
  if (platform) out.platform = platform;
  if (urls.length > 0) {
    // urls skip search (docs/spec.md §4.3): fetching them is the whole plan; a hard page may cost a residential fetch.
    out.budgetCents = input.budgetCents ?? DEFAULT_EXTRA_CENTS;
    return out;
  }
  // One index call per facet (two when racing). Budget: the caller's, else all facets plus the extra.
  const perFacet = input.timeCritical && searchIndexes > 1 ? 2 * COST.search : COST.search;
  out.budgetCents = input.budgetCents ?? asked.length * perFacet + DEFAULT_EXTRA_CENTS;
  let left = out.budgetCents;
  for (const f of asked) {
    if (perFacet > left) {
      out.skipped.push({ facet: f, reason: `over the budget of ${out.budgetCents} cents` });
      continue;
    }
    left -= perFacet;
    out.facets.push(f);
  }
  return out;
}
