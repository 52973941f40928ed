import { type Action, actions, findAction } from '../catalog/index.js';
import type { Services } from './context.js';
import { filesHandlers } from './files.js';
import { mediastageHandlers } from './mediastage.js';
import { propdataHandlers } from './propdata.js';
import { propstatsHandlers } from './propstats.js';
import { scraperAHandlers } from './scraperA.js';
import { scraperBHandlers } from './scraperB.js';
import { scraperCHandlers } from './scraperC.js';
import { supersearchPrecheck } from './supersearch.js';
import type { HandlerDef } from './types.js';
import { videoasmHandlers } from './videoasm.js';

// Which actions this gateway can run right now. An action is available when its handler's precheck (the same
// check a call runs before any hold) accepts the action's own example: the precheck is what answers
// `not_configured`, so listing and running cannot disagree. A poll is available when the action it polls is.
// Cheap (a few dozen pure checks), so doors ask on every listing and the answer follows the configuration.
//
// The platform handlers are not imported (they use this module); their only precheck is supersearch's.

export interface Availability {
  available: boolean;
  /** Why not (or what is limited), in words an agent can act on. */
  reason?: string;
  /** Environment variables the operator would set to make it available. */
  env?: string[];
}

type AnyDef = HandlerDef<never> | ((...args: never[]) => unknown);

const PRECHECKS: Record<string, AnyDef> = {
  ...filesHandlers,
  ...mediastageHandlers,
  ...propdataHandlers,
  ...propstatsHandlers,
  ...scraperAHandlers,
  ...scraperBHandlers,
  ...scraperCHandlers,
  ...videoasmHandlers,
  'platform/supersearch': { precheck: supersearchPrecheck, run: () => Promise.reject() } as never,
};

/**
 * Inputs tried after the example when it is refused: an action that can still do useful work in another mode
 * is available, with the limit named (supersearch without a search index still fetches `urls`).
 */
const ALTERNATES: Record<string, { input: Record<string, unknown>; limit: string }> = {
  'platform/supersearch': {
    input: { query: 'availability probe', urls: ['https://example.com/'] },
    limit: 'only with urls (no web-search index is configured)',
  },
};

/** The poll action → the start action whose `pollWith` names it. */
const STARTS: ReadonlyMap<string, string> = new Map(
  actions.flatMap((a) => (a.pollWith ? [[a.pollWith, a.id] as const] : [])),
);

function refusal(action: Action, raw: unknown, services: Services) {
  const def = PRECHECKS[action.id];
  if (!def || typeof def === 'function' || !def.precheck) return undefined;
  const parsed = action.input.safeParse(raw);
  // An example that does not parse is a catalog bug the registry test catches; it says nothing about config.
  if (!parsed.success) return undefined;
  const err = def.precheck(parsed.data as never, services);
  return err?.code === 'not_configured' ? err : undefined;
}

export function availabilityOf(action: Action, services: Services): Availability {
  const start = STARTS.get(action.id);
  const subject = (start && findAction(start)) || action;
  const err = refusal(subject, subject.example, services);
  if (!err) return { available: true };
  const env = (err.details?.env as string[] | undefined) ?? [];
  const alt = ALTERNATES[subject.id];
  if (alt && !refusal(subject, alt.input, services)) return { available: true, reason: alt.limit, env };
  const what = subject === action ? '' : ` (it polls ${subject.id})`;
  return { available: false, reason: `${err.message.replace(/ Nothing was charged\.$/, '')}${what}`, env };
}

/** Every action's availability, by id. */
export function catalogAvailability(services: Services): ReadonlyMap<string, Availability> {
  return new Map(actions.map((a) => [a.id, availabilityOf(a, services)]));
}
