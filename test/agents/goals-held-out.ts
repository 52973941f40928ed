import type { Goal } from './goals.js';

// HELD-OUT goals of issue 25: written before any rule of that issue was changed, committed on their own, and
// never read while tuning. The planner's code never imports test/ (the layer table forbids it); tuning reads
// test/agents/goals.ts and test/agents/goals-fresh.ts only. test/agents/agents.test.ts gates this set at the
// targets docs/benchmarks.md claims; bench/agents-untouched.json keeps the figures first measured on it.
//
// Written in the voice of agents and people: paraphrases, typos, other languages' word order, ids pasted from
// earlier responses, quoted text, units, goals that need two or three calls, goals that leave a value out.

export const HELD_OUT_25: Goal[] = [
  // --- property: propstats
  {
    goal: 'whats the rent on 1420 Elm Street, Dallas, TX 75201 likely to be',
    actions: ['propstats/rent-estimate'],
    values: { address: '1420 Elm Street, Dallas, TX 75201' },
  },
  {
    goal: 'Give me an estimated sale price plus comps for 77 Beacon St, Boston, MA 02108, use 10 comparables',
    actions: ['propstats/value-estimate'],
    values: { address: '77 Beacon St, Boston, MA 02108', compCount: 10 },
  },
  {
    goal: 'homes for sale in Denver CO with at least 4 bedrooms, max 20 results',
    actions: ['propstats/sale-listings'],
    values: { city: 'Denver', state: 'CO', bedrooms: '4-*', limit: 20 },
  },
  {
    goal: 'apartments for rent in 60614 under 2,500 a month',
    actions: ['propstats/rental-listings'],
    values: { zipCode: '60614', price: '*-2500' },
  },
  {
    goal: 'Sale market trends in zip 85004 over the past 24 months',
    actions: ['propstats/market-stats'],
    values: { zipCode: '85004', dataType: 'Sale', historyRange: 24 },
  },
  {
    goal: 'For 9 Lake View Ter, Madison, WI 53703 the monthly rent estimate, please',
    actions: ['propstats/rent-estimate'],
    values: { address: '9 Lake View Ter, Madison, WI 53703' },
  },
  {
    goal: 'estimte the valu of 501 Congress Ave, Austin, TX 78701',
    actions: ['propstats/value-estimate', 'propdata/avm'],
    values: { address: '501 Congress Ave, Austin, TX 78701' },
  },
  {
    goal: 'property records for houses built 2010 or later in zip 32801',
    actions: ['propstats/properties'],
    values: { zipCode: '32801', yearBuilt: '2010-*' },
  },
  {
    goal: 'Condos for sale within 3 miles of 25.7617, -80.1918',
    actions: ['propstats/sale-listings'],
    values: { latitude: 25.7617, longitude: -80.1918, radius: 3, propertyType: 'Condo' },
  },
  {
    goal: 'rental listings in Portland, OR with 2 bathrooms, listed in the last week',
    actions: ['propstats/rental-listings'],
    values: { city: 'Portland', state: 'OR', bathrooms: 2, daysOld: 7 },
  },
  {
    goal: 'Houses to rent in Seattle, WA, 3 bedrooms, up to 3000 dollars',
    actions: ['propstats/rental-listings'],
    values: { city: 'Seattle', state: 'WA', bedrooms: 3, price: '*-3000' },
  },
  {
    goal: 'For zip 10001 the median rents show me',
    actions: ['propstats/market-stats'],
    values: { zipCode: '10001', dataType: 'Rental' },
  },
  {
    goal: 'rent estimate for the house at 61 Quarry Rd, Burlington, VT 05401 assuming 4 beds and 2.5 baths',
    actions: ['propstats/rent-estimate'],
    values: { address: '61 Quarry Rd, Burlington, VT 05401', bedrooms: 4, bathrooms: 2.5 },
  },
  // --- property: propdata
  {
    goal: 'I only have "12 Maple Av" — find me the full canonical address',
    actions: ['propdata/autocomplete'],
    values: { search: '12 Maple Av' },
  },
  {
    goal: 'Resolve the address "400 Ocean Dr Miami" to its official form',
    actions: ['propdata/autocomplete'],
    values: { search: '400 Ocean Dr Miami' },
  },
  {
    goal: 'full property report incl. mortgages and liens on 3300 Lakeshore Ave, Oakland, CA 94610',
    actions: ['propdata/property-detail'],
    values: { address: '3300 Lakeshore Ave, Oakland, CA 94610' },
  },
  {
    goal: 'Lender grade AVM with a confidence score for 18 Orchard Lane, Princeton, NJ 08540',
    actions: ['propdata/avm'],
    values: { address: '18 Orchard Lane, Princeton, NJ 08540' },
  },
  {
    goal: 'I need to reach out to the owner of 145 Pine St, Asheville, NC 28801 — phone and email please',
    actions: ['propdata/skiptrace'],
    values: { address: '145 Pine St', city: 'Asheville', state: 'NC', zip: '28801' },
  },
  {
    goal: 'The owner’s phone of 9 Elm Ct, Reno, NV 89501 find',
    actions: ['propdata/skiptrace'],
    values: { address: '9 Elm Ct', city: 'Reno', state: 'NV', zip: '89501' },
  },
  {
    goal: 'lot lines (geojson) for the parcel at 2 Ridge Road, Boulder, CO 80302',
    actions: ['propdata/parcel'],
    values: { address: '2 Ridge Road, Boulder, CO 80302' },
  },
  {
    goal: 'parcels within 0.5 miles of 39.7392, -104.9903',
    actions: ['propdata/parcel'],
    values: { latitude: 39.7392, longitude: -104.9903, radius: 0.5 },
  },
  {
    goal: 'Is 1208 Birch Dr, Tulsa, OK 74104 in a flood zone?',
    actions: ['propdata/property-detail'],
    values: { address: '1208 Birch Dr, Tulsa, OK 74104' },
  },
  {
    goal: 'Look up "88 Harbr Blvd" and then pull the full property record',
    actions: ['propdata/autocomplete', 'propdata/property-detail'],
    consultFirst: ['propdata/autocomplete'],
    values: { search: '88 Harbr Blvd' },
    steps: ['propdata/autocomplete', 'propdata/property-detail'],
  },
  {
    goal: 'property detail for property id 185203947',
    actions: ['propdata/property-detail'],
    values: { id: '185203947' },
  },
  // --- web: crawls and their ids
  {
    goal: 'Crawl https://docs.example.org and give me the markdown of all its pages',
    actions: ['scraperA/crawl', 'scraperB/crawl'],
    values: { url: 'https://docs.example.org' },
    steps: ['scraperA/crawl|scraperB/crawl', 'scraperA/crawl_status|scraperB/crawl_status'],
  },
  {
    goal: 'get me every page on https://blog.example.net as markdown (max 40 pages)',
    actions: ['scraperA/crawl', 'scraperB/crawl'],
    values: { url: 'https://blog.example.net', 'limit|maxPages': 40 },
  },
  {
    goal: 'crawl https://docs.rs/serde two levels deep, 30 pages max, then show me the pages',
    actions: ['scraperA/crawl', 'scraperB/crawl'],
    values: { url: 'https://docs.rs/serde', 'limit|maxPages': 30, maxDepth: 2 },
    steps: ['scraperA/crawl|scraperB/crawl', 'scraperA/crawl_status|scraperB/crawl_status'],
  },
  {
    goal: 'Status of crawl crawl_a_0mwo46pho1mkbppmy0dximdug',
    actions: ['scraperA/crawl_status'],
    values: { id: 'crawl_a_0mwo46pho1mkbppmy0dximdug' },
  },
  {
    goal: 'is my crawl crawl_b_0mwnuppbtj9r7kev0axck8ssm done yet?',
    actions: ['scraperB/crawl_status'],
    values: { id: 'crawl_b_0mwnuppbtj9r7kev0axck8ssm' },
  },
  {
    goal: 'fetch the pages of crawl job crawl_a_0mwml4zgfyaugq93yw8gsj8yc, skipping the first 100',
    actions: ['scraperA/crawl_status'],
    values: { id: 'crawl_a_0mwml4zgfyaugq93yw8gsj8yc', skip: 100 },
  },
  {
    goal: 'crawl_7c1f0e9a2b how far along is it',
    actions: ['scraperA/crawl_status', 'scraperB/crawl_status'],
    values: { id: 'crawl_7c1f0e9a2b' },
  },
  {
    goal: 'extraction extract_b_0mwidy3yf30ixsp528t4k7aoi - has it finished?',
    actions: ['scraperB/extract_status'],
    values: { id: 'extract_b_0mwidy3yf30ixsp528t4k7aoi' },
  },
  // --- web: single pages
  {
    goal: 'Turn https://en.wikipedia.org/wiki/Hamburg into markdown',
    actions: ['scraperA/scrape', 'scraperC/markdown', 'scraperB/scrape'],
    values: { url: 'https://en.wikipedia.org/wiki/Hamburg' },
  },
  {
    goal: 'full-page screenshot of https://www.example.com/pricing',
    actions: ['scraperA/scrape', 'scraperB/scrape'],
    values: { url: 'https://www.example.com/pricing' },
  },
  {
    goal: 'The page https://shop.example.com/p/123 blocks datacenter IPs; fetch it anyway through a residential proxy',
    actions: ['scraperC/scrape_residential'],
    values: { url: 'https://shop.example.com/p/123' },
  },
  {
    goal: 'raw html of https://news.ycombinator.com, wait for the selector .itemlist first',
    actions: ['scraperC/scrape'],
    values: { url: 'https://news.ycombinator.com', wait_for_selector: '.itemlist' },
  },
  {
    goal: 'scrape https://app.example.io/dashboard, give the JavaScript 3 seconds to load',
    actions: ['scraperA/scrape', 'scraperB/scrape'],
    values: { url: 'https://app.example.io/dashboard', waitFor: 3000 },
  },
  {
    goal: 'Of the page https://example.fr/actualites the plain text I want',
    actions: ['scraperB/scrape'],
    values: { url: 'https://example.fr/actualites' },
  },
  {
    goal: 'markdown of https://example.com/article — the whole page, not just the main content',
    actions: ['scraperC/markdown', 'scraperA/scrape', 'scraperB/scrape'],
    values: { url: 'https://example.com/article' },
  },
  {
    goal: 'Die Seite https://www.example.de/impressum als Markdown, bitte',
    actions: ['scraperA/scrape', 'scraperC/markdown', 'scraperB/scrape'],
    values: { url: 'https://www.example.de/impressum' },
  },
  {
    goal: 'scrape a web page to markdown for me',
    actions: ['scraperA/scrape', 'scraperC/markdown', 'scraperB/scrape'],
    missing: ['url'],
  },
  // --- web: maps, searches, extraction
  {
    goal: 'list all URLs on https://www.example.edu, following links 3 levels deep',
    actions: ['scraperB/map'],
    values: { url: 'https://www.example.edu', maxDepth: 3 },
  },
  {
    goal: 'give me up to 200 URLs from the sitemap of https://example.org',
    actions: ['scraperA/map'],
    values: { url: 'https://example.org', limit: 200 },
  },
  {
    goal: 'search the web for "best espresso grinder 2024", 8 results',
    actions: ['scraperA/search', 'scraperB/search'],
    values: { query: 'best espresso grinder 2024', limit: 8 },
  },
  {
    goal: 'news from the past 24 hours about the Federal Reserve rate decision',
    actions: ['scraperB/search', 'platform/supersearch'],
    values: { query: 'Federal Reserve rate decision' },
  },
  {
    goal: 'image results for golden gate bridge at night',
    actions: ['scraperB/search'],
    values: { query: 'golden gate bridge at night' },
  },
  {
    goal: 'Pull product name, price and rating from https://store.example.com/item/42',
    actions: ['scraperC/extract', 'scraperA/extract', 'scraperB/extract'],
    values: { 'url|urls.0': 'https://store.example.com/item/42' },
  },
  {
    goal: 'From https://a.example.com/1 and https://a.example.com/2 extract the author and publication date, with source quotes for every field',
    actions: ['scraperB/extract'],
    values: { 'urls.0': 'https://a.example.com/1', 'urls.1': 'https://a.example.com/2', basis: true },
  },
  {
    goal: 'search for kubernetes operator tutorials and include the content of the top 3 results',
    actions: ['scraperA/search', 'scraperB/search'],
    values: { query: 'kubernetes operator tutorials', limit: 3 },
  },
  // --- research
  {
    goal: 'Research: what do recent academic papers say about microplastics in drinking water? cite sources',
    actions: ['platform/supersearch'],
    values: { query: 'microplastics in drinking water' },
  },
  {
    goal: 'whats being said on TikTok about the Nintendo Switch 2',
    actions: ['platform/supersearch'],
    values: { query: 'Nintendo Switch 2', platform: 'tiktok' },
  },
  {
    goal: 'archived copy of https://example.com/terms as of January 5, 2021',
    actions: ['platform/supersearch'],
    values: { 'urls.0': 'https://example.com/terms', asOf: '20210105' },
  },
  {
    goal: 'cited news coverage of OpenAI from the last 3 days',
    actions: ['platform/supersearch', 'scraperB/search'],
    values: { query: 'OpenAI' },
  },
  // --- files
  {
    goal: 'store a 2.5 MB PDF called report.pdf from my disk',
    actions: ['files/upload'],
    values: { filename: 'report.pdf', mime: 'application/pdf', size_bytes: 2500000 },
  },
  {
    goal: 'save https://cdn.example.com/clips/b-roll.mp4 to my files tagged broll',
    actions: ['files/upload_from_url'],
    values: { url: 'https://cdn.example.com/clips/b-roll.mp4', 'tags.0': 'broll' },
  },
  {
    goal: "What files do I have tagged 'invoices'?",
    actions: ['files/list'],
    values: { tag: 'invoices' },
  },
  {
    goal: 'show me my 10 most recent uploads',
    actions: ['files/list'],
    values: { limit: 10 },
  },
  {
    goal: 'uplaod intro.mov frm my computer, its 120MB',
    actions: ['files/upload'],
    values: { filename: 'intro.mov', mime: 'video/quicktime', size_bytes: 120000000 },
  },
  {
    goal: 'upload video.mp4',
    actions: ['files/upload', 'mediastage/upload'],
    consultFirst: ['files/upload'],
    // Corrected after the untouched measurement, without running this file: the goal gives no size, so a
    // correct first call names size_bytes as missing (the same mistake was found in a tuning goal).
    missing: ['size_bytes'],
    otherReading: ['mediastage/upload'],
  },
  // --- media staging
  {
    goal: 'stage cat.jpg as input for an image generation model',
    actions: ['mediastage/upload'],
    values: { file_name: 'cat.jpg', content_type: 'image/jpeg' },
  },
  {
    goal: 'upload narration.wav so I can pass it as audio_url to a model',
    actions: ['mediastage/upload'],
    values: { file_name: 'narration.wav', content_type: 'audio/wav' },
  },
  // --- video assembly
  {
    goal: 'import file file_0mwp6of8shbef4ijngbytjs9b into the video editor',
    actions: ['videoasm/upload'],
    values: { file_id: 'file_0mwp6of8shbef4ijngbytjs9b' },
  },
  {
    goal: 'Start a final render of project prj_0mwk4xpgkeifhhntqap5iirhs',
    actions: ['videoasm/render'],
    values: { project_id: 'prj_0mwk4xpgkeifhhntqap5iirhs', intent: 'final' },
    steps: ['videoasm/render', 'videoasm/result'],
  },
  {
    goal: 'quick draft render of prj_0mwmkp33srstqtj41ed3r8w0i, background priority',
    actions: ['videoasm/render'],
    values: { project_id: 'prj_0mwmkp33srstqtj41ed3r8w0i', intent: 'preview', priority: 'background' },
  },
  {
    goal: 'render rnd_0mwi1gxvetl3v4s3d8ixascpo — is the mp4 ready?',
    actions: ['videoasm/result'],
    values: { job_id: 'rnd_0mwi1gxvetl3v4s3d8ixascpo' },
  },
  {
    goal: 'Where is the output of render job rnd_0mwn5a8r0fbpr3af6h6wxyyjh',
    actions: ['videoasm/result'],
    values: { job_id: 'rnd_0mwn5a8r0fbpr3af6h6wxyyjh' },
  },
  {
    goal: 'Create a vertical 9:16 video project called Summer Promo at 60 fps',
    actions: ['videoasm/create_project'],
    values: { name: 'Summer Promo', 'format.aspectRatio': '9:16', 'format.fps': 60 },
  },
  {
    goal: 'Render my video project as a final MP4',
    actions: ['videoasm/render'],
    missing: ['project_id'],
  },
  {
    goal: 'Upload the video on my laptop (demo.mp4, 48 MB) and make a 16:9 video out of it',
    actions: ['files/upload', 'videoasm/upload', 'videoasm/create_project', 'videoasm/render'],
    consultFirst: ['files/upload'],
    values: { filename: 'demo.mp4', mime: 'video/mp4' },
    steps: [
      'files/upload',
      'videoasm/upload',
      'videoasm/create_project',
      'videoasm/validate',
      'videoasm/put_composition',
      'videoasm/render',
    ],
  },
  {
    goal: 'Take https://example.com/videos/raw.mov and turn it into a rendered square video',
    actions: ['files/upload_from_url', 'videoasm/upload', 'videoasm/render'],
    consultFirst: ['files/upload_from_url'],
    values: { url: 'https://example.com/videos/raw.mov' },
    steps: ['files/upload_from_url', 'videoasm/upload', 'videoasm/create_project', 'videoasm/render'],
  },
  {
    goal: 'Store my local logo.png (340 KB) and then use it in a video edit',
    actions: ['files/upload', 'videoasm/upload'],
    consultFirst: ['files/upload'],
    values: { filename: 'logo.png', mime: 'image/png' },
    steps: ['files/upload', 'videoasm/upload'],
  },
  {
    goal: 'Put media med_0mwkrrswjvtsy2xomrtx8t4s6 into project prj_0mwtum9ggedltdbscvl8y35m4 and render it',
    actions: ['videoasm/validate', 'videoasm/put_composition', 'videoasm/render'],
    consultFirst: ['videoasm/validate'],
    steps: ['videoasm/validate', 'videoasm/put_composition', 'videoasm/render'],
  },
  // --- platform
  {
    goal: 'how much credit do I have left?',
    actions: ['platform/balance'],
  },
  {
    goal: 'list my last 15 charges',
    actions: ['platform/transactions'],
    values: { limit: 15 },
  },
  {
    goal: 'was I refunded for the render that failed?',
    actions: ['platform/transactions'],
  },
];
