import type { Goal } from './goals.js';

// Tuning goals of issue 25, written (with test/agents/goals-held-out.ts) before any rule of that issue changed,
// in the voice of agents and people: paraphrases, typos, other languages' word order, ids pasted from earlier
// responses, quoted text, units, goals that need two or three calls, goals that leave a value out. Unlike the
// held-out file, these were read while the rules were improved.

export const FRESH: Goal[] = [
  // --- property
  {
    goal: 'how much could I rent 2210 Oak Hollow Dr, Round Rock, TX 78681 for',
    actions: ['propstats/rent-estimate'],
    values: { address: '2210 Oak Hollow Dr, Round Rock, TX 78681' },
  },
  {
    goal: 'valuation w/ comparable sales for 8 Chestnut St, Salem, MA 01970 — 20 comps within 2 miles',
    actions: ['propstats/value-estimate'],
    values: { address: '8 Chestnut St, Salem, MA 01970', compCount: 20, maxRadius: 2 },
  },
  {
    goal: 'townhouses for sale in Raleigh, NC between 250k and 400k',
    actions: ['propstats/sale-listings'],
    values: { city: 'Raleigh', state: 'NC', propertyType: 'Townhouse', price: '250000-400000' },
  },
  {
    goal: 'studio apartments for rent in zip 02139',
    actions: ['propstats/rental-listings'],
    values: { zipCode: '02139', bedrooms: 0 },
  },
  {
    goal: 'In 94103 how have rents developed over the last 36 months?',
    actions: ['propstats/market-stats'],
    values: { zipCode: '94103', dataType: 'Rental', historyRange: 36 },
  },
  {
    goal: 'Autocomplete "1600 Amphitheatre Pk"',
    actions: ['propdata/autocomplete'],
    values: { search: '1600 Amphitheatre Pk' },
  },
  {
    goal: "the address I have is '221B Baker' — which real addresses could that be?",
    actions: ['propdata/autocomplete'],
    values: { search: '221B Baker' },
  },
  {
    goal: 'mortgage balance and equity of 14 Spruce Way, Bend, OR 97701',
    actions: ['propdata/property-detail'],
    values: { address: '14 Spruce Way, Bend, OR 97701' },
  },
  {
    goal: 'avm (strict match) for 300 Main Street, Annapolis, MD 21401',
    actions: ['propdata/avm'],
    values: { address: '300 Main Street, Annapolis, MD 21401', strict: true },
  },
  {
    goal: 'contact details of whoever owns 71 Birch Ln, Fargo, ND 58102',
    actions: ['propdata/skiptrace'],
    values: { address: '71 Birch Ln', city: 'Fargo', state: 'ND', zip: '58102' },
  },
  {
    goal: 'parcel boundary at lat 30.2672 lon -97.7431',
    actions: ['propdata/parcel'],
    values: { latitude: 30.2672, longitude: -97.7431 },
  },
  {
    goal: 'valuation for property id 99182733 from autocomplete',
    actions: ['propdata/avm', 'propstats/value-estimate'],
    values: { id: '99182733' },
  },
  {
    goal: 'multi-family properties with 5000+ sq ft in 73102',
    actions: ['propstats/properties', 'propstats/sale-listings'],
    values: { zipCode: '73102', propertyType: 'Multi-Family', squareFootage: '5000-*' },
  },
  {
    goal: 'Find "55 Wall St NY" first, then get me the valuation of it',
    actions: ['propdata/autocomplete', 'propdata/avm'],
    consultFirst: ['propdata/autocomplete'],
    values: { search: '55 Wall St NY' },
    steps: ['propdata/autocomplete', 'propdata/avm'],
  },
  // --- crawl and jobs
  {
    goal: 'crawl the whole site https://handbook.example.com and give me all pages in markdown',
    actions: ['scraperA/crawl', 'scraperB/crawl'],
    values: { url: 'https://handbook.example.com' },
    steps: ['scraperA/crawl|scraperB/crawl', 'scraperA/crawl_status|scraperB/crawl_status'],
  },
  {
    goal: 'every page of https://www.example.com/docs, at most 15, as plain text',
    actions: ['scraperB/crawl'],
    values: { url: 'https://www.example.com/docs', maxPages: 15 },
  },
  {
    goal: 'check on crawl_a_0mwg8n416pihhny9sicdod87m',
    actions: ['scraperA/crawl_status'],
    values: { id: 'crawl_a_0mwg8n416pihhny9sicdod87m' },
  },
  {
    goal: 'pages collected so far by crawl_b_0mwt4g1dqa65990dldhiobmae',
    actions: ['scraperB/crawl_status'],
    values: { id: 'crawl_b_0mwt4g1dqa65990dldhiobmae' },
  },
  {
    goal: 'My crawl id is crawl_0f9e8d7c. Results please.',
    actions: ['scraperA/crawl_status', 'scraperB/crawl_status'],
    values: { id: 'crawl_0f9e8d7c' },
  },
  {
    goal: 'results of extraction job extract_b_0mwkub9a5qpwsjjzt0q7d62q3',
    actions: ['scraperB/extract_status'],
    values: { id: 'extract_b_0mwkub9a5qpwsjjzt0q7d62q3' },
  },
  // --- pages
  {
    goal: 'read https://blog.example.com/post/99 for me (markdown)',
    actions: ['scraperA/scrape', 'scraperC/markdown', 'scraperB/scrape'],
    values: { url: 'https://blog.example.com/post/99' },
  },
  {
    goal: 'get https://example.com/status with a 10 second timeout, no browser, as html',
    actions: ['scraperC/scrape'],
    values: { url: 'https://example.com/status', timeout: 10, browser: false },
  },
  {
    goal: 'summary of https://example.org/long-report',
    actions: ['scraperB/scrape'],
    values: { url: 'https://example.org/long-report' },
  },
  {
    goal: 'https://spa.example.com render it and wait 5s then give me the markdown',
    actions: ['scraperA/scrape', 'scraperB/scrape'],
    values: { url: 'https://spa.example.com', waitFor: 5000 },
  },
  {
    goal: 'fetch a page as raw HTML',
    actions: ['scraperC/scrape'],
    missing: ['url'],
  },
  {
    goal: 'links on https://example.com/hub, 2 levels of links deep',
    actions: ['scraperB/map'],
    values: { url: 'https://example.com/hub', maxDepth: 2 },
  },
  {
    goal: "google 'vite vs webpack benchmark' and give me 10 hits",
    actions: ['scraperA/search', 'scraperB/search'],
    values: { query: 'vite vs webpack benchmark', limit: 10 },
  },
  {
    goal: 'news this week about the EU AI Act',
    actions: ['scraperB/search', 'platform/supersearch'],
    values: { query: 'EU AI Act' },
  },
  {
    goal: 'extract title, price(number) and sku from https://shop.example.com/p/7',
    actions: ['scraperC/extract', 'scraperA/extract', 'scraperB/extract'],
    values: { 'url|urls.0': 'https://shop.example.com/p/7' },
  },
  {
    goal: 'what do GitHub repos and docs say about "zod toJSONSchema"',
    actions: ['platform/supersearch'],
    values: { query: 'zod toJSONSchema' },
  },
  {
    goal: 'snapshot of https://example.com/pricing from 2019-03-01',
    actions: ['platform/supersearch'],
    values: { 'urls.0': 'https://example.com/pricing', asOf: '20190301' },
  },
  // --- files, staging, video
  {
    goal: 'I want to upload slides.pdf (5 MB) from my machine',
    actions: ['files/upload'],
    values: { filename: 'slides.pdf', mime: 'application/pdf', size_bytes: 5000000 },
  },
  {
    goal: 'keep a copy of https://example.com/a/photo.jpg in my storage',
    actions: ['files/upload_from_url'],
    values: { url: 'https://example.com/a/photo.jpg' },
  },
  {
    goal: 'files named intro.mp4 that I stored',
    actions: ['files/list'],
    values: { filename: 'intro.mp4' },
  },
  {
    goal: 'stage portrait.webp for an image-to-video model',
    actions: ['mediastage/upload'],
    values: { file_name: 'portrait.webp', content_type: 'image/webp' },
  },
  {
    goal: 'bring file_0mwm5yceq3bm36psn72i5tt1v into video assembly, name it opener.mp4',
    actions: ['videoasm/upload'],
    values: { file_id: 'file_0mwm5yceq3bm36psn72i5tt1v', filename: 'opener.mp4' },
  },
  {
    goal: 'preview render prj_0mwlsxoj6ei0pvjcxxebmgmtj then wait for the result',
    actions: ['videoasm/render'],
    values: { project_id: 'prj_0mwlsxoj6ei0pvjcxxebmgmtj', intent: 'preview' },
    steps: ['videoasm/render', 'videoasm/result'],
  },
  {
    goal: 'rnd_0mwi62d62seqodpxcdcroikho status',
    actions: ['videoasm/result'],
    values: { job_id: 'rnd_0mwi62d62seqodpxcdcroikho' },
  },
  {
    goal: 'new 4:5 project "Q3 recap" in 4k',
    actions: ['videoasm/create_project'],
    values: { name: 'Q3 recap', 'format.aspectRatio': '4:5', 'format.resolution': '4k' },
  },
  {
    goal: 'poll my render',
    actions: ['videoasm/result'],
    missing: ['job_id'],
  },
  {
    goal: 'I have clip.mp4 on my desktop and want it rendered into a video with a title',
    actions: ['files/upload', 'videoasm/upload', 'videoasm/render'],
    consultFirst: ['files/upload'],
    // The goal does not say how big the file is: only the person can.
    missing: ['size_bytes'],
    values: { filename: 'clip.mp4', mime: 'video/mp4' },
    steps: ['files/upload', 'videoasm/upload', 'videoasm/create_project', 'videoasm/render'],
  },
  {
    goal: 'make a video from https://cdn.example.com/raw/take2.mp4 (download it first)',
    actions: ['files/upload_from_url', 'videoasm/upload', 'videoasm/render'],
    consultFirst: ['files/upload_from_url'],
    values: { url: 'https://cdn.example.com/raw/take2.mp4' },
    steps: ['files/upload_from_url', 'videoasm/upload', 'videoasm/create_project', 'videoasm/render'],
  },
  {
    goal: 'use med_0mwu9oidfxtuda7dbt49wtev7 as the clip in prj_0mwgcrtgq8j14d6x96lp8kcxw, then render',
    actions: ['videoasm/validate', 'videoasm/put_composition', 'videoasm/render'],
    consultFirst: ['videoasm/validate'],
    steps: ['videoasm/validate', 'videoasm/put_composition', 'videoasm/render'],
  },
  {
    goal: 'upload song.mp3',
    actions: ['files/upload', 'mediastage/upload'],
    consultFirst: ['files/upload'],
    missing: ['size_bytes'],
    otherReading: ['mediastage/upload'],
  },
  // --- platform
  {
    goal: 'remaining balance?',
    actions: ['platform/balance'],
  },
  {
    goal: 'my 30 latest transactions',
    actions: ['platform/transactions'],
    values: { limit: 30 },
  },
];
