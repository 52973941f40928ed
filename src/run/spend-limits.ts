import type { AccountPrincipal, CallerLimits, Principal } from '../../auth/principal.js';
import { GatewayError } from '../errors.js';
import { keyScope } from '../ledger/spend-caps.js';
import type { BeginResult, SpendCap } from '../ledger/types.js';
import { formatUsd } from '../lib/money.js';
import { type Fix, raiseLimitAt } from './fixes.js';

// What a caller may spend and call, one mechanism for every credential (docs/decisions.md "Limits per API key"):
// an API key's maximum per call, daily and monthly caps and allowed actions; an OAuth app's daily limit; and the
// door's own cap (the model router's daily inference cap, account-wide). The caps become SpendCaps the ledger
// checks and reserves with the hold; the maximum per call and the allowed actions are checked before it. Every
// refusal says which limit, how much, when it resets, and that nothing was charged.

/** The model router's action id: a key's allowed actions name it (or its service, `llm`) to use the router. */
export const ROUTER_ACTION = 'llm/chat.completions';

/** The door's own cap (the model router's): account-wide, per UTC day; `name` starts its refusal. */
export interface DoorCap {
  limitMicros: number;
  name: string;
}

/** Where a cap refusal comes from: the door's cap, an OAuth app's limit, an API key's limit. */
export type CapSource = 'door' | 'client' | 'key';

function sourceOf(scope: string): CapSource {
  return scope === '' ? 'door' : scope.startsWith('key:') ? 'key' : 'client';
}

/** The scope of the caller's own caps inside the account: `key:<id>`, `oauth:<client id>` (counted apart). */
function scopeOf(p: AccountPrincipal): string | undefined {
  if (p.kind === 'api_key') return keyScope(p.keyId);
  if (p.kind === 'oauth') return `oauth:${p.clientId}`;
  return undefined;
}

function limitsOf(p: Principal): CallerLimits | undefined {
  return p.kind === 'api_key' || p.kind === 'oauth' ? p.limits : undefined;
}

/** The caps a hold counts against, in the order a refusal names the first passed: the door's, then the caller's. */
export function capsOf(p: AccountPrincipal, door: DoorCap | undefined): SpendCap[] | undefined {
  const l = limitsOf(p);
  if (!door && (!l || (l.daily_limit_micros === null && l.monthly_limit_micros === null))) return undefined;
  const caps: SpendCap[] = [];
  if (door) caps.push({ scope: '', window: 'day', limitMicros: door.limitMicros });
  const scope = l && scopeOf(p);
  if (l && scope !== undefined) {
    if (l.daily_limit_micros !== null) caps.push({ scope, window: 'day', limitMicros: l.daily_limit_micros });
    if (l.monthly_limit_micros !== null)
      caps.push({ scope, window: 'month', limitMicros: l.monthly_limit_micros });
  }
  return caps;
}

/** Whether an allowed-actions entry covers an action: a service (`scraperA`) or the action itself. */
export function allows(actions: readonly string[], actionId: string): boolean {
  const slash = actionId.indexOf('/');
  for (const a of actions) {
    if (a === actionId) return true;
    if (slash > 0 && a.length === slash && actionId.startsWith(a)) return true;
  }
  return false;
}

/** Refuses, before anything runs, an action the caller's key may not call. */
export function refuseAction(p: Principal, actionId: string): void {
  const actions = limitsOf(p)?.actions;
  if (!actions || allows(actions, actionId)) return;
  throw new GatewayError(
    'action_not_allowed',
    `This API key may call only ${actions.join(', ')}; ${actionId} is not among them. Nothing was charged. ` +
      "Use another key, or have the key's allowed actions changed (the account dashboard, or `tollgate keys limit`).",
    { details: { action: actionId, allowed: actions, ...keyDetail(p) } },
  );
}

/**
 * Refuses, before the hold, a call above the key's maximum per call, or one whose hold alone is above a daily or
 * monthly limit (it could never be admitted: a 403, not a 429 to wait out). `holdNote` says what a metered
 * call's hold is made of (and how to make it smaller).
 */
export function refuseHold(
  p: AccountPrincipal,
  action: string,
  holdMicros: number,
  holdNote: string | undefined,
  accountUrl?: string | undefined,
): void {
  const l = limitsOf(p);
  if (!l) return;
  const fix = fixOf(p, accountUrl);
  const needs = holdNote
    ? `this call holds up to ${formatUsd(holdMicros)} while it runs (${holdNote})`
    : `${action} costs ${formatUsd(holdMicros)}`;
  const whose = p.kind === 'oauth' ? "This app's" : "This API key's";
  const over = (
    limit: 'max_call' | 'daily' | 'monthly',
    micros: number | null,
    what: string,
  ): GatewayError | undefined =>
    micros !== null && holdMicros > micros
      ? new GatewayError(
          'call_limit_exceeded',
          `${whose} ${what} is ${formatUsd(micros)} and ${needs}, so it cannot run with this ${p.kind === 'oauth' ? 'app' : 'key'}.${raiseAt(fix)} Nothing was charged.`,
          {
            details: {
              limit,
              limit_micros: micros,
              required_micros: holdMicros,
              scope: sourceOf(scopeOf(p) ?? ''),
              ...keyDetail(p),
              ...(fix ? { fix } : {}),
            },
          },
        )
      : undefined;
  const refusal =
    over('max_call', l.max_call_micros, 'maximum per call') ??
    over('daily', l.daily_limit_micros, 'daily limit') ??
    over('monthly', l.monthly_limit_micros, 'monthly limit');
  if (refusal) throw refusal;
}

/** A hold refused by a cap: which one, what it counted, when it resets (Retry-After), nothing charged. */
export function capRefusal(
  r: Extract<BeginResult, { kind: 'cap_reached' }>,
  p: AccountPrincipal,
  door: DoorCap | undefined,
  now: number,
  accountUrl?: string | undefined,
): GatewayError {
  const { cap, spentMicros } = r;
  const source = sourceOf(cap.scope);
  // The caller's own limit can be raised on the dashboard; the door's cap is the operator's.
  const fix = source === 'door' ? undefined : fixOf(p, accountUrl);
  const when = cap.window === 'day' ? 'today' : 'this month';
  const limit = formatUsd(cap.limitMicros);
  const what =
    source === 'door'
      ? `${door?.name ?? 'The daily cap'} of ${limit} reached (${formatUsd(spentMicros)} spent or held today)`
      : source === 'client'
        ? `This app's daily spending limit of ${limit}, set when it was connected, is reached`
        : `This API key's ${cap.window === 'day' ? 'daily' : 'monthly'} limit of ${limit} is reached (${formatUsd(spentMicros)} spent or held ${when})`;
  const retryAfterSeconds = Math.max(1, Math.ceil((r.resetsAt - now) / 1000));
  const resetsAt = new Date(r.resetsAt).toISOString().replace('.000Z', 'Z');
  return new GatewayError(
    cap.window === 'day' ? 'daily_cap_exceeded' : 'monthly_cap_exceeded',
    `${what}; it resets at ${resetsAt} (${cap.window === 'day' ? '00:00 UTC' : 'the 1st, 00:00 UTC'}), in ${retryAfterSeconds}s.${raiseAt(fix)} Nothing was charged.`,
    {
      retryAfterSeconds,
      details: {
        limit: cap.window === 'day' ? 'daily' : 'monthly',
        limit_micros: cap.limitMicros,
        spent_micros: spentMicros,
        resets_at: resetsAt,
        scope: source,
        ...(source === 'key' ? keyDetail(p) : {}),
        ...(fix ? { fix } : {}),
      },
    },
  );
}

function keyDetail(p: Principal): { key_id?: string } {
  return p.kind === 'api_key' ? { key_id: p.keyId } : {};
}

/**
 * With card payments on (the dashboard then exists for account holders: src/run/fixes.ts), the page where an
 * owner of the account raises the caller's own limit; the MCP door asks the host to open it.
 */
function fixOf(p: AccountPrincipal, accountUrl: string | undefined): Fix | undefined {
  if (!accountUrl) return undefined;
  if (p.kind === 'api_key') return raiseLimitAt(accountUrl, { key: p.keyId });
  if (p.kind === 'oauth') return raiseLimitAt(accountUrl, { app: p.clientId });
  return undefined;
}

const raiseAt = (fix: Fix | undefined) => (fix ? ` An owner of the account can raise it at ${fix.url}.` : '');
