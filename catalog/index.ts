import type { Action } from './define.js';
import { files } from './files.js';
import { mediastage } from './mediastage.js';
import { platform } from './platform.js';
import { propdata } from './propdata.js';
import { propstats } from './propstats.js';
import { scraperA } from './scraperA.js';
import { scraperB } from './scraperB.js';
import { scraperC } from './scraperC.js';
import { videoasm } from './videoasm.js';

// The registry, in docs/spec.md §4 order (MCP lists tools in this order).
export const catalog = {
  ...mediastage,
  ...videoasm,
  ...platform,
  ...files,
  ...propstats,
  ...propdata,
  ...scraperA,
  ...scraperB,
  ...scraperC,
} as const;

export type Catalog = typeof catalog;

export const actions: readonly Action[] = Object.values(catalog);

const byId: ReadonlyMap<string, Action> = new Map(actions.map((a) => [a.id, a]));

export function findAction(id: string): Action | undefined {
  return byId.get(id);
}

export { type Access, type Action, type Annotations, defineAction, priceSentence } from './define.js';
