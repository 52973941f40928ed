import { findAction } from '../../catalog/index.js';
import { type PlannedCall, planCalls } from '../../tools/consult-plan.js';
import { rankGoal } from '../../tools/discover.js';
import type { Goal } from './goals.js';

// Scores platform/discover and platform/consult on plain-English goals, as an agent would use them:
// - discover top-1 / top-3: an answering action is the first / among the first three results;
// - consult first-call success: the plan's first call is an answering action, carries the goal's key values,
//   validates as returned, and the plan holds the workflow's steps in order;
// - calls valid: the share of every returned call (plan and alternatives) whose body validates as returned;
// - calls accounted: the share whose body validates as returned, or fails only at fields the call names itself
//   (in missing, or in inputs_from: a value a previous step gives). Never an unexplained invalid body.

export interface GoalOutcome {
  goal: string;
  discoverTop: string[];
  consultFirst: string | undefined;
  solved: boolean;
  problems: string[];
}

export interface Evaluation {
  goals: number;
  discoverTop1: number;
  discoverTop3: number;
  consultSolved: number;
  callsReturned: number;
  callsValid: number;
  callsAccounted: number;
  outcomes: GoalOutcome[];
}

const norm = (v: unknown) =>
  String(v)
    .toLowerCase()
    .replace(/[^a-z0-9:.*/-]+/g, ' ')
    .trim();

/** Query-like text matches when it has every expected word and not much else. */
function matches(field: string, expected: unknown, actual: unknown): boolean {
  if (actual === undefined) return false;
  if (typeof expected === 'number') return Number(actual) === expected;
  if (typeof expected === 'boolean') return actual === expected;
  if (/(?:^|\.)(?:query|search|prompt)$/.test(field)) {
    const want = norm(expected).split(' ');
    const got = norm(actual).split(' ');
    return want.every((w) => got.includes(w)) && got.length <= want.length + 4;
  }
  return norm(expected) === norm(actual);
}

function at(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const k of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

export function callValidates(call: PlannedCall): boolean {
  const action = findAction(`${call.service}/${call.action}`);
  return action?.input.safeParse(call.params).success === true;
}

/** Field paths the call itself says the caller (missing) or an earlier step (inputs_from) supplies. */
function namedFields(call: PlannedCall): string[] {
  return [...(call.missing ?? []).map((m) => m.field), ...Object.keys(call.inputs_from ?? {})];
}

/**
 * The body validates as returned, or every schema issue sits at a field the call names as still to be filled
 * (an issue at `a.b.c` is named by `a`, `a.b` or `a.b.c`; a rule over several fields by "(body)").
 */
export function callAccounted(call: PlannedCall): boolean {
  const action = findAction(`${call.service}/${call.action}`);
  if (!action) return false;
  const r = action.input.safeParse(call.params);
  if (r.success) return true;
  const named = namedFields(call);
  return r.error.issues.every((i) => {
    const path = i.path.map(String);
    if (path.length === 0) return named.includes('(body)');
    return named.some((n) => {
      const parts = n.split('.');
      return parts.length <= path.length && parts.every((p, k) => p === path[k]);
    });
  });
}

/** "a|b" in a step list accepts either action at that position. */
function isSubsequence(want: string[], got: string[]): boolean {
  let i = 0;
  for (const g of got) if (i < want.length && (want[i] as string).split('|').includes(g)) i++;
  return i === want.length;
}

/** Calls of the readings the plan offers besides its own: alternatives, and any other plan it returns. */
function otherReadingCalls(plan: ReturnType<typeof planCalls>): PlannedCall[] {
  const others = (plan as { other_plans?: { calls: PlannedCall[] }[] }).other_plans ?? [];
  return [...plan.alternatives, ...others.flatMap((o) => o.calls)];
}

export function evaluate(goals: Goal[]): Evaluation {
  let top1 = 0;
  let top3 = 0;
  let solved = 0;
  let returned = 0;
  let valid = 0;
  let accounted = 0;
  const outcomes: GoalOutcome[] = [];
  for (const g of goals) {
    const problems: string[] = [];
    const discovered = rankGoal(g.goal, 3).map((m) => m.action.id);
    if (g.actions.includes(discovered[0] ?? '')) top1++;
    else problems.push(`discover top-1 ${discovered[0]}`);
    if (discovered.some((d) => g.actions.includes(d))) top3++;

    const plan = planCalls(g.goal);
    const all = [...plan.calls, ...otherReadingCalls(plan)];
    returned += all.length;
    valid += all.filter(callValidates).length;
    accounted += all.filter(callAccounted).length;
    const first = plan.calls[0];
    const firstId = first && `${first.service}/${first.action}`;
    const wanted = g.consultFirst ?? g.actions;
    if (!first || !wanted.includes(firstId as string)) problems.push(`consult first ${firstId}`);
    else if (g.missing) {
      // The goal leaves these fields out: the call must name exactly them and be otherwise complete.
      const named = (first.missing ?? []).map((m) => m.field).sort();
      if (JSON.stringify(named) !== JSON.stringify([...g.missing].sort()) || !callAccounted(first))
        problems.push(`missing ${JSON.stringify(named)}, want ${JSON.stringify(g.missing)}`);
    } else if (!callValidates(first)) problems.push(`first call invalid: ${JSON.stringify(first.missing)}`);
    // "a|b" names the same value under either action's field name (url for one scraper, urls.0 for another).
    for (const [paths, value] of Object.entries(g.values ?? {})) {
      const options = paths.split('|');
      if (first && !options.some((p) => matches(p, value, at(first.params, p)))) {
        const got = options.map((p) => at(first.params, p)).find((v) => v !== undefined);
        problems.push(`${paths}: want ${JSON.stringify(value)} got ${JSON.stringify(got)}`);
      }
    }
    if (
      g.steps &&
      !isSubsequence(
        g.steps,
        plan.calls.map((c) => `${c.service}/${c.action}`),
      )
    ) {
      problems.push(`steps ${plan.calls.map((c) => c.action).join('→')}`);
    }
    if (g.otherReading) {
      const offered = otherReadingCalls(plan).map((c) => `${c.service}/${c.action}`);
      if (!g.otherReading.some((a) => offered.includes(a)))
        problems.push(`other reading ${g.otherReading.join('|')} not offered (${offered.join(', ')})`);
    }
    const ok = problems.filter((p) => !p.startsWith('discover')).length === 0;
    if (ok) solved++;
    outcomes.push({ goal: g.goal, discoverTop: discovered, consultFirst: firstId, solved: ok, problems });
  }
  const pct = (n: number, d: number) => (d === 0 ? 0 : Math.round((n / d) * 1000) / 10);
  return {
    goals: goals.length,
    discoverTop1: pct(top1, goals.length),
    discoverTop3: pct(top3, goals.length),
    consultSolved: pct(solved, goals.length),
    callsReturned: returned,
    callsValid: pct(valid, returned),
    callsAccounted: pct(accounted, returned),
    outcomes,
  };
}
