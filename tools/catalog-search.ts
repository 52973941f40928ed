import { type Action, actions } from '../catalog/index.js';

// Keyword search over the catalog, used by platform/discover and platform/consult. The index is built once at
// module load; a query costs a few set lookups per action.

const STOP = new Set(
  'a an the and or of for to in on at by with from is are be me my i we our you your it this that get find want need please can could would how what which about into using use'.split(
    ' ',
  ),
);

export function tokenize(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((t) => t.length > 1 && !STOP.has(t))
    .map(stem);
}

/** Crude plural/verb folding so "estimates" matches "estimate" and "crawling" matches "crawl". */
function stem(t: string): string {
  if (t.length > 5 && t.endsWith('ing')) return t.slice(0, -3);
  if (t.length > 4 && t.endsWith('ies')) return `${t.slice(0, -3)}y`;
  if (t.length > 3 && t.endsWith('s') && !t.endsWith('ss')) return t.slice(0, -1);
  return t;
}

interface Indexed {
  action: Action;
  /** Words of the action's own name: the strongest signal ("markdown" → scraperC/markdown). */
  name: Set<string>;
  strong: Set<string>;
  weak: Set<string>;
}

const INDEX: Indexed[] = actions.map((a) => ({
  action: a,
  name: new Set(tokenize(a.action.replaceAll(/[-_]/g, ' '))),
  strong: new Set(tokenize(`${a.service} ${a.title} ${a.keywords.join(' ')}`)),
  weak: new Set(tokenize(a.summary)),
}));

export interface Match {
  action: Action;
  score: number;
}

export function searchCatalog(query: string, limit: number): Match[] {
  const terms = [...new Set(tokenize(query))];
  if (terms.length === 0) return [];
  const out: Match[] = [];
  for (const { action, name, strong, weak } of INDEX) {
    let score = 0;
    for (const t of terms) {
      if (name.has(t)) score += 4;
      else if (strong.has(t)) score += 3;
      else if (weak.has(t)) score += 1;
    }
    if (score > 0) out.push({ action, score: score / terms.length });
  }
  out.sort((x, y) => y.score - x.score || x.action.priceCents - y.action.priceCents);
  return out.slice(0, limit);
}
