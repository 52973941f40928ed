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

// A second batch, written after the first round of rules and scored before any change it prompted
// (bench/agents-untouched.json keeps that first measurement).
export const FRESH_2: Goal[] = [
  {
    goal: 'what rent should I ask for my condo at 301 N Clark St, Chicago, IL 60654',
    actions: ['propstats/rent-estimate'],
    values: { address: '301 N Clark St, Chicago, IL 60654' },
  },
  {
    goal: 'comps and a value range for 12 Oak Ct, Sacramento, CA 95814 within half a mile',
    actions: ['propstats/value-estimate'],
    values: { address: '12 Oak Ct, Sacramento, CA 95814', maxRadius: 0.5 },
  },
  {
    goal: 'list houses for sale in Tampa, FL, 3+ bedrooms, 2+ baths, below 600k',
    actions: ['propstats/sale-listings'],
    values: { city: 'Tampa', state: 'FL', bedrooms: '3-*', bathrooms: '2-*', price: '*-600000' },
  },
  {
    goal: 'how many days do homes sit on the market in 37203',
    actions: ['propstats/market-stats'],
    values: { zipCode: '37203', dataType: 'Sale' },
  },
  {
    goal: 'Rentals under $1800/mo near 47.6062, -122.3321, 2 mile radius',
    actions: ['propstats/rental-listings'],
    values: { latitude: 47.6062, longitude: -122.3321, radius: 2, price: '*-1800' },
  },
  {
    goal: 'Resolve "1 Infinite Lp Cupertino" into a full address',
    actions: ['propdata/autocomplete'],
    values: { search: '1 Infinite Lp Cupertino' },
  },
  {
    goal: 'Equity and open liens at 42 Harbor View Rd, Newport, RI 02840?',
    actions: ['propdata/property-detail'],
    values: { address: '42 Harbor View Rd, Newport, RI 02840' },
  },
  {
    goal: 'give me an AVM for property 30918842',
    actions: ['propdata/avm'],
    values: { id: '30918842' },
  },
  {
    goal: "need the cell phone of the person who owns 88 Elm St, Salem, OR 97301, I'm a buyer",
    actions: ['propdata/skiptrace'],
    values: { address: '88 Elm St', city: 'Salem', state: 'OR', zip: '97301' },
  },
  {
    goal: 'Find contact info for Maria Lopez in Phoenix, AZ',
    actions: ['propdata/skiptrace'],
    values: { first_name: 'Maria', last_name: 'Lopez', city: 'Phoenix', state: 'AZ' },
  },
  {
    goal: 'acreage and APN of the lot at 700 Prairie Ln, Lincoln, NE 68508',
    actions: ['propdata/parcel'],
    values: { address: '700 Prairie Ln, Lincoln, NE 68508' },
  },
  {
    goal: 'tax history for 15 Cedar Ave, Ithaca, NY 14850',
    actions: ['propstats/properties', 'propdata/property-detail'],
    values: { address: '15 Cedar Ave, Ithaca, NY 14850' },
  },
  // web
  {
    goal: 'grab the article at https://news.example.com/2024/05/story.html as clean markdown',
    actions: ['scraperA/scrape', 'scraperC/markdown', 'scraperB/scrape'],
    values: { url: 'https://news.example.com/2024/05/story.html' },
  },
  {
    goal: 'Crawl docs.example.dev — all pages, up to 60 — and give me their content',
    actions: ['scraperA/crawl', 'scraperB/crawl'],
    values: { url: 'https://docs.example.dev', 'limit|maxPages': 60 },
    steps: ['scraperA/crawl|scraperB/crawl', 'scraperA/crawl_status|scraperB/crawl_status'],
  },
  {
    goal: 'where is crawl_a_0mwjljzsg0rz41z4futydvtgz at?',
    actions: ['scraperA/crawl_status'],
    values: { id: 'crawl_a_0mwjljzsg0rz41z4futydvtgz' },
  },
  {
    goal: 'next batch of pages for crawl_b_0mwpli02cpnem29gtpfsh44mz',
    actions: ['scraperB/crawl_status'],
    values: { id: 'crawl_b_0mwpli02cpnem29gtpfsh44mz' },
  },
  {
    goal: 'extract_b_0mwn28i3akzbknsf7mgowjx5l — results?',
    actions: ['scraperB/extract_status'],
    values: { id: 'extract_b_0mwn28i3akzbknsf7mgowjx5l' },
  },
  {
    goal: 'check the crawl I started earlier',
    actions: ['scraperA/crawl_status', 'scraperB/crawl_status'],
    missing: ['id'],
  },
  {
    goal: 'what URLs does https://shop.example.com have? just the list, no content',
    actions: ['scraperA/map', 'scraperB/map'],
    values: { url: 'https://shop.example.com' },
  },
  {
    goal: 'Fetch https://example.com/login with the cookie session=abc123 as raw HTML',
    actions: ['scraperC/scrape'],
    values: { url: 'https://example.com/login' },
  },
  {
    goal: 'page https://example.org/widgets loads its data late: wait 8 seconds, then screenshot it',
    actions: ['scraperA/scrape', 'scraperB/scrape'],
    values: { url: 'https://example.org/widgets', waitFor: 8000 },
  },
  {
    goal: 'search "site reliability engineering books" and return 12 results',
    actions: ['scraperA/search', 'scraperB/search'],
    values: { query: 'site reliability engineering books', limit: 12 },
  },
  {
    goal: 'latest headlines this past week on semiconductor export controls',
    actions: ['scraperB/search', 'platform/supersearch'],
    values: { query: 'semiconductor export controls' },
  },
  {
    goal: 'from https://jobs.example.com/123 pull: company, salary(number), remote(boolean)',
    actions: ['scraperC/extract', 'scraperA/extract', 'scraperB/extract'],
    values: { 'url|urls.0': 'https://jobs.example.com/123' },
  },
  {
    goal: 'compare pricing on https://a.example.com/pricing, https://b.example.com/pricing and https://c.example.com/pricing as structured data',
    actions: ['scraperA/extract', 'scraperB/extract'],
    values: { 'urls.0': 'https://a.example.com/pricing', 'urls.2': 'https://c.example.com/pricing' },
  },
  {
    goal: 'academic and news sources on CRISPR off-target effects, with citations',
    actions: ['platform/supersearch'],
    values: { query: 'CRISPR off-target effects' },
  },
  {
    goal: 'Wie war https://example.de/preise am 1. Juni 2020? archived version please',
    actions: ['platform/supersearch'],
    values: { 'urls.0': 'https://example.de/preise' },
  },
  // files, staging, video
  {
    goal: 'put my local podcast.mp3 (52 MB) into storage tagged episodes',
    actions: ['files/upload'],
    values: { filename: 'podcast.mp3', size_bytes: 52000000, 'tags.0': 'episodes' },
  },
  {
    goal: 'import https://cdn.example.com/logo.svg into my files',
    actions: ['files/upload_from_url'],
    values: { url: 'https://cdn.example.com/logo.svg' },
  },
  {
    goal: 'do I already have a file called budget.xlsx stored?',
    actions: ['files/list'],
    values: { filename: 'budget.xlsx' },
  },
  {
    goal: 'I need an upload URL for reference.png to feed an image model',
    actions: ['mediastage/upload'],
    values: { file_name: 'reference.png', content_type: 'image/png' },
  },
  {
    goal: 'add file_0mwhcveyh2jzzs6f3dwlohq21 to the video editor as background music',
    actions: ['videoasm/upload'],
    values: { file_id: 'file_0mwhcveyh2jzzs6f3dwlohq21' },
  },
  {
    goal: 'kick off the full-resolution render of prj_0mwp6aztv7i2d3v1kk3mv2bsx and tell me when it is done',
    actions: ['videoasm/render'],
    values: { project_id: 'prj_0mwp6aztv7i2d3v1kk3mv2bsx', intent: 'final' },
    steps: ['videoasm/render', 'videoasm/result'],
  },
  {
    goal: 'download link for render rnd_0mwuraklkfy348m0sdet3gk8x',
    actions: ['videoasm/result'],
    values: { job_id: 'rnd_0mwuraklkfy348m0sdet3gk8x' },
  },
  {
    goal: 'set up a 1:1 video project named Product Tour',
    actions: ['videoasm/create_project'],
    values: { name: 'Product Tour', 'format.aspectRatio': '1:1' },
  },
  {
    goal: 'turn file_0mwlhv8dkr3ayn66hfyeagciv into a 9:16 reel and render it',
    actions: ['videoasm/upload', 'videoasm/render'],
    consultFirst: ['videoasm/upload'],
    values: { file_id: 'file_0mwlhv8dkr3ayn66hfyeagciv' },
    steps: [
      'videoasm/upload',
      'videoasm/create_project',
      'videoasm/validate',
      'videoasm/put_composition',
      'videoasm/render',
    ],
  },
  {
    goal: 'make a short video out of intro.mov from my computer (30 MB)',
    actions: ['files/upload', 'videoasm/upload', 'videoasm/render'],
    consultFirst: ['files/upload'],
    values: { filename: 'intro.mov', size_bytes: 30000000 },
    steps: ['files/upload', 'videoasm/upload', 'videoasm/create_project', 'videoasm/render'],
  },
  {
    goal: 'stage a file',
    actions: ['mediastage/upload'],
    missing: ['file_name', 'content_type'],
  },
  {
    goal: 'upload photo.jpg',
    actions: ['files/upload', 'mediastage/upload'],
    consultFirst: ['files/upload'],
    missing: ['size_bytes'],
    otherReading: ['mediastage/upload'],
  },
  // platform
  {
    goal: 'how much have I got left to spend?',
    actions: ['platform/balance'],
  },
  {
    goal: 'show what my last 3 calls cost',
    actions: ['platform/transactions'],
    values: { limit: 3 },
  },
  {
    goal: 'wich actions can get property values?',
    actions: ['platform/discover', 'propstats/value-estimate', 'propdata/avm'],
  },
];
