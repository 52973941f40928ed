import type { Action } from '../catalog/index.js';
import type { Match } from './catalog-search.js';
import { extract } from './consult-extract.js';
import { rank } from './consult-rank.js';

// platform/discover's ranking: consult's (the catalog's words, the goal's values and how much of them each action
// takes), without consult's refusal of weak matches. A plain keyword query has no values, so it ranks by the
// catalog's words alone; a sentence with an address, a URL or an id ranks the actions that take them first.

export function rankGoal(query: string, limit: number, keep: (a: Action) => boolean = () => true): Match[] {
  return rank(extract(query), keep, true)
    .map((c) => ({ action: c.action, score: Math.max(0.01, c.score) }))
    .slice(0, limit);
}
