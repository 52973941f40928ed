import type { Action } from '../catalog/index.js';
import { inputJsonSchema } from '../catalog/json-schema.js';
import { scoreCatalog, tokenize } from './catalog-search.js';
import { type Extracted, extract } from './consult-extract.js';
import { fillParams } from './consult-fill.js';
import {
  afterProducer,
  prerequisite,
  type Step,
  step,
  videoPipeline,
  wantsVideoPipeline,
  withComposition,
  withPoll,
} from './consult-flows.js';
import { ID_SLOTS } from './consult-ids.js';
import { type Candidate, checkParams, type Missing, rank } from './consult-rank.js';

// platform/consult's deterministic planner. For a goal: read its values (consult-extract), rank the actions this
// gateway can run by how well the catalog's own words match the goal *and* how much of their input the goal
// supplies (consult-fill, checked with each action's schema), expand the winner into its workflow from where
// the goal starts (consult-flows), chain what each "then …" clause asks for, and offer a second reading when
// another kind of action fits nearly as well. Every returned body is validated against its action's schema;
// a field that fails is dropped when optional, else listed in `missing` with what to put there.

export interface PlannedCall {
  step: number;
  service: string;
  action: string;
  params: Record<string, unknown>;
  price_cents: number;
  why: string;
  /** Fields whose value comes from an earlier step's output: { field path → { step, output path } }. */
  inputs_from?: Record<string, { step: number; output: string }>;
  missing?: Missing[];
}

export type { Missing } from './consult-rank.js';
export { checkParams, rank };

export interface OtherPlan {
  why: string;
  calls: PlannedCall[];
  total_price_cents: number;
}

export interface Plan {
  calls: PlannedCall[];
  alternatives: PlannedCall[];
  total_price_cents: number;
  /** Another reading of the goal, the plan it would take (the likelier reading is `calls`). */
  other_plans?: OtherPlan[];
}

function expand(top: Candidate, x: Extracted, runnable: (a: Action) => boolean): Step[] {
  if (top.action.service === 'videoasm' && wantsVideoPipeline(x)) {
    const steps = videoPipeline(x);
    if (steps.every((s) => runnable(s.action))) return steps;
  }
  const missing = top.checked.missing.map((m) => m.field);
  const complete = (a: Action) => checkParams(a, fillParams(a, x)).missing.length === 0;
  const pre = prerequisite(top.action, missing, x, runnable, complete);
  if (pre) {
    const producerSteps = [step(pre.producer, fillParams(pre.producer, x))];
    return afterProducer(pre, producerSteps, top.checked.params);
  }
  return withPoll([step(top.action, top.checked.params)]);
}

function why(action: Action, missing: Missing[], note?: string): string {
  const first = action.whenToUse.replace(/^Use it /, '').split(/[;.]/)[0];
  const base = `${action.title}: use it ${first}.`;
  const todo = missing.length > 0 ? ` Fill in ${missing.map((m) => m.field).join(', ')} first.` : '';
  return `${base}${todo}${note ? ` ${note}` : ''}`;
}

function toCall(s: Step, n: number): PlannedCall {
  const checked = checkParams(s.action, s.params, Object.keys(s.inputs_from));
  const call: PlannedCall = {
    step: n,
    service: s.action.service,
    action: s.action.action,
    params: checked.params,
    price_cents: s.action.priceCents,
    why: why(s.action, checked.missing, s.note),
  };
  if (Object.keys(s.inputs_from).length > 0) call.inputs_from = s.inputs_from;
  if (checked.missing.length > 0) call.missing = checked.missing;
  return call;
}

/** Below this a match is noise: the planner says it has no plan rather than guess (and charges nothing). */
const MIN_SCORE = 0.8;
/** How close another kind of action must come to count as a second reading of the goal. */
const READING_MARGIN = 1.25;

/** Kinds of work: the scrapers are one kind, the two property services another. */
const family = (a: Action) => (a.service.startsWith('prop') ? 'prop' : a.service.replace(/[A-Z]$/, ''));

/** A one-page reader (scrape, markdown, a residential fetch: a url and nothing else needed). */
const reader = (a: Action) =>
  'url' in a.input.shape &&
  ['markdown', 'raw', 'html', 'content'].some((f) => f in a.output.shape) &&
  ((inputJsonSchema(a).required ?? []) as string[]).every((r) => r === 'url');
const sameWork = (a: Action, b: Action) => a.action === b.action || (reader(a) && reader(b));

/** "…, then …", "… and then …", "first …, after that …": the clauses of a multi-step goal, in order. */
function clauses(goal: string): string[] {
  return goal
    .split(/\b(?:and\s+)?then\b|\bafter that\b|\bafterwards\b|\bnext,|;/i)
    .map((c) => c.replace(/\bfirst\b/i, ' ').trim())
    .filter((c) => c.length > 0);
}

/** A later clause's action, linked to what the steps so far produce (`<step N: …>`), appended with its poll. */
/** The goal's values with one clause's words: which action a clause asks for. */
const clauseOf = (x: Extracted, clause: string): Extracted => ({
  ...x,
  text: clause,
  lower: clause.toLowerCase(),
});

function chain(steps: Step[], clause: string, x: Extracted, runnable: (a: Action) => boolean): Step[] {
  const cx = clauseOf(x, clause);
  const ranked = rank(cx, runnable).filter(
    (c) => c.score >= MIN_SCORE && !steps.some((s) => s.action === c.action),
  );
  const best = ranked[0];
  if (!best) return steps;
  // Of the clause's close candidates, the one that takes what an earlier step produces.
  const linkable = (c: Candidate) =>
    ID_SLOTS.some((s) => s.action === c.action && steps.some((st) => s.producers.includes(st.action)));
  const top = ranked.find((c) => c.score >= best.score - 2 && linkable(c)) ?? best;
  const missing = top.checked.missing.map((m) => m.field);
  for (const slot of ID_SLOTS) {
    if (slot.action !== top.action || !missing.some((m) => m === slot.path || m === '(body)')) continue;
    const from = steps.findIndex((s) => slot.producers.includes(s.action));
    if (from < 0) continue;
    const pre = { slot, producer: (steps[from] as Step).action };
    const params = checkParams(top.action, fillParams(top.action, x)).params;
    return afterProducer(pre, steps, params, from + 1);
  }
  // Another piece of work the goal also asks for; another way of doing the same work is not a step.
  const fresh = steps.every((s) => !sameWork(s.action, top.action));
  return fresh && top.checked.missing.length === 0
    ? withPoll([...steps, step(top.action, top.checked.params)])
    : steps;
}

function plan(steps: Step[]): { calls: PlannedCall[]; total: number } {
  const calls = steps.map((s, i) => toCall(s, i + 1));
  return { calls, total: calls.reduce((sum, c) => sum + c.price_cents, 0) };
}

export function planCalls(intent: string, runnable: (a: Action) => boolean = () => true): Plan {
  const x = extract(intent);
  const ranked = rank(x, runnable);
  // A goal that asks for a finished video from media it names is the video workflow whenever video assembly
  // is what the catalog's words point at, even if a scraper scores higher on the goal's URL alone.
  const video = wantsVideoPipeline(x)
    ? scoreCatalog(x.text)
        .slice(0, 3)
        .map((m) => ranked.find((c) => c.action === m.action))
        .find((c) => c?.action.service === 'videoasm')
    : undefined;
  // A goal in several clauses ("…, then …") starts with what its first clause asks for.
  const parts = clauses(intent);
  const lead = parts.length > 1 && !video ? rank(clauseOf(x, parts[0] as string), runnable)[0] : undefined;
  const top = video ?? (lead && ranked.find((c) => c.action === lead.action)) ?? ranked[0];
  if (!top || (top.score < MIN_SCORE && !video)) return { calls: [], alternatives: [], total_price_cents: 0 };
  let steps = expand(top, x, runnable);
  if (parts.length > 1 && !video) for (const c of parts.slice(1)) steps = chain(steps, c, x, runnable);
  if (steps.every((s) => runnable(s.action))) steps = withComposition(steps, x);
  const { calls, total } = plan(steps);
  const inPlan = new Set(steps.map((s) => s.action.id));

  // A second reading: another kind of action that fits nearly as well, with the plan it would take.
  // Both must answer to the word the goal uses ("upload": store a file, or stage one for a model).
  const goalWords = new Set(tokenize(x.text));
  const named = (a: Action) => tokenize(a.action.replaceAll(/[-_]/g, ' ')).filter((t) => goalWords.has(t));
  const shared = (a: Action) => named(a).some((t) => named(top.action).includes(t));
  const other = ranked.find(
    (c) =>
      !inPlan.has(c.action.id) &&
      family(c.action) !== family(top.action) &&
      c.score >= MIN_SCORE &&
      shared(c.action),
  );
  const other_plans: OtherPlan[] = [];
  if (other && other.score >= top.score - READING_MARGIN) {
    const o = plan(expand(other, x, runnable));
    const reading = `Another reading of the goal: ${other.action.title.toLowerCase()}.`;
    other_plans.push({
      why: `${reading} ${o.calls[0]?.why ?? ''}`.trim(),
      calls: o.calls,
      total_price_cents: o.total,
    });
    if (calls[0]) calls[0].why += ' The goal can also be read another way: see other_plans.';
  }
  const inOther = new Set(other_plans.flatMap((p) => p.calls.map((c) => `${c.service}/${c.action}`)));
  // Alternatives are other single calls that could answer the goal instead: only ready-to-run ones.
  const alternatives = ranked
    .filter((c) => !inPlan.has(c.action.id) && !inOther.has(c.action.id) && c.checked.missing.length === 0)
    .filter((c) => c.score >= Math.max(MIN_SCORE, top.score - 4))
    .slice(0, 2)
    .map((c) => toCall({ action: c.action, params: c.checked.params, inputs_from: {} }, 1));
  return {
    calls,
    alternatives,
    total_price_cents: total,
    ...(other_plans.length > 0 ? { other_plans } : {}),
  };
}
