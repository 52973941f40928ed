import { actions as catalogActions } from '../../catalog/index.js';
import type { KeyLimits } from '../ledger/types.js';
import { formatUsd, parseUsdToMicros } from '../lib/money.js';
import { ROUTER_ACTION } from './spend-limits.js';

// A key's limits as people write them — `tollgate keys create|limit` flags and the dashboard's form — read into
// KeyLimits: USD amounts (`5`, `0.25`), `none` to remove one, and lists of services or actions of this gateway.
// Every problem names its field; nothing is half-applied.

/** The raw values, each absent (unchanged), `none` (removed) or a value. */
export interface LimitInput {
  maxCallUsd?: string | undefined;
  dailyLimitUsd?: string | undefined;
  monthlyLimitUsd?: string | undefined;
  actions?: string | undefined;
}

/** The field names a refusal uses, as the caller wrote them (CLI flags or form fields). */
export type LimitFieldNames = Record<keyof LimitInput, string>;

export const CLI_FIELDS: LimitFieldNames = {
  maxCallUsd: '--max-call-usd',
  dailyLimitUsd: '--daily-limit-usd',
  monthlyLimitUsd: '--monthly-limit-usd',
  actions: '--actions',
};

export class LimitInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = 'LimitInputError';
  }
}

let known: Set<string> | undefined;
/** Services and action ids a key may be limited to: the catalog's and the model router's. */
function knownNames(): Set<string> {
  known ??= new Set([ROUTER_ACTION, 'llm', ...catalogActions.flatMap((a) => [a.id, a.service])]);
  return known;
}

const NONE = /^none$/i;

function usd(field: string, raw: string): number | null {
  const v = raw.trim().replace(/^\$/, '');
  if (NONE.test(v)) return null;
  try {
    return parseUsdToMicros(v);
  } catch {
    throw new LimitInputError(field, `not a USD amount: "${raw}" (use e.g. 5 or 0.25, or none to remove it)`);
  }
}

/** `svc/action,svc2` → the list, each a known service or action; `none` → null (every action). */
export function parseActions(field: string, raw: string): string[] | null {
  const v = raw.trim();
  if (NONE.test(v)) return null;
  const list = [
    ...new Set(
      v
        .split(',')
        .map((a) => a.trim())
        .filter((a) => a !== ''),
    ),
  ];
  if (list.length === 0) throw new LimitInputError(field, 'name at least one service or action, or none');
  const unknown = list.filter((a) => !knownNames().has(a));
  if (unknown.length > 0) {
    throw new LimitInputError(
      field,
      `${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not a service or action of this gateway (GET /api/run lists them; llm is the model router)`,
    );
  }
  return list;
}

/** The changes the input asks for (absent fields left out). */
export function parseLimitInput(input: LimitInput, names: LimitFieldNames): Partial<KeyLimits> {
  const out: Partial<KeyLimits> = {};
  if (input.maxCallUsd !== undefined) out.max_call_micros = usd(names.maxCallUsd, input.maxCallUsd);
  if (input.dailyLimitUsd !== undefined)
    out.daily_limit_micros = usd(names.dailyLimitUsd, input.dailyLimitUsd);
  if (input.monthlyLimitUsd !== undefined)
    out.monthly_limit_micros = usd(names.monthlyLimitUsd, input.monthlyLimitUsd);
  if (input.actions !== undefined) out.actions = parseActions(names.actions, input.actions);
  return out;
}

/** `max $0.05/call, $5.00/day, $50.00/month, only scraperA, llm` (or `no limits`): the CLI and the event log. */
export function limitsText(k: KeyLimits): string {
  const parts = [
    k.max_call_micros !== null && `max ${formatUsd(k.max_call_micros)}/call`,
    k.daily_limit_micros !== null && `${formatUsd(k.daily_limit_micros)}/day`,
    k.monthly_limit_micros !== null && `${formatUsd(k.monthly_limit_micros)}/month`,
    k.actions !== null && `only ${k.actions.join(', ')}`,
  ].filter((p): p is string => typeof p === 'string');
  return parts.length === 0 ? 'no limits' : parts.join(', ');
}
