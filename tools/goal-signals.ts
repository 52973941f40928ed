import type { Action } from '../catalog/index.js';
import { type Match, scoreCatalog } from './catalog-search.js';
import { type Extracted, extract } from './consult-extract.js';

// Signals a goal's own values give about which action it wants, shared by platform/discover and
// platform/consult. They only apply when the goal carries such values, so a plain keyword query ranks by the
// catalog's words alone.

/** Fields through which a goal's ids reach an action; naming one is the strongest sign of intent. */
const ID_FIELDS: Record<string, Array<Extracted['ids'][number]['kind']>> = {
  id: ['crawlA', 'crawlB', 'crawl', 'extract'],
  job_id: ['render'],
  project_id: ['project'],
  file_id: ['file'],
};

/** The poll whose handle kind an id has (a scraperB crawl id belongs to scraperB/crawl_status). */
const ID_OWNER: Partial<Record<Extracted['ids'][number]['kind'], string>> = {
  crawlA: 'scraperA/crawl_status',
  crawlB: 'scraperB/crawl_status',
  extract: 'scraperB/extract_status',
  render: 'videoasm/result',
};

export function goalAdjustment(action: Action, x: Extracted): number {
  const shape = action.input.shape as Record<string, unknown>;
  let score = 0;
  for (const [field, kinds] of Object.entries(ID_FIELDS)) {
    if (!(field in shape)) continue;
    const ids = x.ids.filter((i) => kinds.includes(i.kind));
    if (ids.length === 0) continue;
    // An id made for another action (a scraperB crawl id on scraperA's poll) is no sign.
    const owned = ids.some((i) => ID_OWNER[i.kind] === undefined || ID_OWNER[i.kind] === action.id);
    if (owned) score += 5;
  }
  // A person's name, e-mail or phone in the goal: the actions that look people up by them.
  if (x.person && 'first_name' in shape && 'last_name' in shape) score += 3;
  if ((x.email && 'email' in shape) || (x.phone && 'phone' in shape)) score += 2;
  // The goal names pages or sites: actions that cannot take one are unlikely, one-page actions for many pages.
  if (x.urls.length > 0 && !('url' in shape) && !('urls' in shape)) score -= 2;
  if (x.urls.length > 1 && 'url' in shape && !('urls' in shape)) score -= 4;
  return score;
}

/** platform/discover's ranking: the catalog's words, adjusted by the values the query carries. */
export function rankGoal(query: string, limit: number, keep: (a: Action) => boolean = () => true): Match[] {
  const x = extract(query);
  return scoreCatalog(query)
    .filter((m) => m.score > 0 && keep(m.action))
    .map((m) => ({ action: m.action, score: Math.max(0.01, m.score + goalAdjustment(m.action, x)) }))
    .sort((a, b) => b.score - a.score || a.action.priceCents - b.action.priceCents)
    .slice(0, limit);
}
