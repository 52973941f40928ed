import type { Action } from './define.js';
import { platform } from './platform.js';
import { scraperC } from './scraperC.js';

// The registry, in spec §4 order (MCP lists tools in this order).
export const catalog = {
  ...platform,
  ...scraperC,
} as const;

export type Catalog = typeof catalog;

export const actions: readonly Action[] = Object.values(catalog);

const byId: ReadonlyMap<string, Action> = new Map(actions.map((a) => [a.id, a]));

export function findAction(id: string): Action | undefined {
  return byId.get(id);
}

export { type Access, type Action, type Annotations, defineAction, priceSentence } from './define.js';
