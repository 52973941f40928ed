import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import {
  type CallToolResult,
  type InputRequiredResult,
  inputRequired,
  UrlElicitationRequiredError,
} from '@modelcontextprotocol/server';
import type { AccountPrincipal } from '../../auth/principal.js';
import type { Action } from '../../catalog/index.js';
import { GatewayError, mcpErrorResult, publicMessage } from '../errors.js';
import { formatUsd } from '../lib/money.js';
import type { Fix } from '../run/fixes.js';
import { type McpTopUp, waitForFunds } from '../run/top-up.js';
import { declaresUrlElicitation, type LegacyElicitation } from './client-elicitation.js';

// A paid call the account cannot cover, when the person can fix it on the dashboard (the refusal's
// `details.fix`: src/run/fixes.ts), asks the agent host to open that page — only hosts that declared URL-mode
// elicitation, and only on this refusal path:
//
//   2026-07-28: an `input_required` result with one URL elicitation and a sealed `requestState`. The client opens
//     the URL (with the person's consent) and retries with the answer; an accepted retry waits (bounded) for the
//     money, then runs the call once. Not there yet: asked again, at most MAX_ASKS times in all.
//   2025 era (served statelessly: no server→client request is possible): the URLElicitationRequiredError (-32042)
//     with the URL; the host retries the tool call once the person is done, and the call runs then.
//   Any other client: the refusal as a tool error, the same URL in its words.
//
// Nothing is held or charged while the person is away: every round is a fresh call, refused uncharged until the
// money is there, and an idempotency key in `_meta` makes retries of a finished call replays.

export interface TopUpDeps extends McpTopUp {
  /** 2025-era callers whose handshake declared URL elicitation (./client-elicitation.ts). */
  legacy: LegacyElicitation;
  /** Callers with a retry waiting for money now: one wait per caller, so replayed states cannot pile up waits. */
  waiting: Set<string>;
}

/** The key of the one input request, in `inputRequests` and in the client's `inputResponses`. */
export const TOP_UP_INPUT = 'tollgate_top_up';
/** Times one call asks the person (the first refusal included) before it answers with the refusal itself. */
const MAX_ASKS = 3;
/** How long a sealed state is accepted: the host's consent dialog and the payment page take a person a while. */
const STATE_TTL_MS = 30 * 60_000;

/** What the door knows about the client of one call (a ./call.ts ToolCall). */
export interface AskContext {
  era?: 'modern' | 'legacy' | undefined;
  /** 2026-07-28: the request envelope's client capabilities. */
  capabilities?: unknown;
  /** 2026-07-28 retries: the answers and the state echoed back. */
  inputResponses?: Record<string, unknown> | undefined;
  requestState?: string | undefined;
  /** The tool called (the state is valid for this tool only). */
  params: { name: string };
  signal: AbortSignal;
}

/** A retry's verified state: how many times this call asked, what it needs, and whether the person went ahead. */
export interface Resumed {
  asked: number;
  accepted: boolean;
}

interface State {
  /** Whose call: a hash of the caller (account and credential). */
  c: string;
  t: string;
  /** Micro-USD the call needed when refused. */
  n: number;
  /** Times asked so far. */
  a: number;
  /** Expiry, ms since the epoch. */
  x: number;
}

/**
 * A 2026-07-28 retry that carries our sealed state: reads the person's answer and, when they went ahead, waits
 * (at most `waitMs`) for the money before the call runs. Undefined for anything else (a state not ours, expired,
 * or another caller's: the call simply runs as a first call).
 */
export async function resumeTopUp(
  deps: TopUpDeps,
  ledger: Parameters<typeof waitForFunds>[0],
  principal: AccountPrincipal,
  caller: string,
  ctx: AskContext,
): Promise<Resumed | undefined> {
  if (ctx.era !== 'modern' || ctx.requestState === undefined) return undefined;
  const state = unseal(await deps.key(), ctx.requestState);
  if (!state || state.c !== callerHash(caller) || state.t !== ctx.params.name || state.x < Date.now())
    return undefined;
  const answer = ctx.inputResponses?.[TOP_UP_INPUT] as { action?: unknown } | undefined;
  const accepted = answer?.action === 'accept';
  if (accepted && !deps.waiting.has(caller)) {
    deps.waiting.add(caller);
    try {
      await waitForFunds(ledger, principal.accountId, state.n, { maxMs: deps.waitMs, signal: ctx.signal });
    } finally {
      deps.waiting.delete(caller);
    }
  }
  return { asked: state.a, accepted };
}

/**
 * The answer to a refusal that the person can fix: ask the host (in the way its era has) or, when it cannot be
 * asked, the refusal itself — whose message names the same URL.
 */
export async function askForFix(
  deps: TopUpDeps,
  caller: string,
  action: Action,
  error: GatewayError,
  fix: Fix,
  ctx: AskContext,
  resumed: Resumed | undefined,
): Promise<CallToolResult | InputRequiredResult> {
  if (resumed && !resumed.accepted) {
    return mcpErrorResult(
      new GatewayError(
        error.code,
        `${withoutNotCharged(error.message)} The page was not opened (declined), so the call did not run. Nothing was charged.`,
        { details: error.details },
      ),
    );
  }
  const message = askMessage(action, error, fix);
  if (ctx.era === 'modern' && declaresUrlElicitation(ctx.capabilities)) {
    const asked = (resumed?.asked ?? 0) + 1;
    if (asked > MAX_ASKS) return mcpErrorResult(error);
    // A top-up is waited for on the retry (bounded); a raised limit applies at once, so nothing to wait for.
    const needs = fix.action === 'raise_limit' ? 0 : Number(error.details?.required_micros ?? 0);
    const state: State = {
      c: callerHash(caller),
      t: ctx.params.name,
      n: needs,
      a: asked,
      x: Date.now() + STATE_TTL_MS,
    };
    return inputRequired({
      inputRequests: { [TOP_UP_INPUT]: inputRequired.elicitUrl({ message, url: fix.url }) },
      requestState: seal(await deps.key(), state),
    });
  }
  if (ctx.era === 'legacy' && deps.legacy.urlCapable(caller)) {
    // The error's message is the refusal's own (the URL in words), for hosts that show only the message.
    throw new UrlElicitationRequiredError(
      [{ mode: 'url', elicitationId: randomUUID(), url: fix.url, message }],
      publicMessage(error),
    );
  }
  return mcpErrorResult(error);
}

/** What the host shows the person beside the URL: what the call needs and what to do on the page. */
function askMessage(action: Action, error: GatewayError, fix: Fix): string {
  const needs = error.details?.required_micros;
  const has = error.details?.available_micros;
  const what =
    typeof needs === 'number' && typeof has === 'number'
      ? `${action.title} (${action.id}) needs ${formatUsd(needs)}; your tollgate account has ${formatUsd(Math.max(0, has))} available.`
      : `${action.title} (${action.id}) cannot run yet: ${withoutNotCharged(error.message)}`;
  const todo =
    fix.action === 'add_card'
      ? 'Update your card (or top up) on your dashboard'
      : fix.action === 'raise_limit'
        ? 'Raise the limit on your dashboard'
        : 'Top up (or add a card) on your dashboard';
  return `${what} ${todo}; the call runs once you are done. Nothing has been charged.`;
}

function withoutNotCharged(message: string): string {
  return message.replace(/\s*Nothing was charged\.$/, '');
}

function callerHash(caller: string): string {
  return createHash('sha256').update(caller).digest('base64url').slice(0, 22);
}

const PREFIX = 'tg1.';

function seal(key: Buffer, state: State): string {
  const body = Buffer.from(JSON.stringify(state)).toString('base64url');
  return `${PREFIX}${body}.${mac(key, body)}`;
}

function unseal(key: Buffer, sealed: string): State | undefined {
  if (!sealed.startsWith(PREFIX) || sealed.length > 1024) return undefined;
  const dot = sealed.lastIndexOf('.');
  const body = sealed.slice(PREFIX.length, dot);
  const given = Buffer.from(sealed.slice(dot + 1));
  const expected = Buffer.from(mac(key, body));
  if (dot <= PREFIX.length || given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return undefined;
  }
  try {
    const s = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as State;
    const ok =
      typeof s.c === 'string' &&
      typeof s.t === 'string' &&
      Number.isSafeInteger(s.n) &&
      Number.isSafeInteger(s.a) &&
      typeof s.x === 'number';
    return ok ? s : undefined;
  } catch {
    return undefined;
  }
}

function mac(key: Buffer, body: string): string {
  return createHmac('sha256', key).update(`mcp.requestState:${body}`).digest('base64url');
}
