import type { z } from 'zod';
import { type Action, actions } from '../catalog/index.js';
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
import { goalAdjustment } from './goal-signals.js';

// platform/consult's deterministic planner. For a goal: read its values (consult-extract), rank the actions this
// gateway can run by how well the catalog's own words match the goal *and* how much of their input the goal
// supplies (consult-fill, checked with each action's schema), expand the winner into its workflow from where
// the goal starts (consult-flows), chain what each "then …" clause asks for, and offer a second reading when
// another kind of action fits nearly as well. Every returned body is validated against its action's schema;
// a field that fails is dropped when optional, else listed in `missing` with what to put there.

export interface Missing {
  field: string;
  what: string;
}

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

/** Actions consult never suggests: itself. */
const NEVER = new Set(['platform/consult']);

interface Checked {
  params: Record<string, unknown>;
  missing: Missing[];
}

function fieldDescription(action: Action, field: string): string {
  const props = (inputJsonSchema(action).properties ?? {}) as Record<string, { description?: string }>;
  return props[field.split('.')[0] as string]?.description ?? '';
}

function at(obj: unknown, path: readonly PropertyKey[]): unknown {
  let cur = obj;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[k];
  }
  return cur;
}

const isRequired = (action: Action, field: string) =>
  ((inputJsonSchema(action).required ?? []) as string[]).includes(field);

/**
 * Validates a body, dropping optional fields that fail; what still fails is `missing`, except fields an earlier
 * step fills (`linked`): those hold a placeholder until then.
 */
export function checkParams(
  action: Action,
  params: Record<string, unknown>,
  linked: readonly string[] = [],
): Checked {
  const body = { ...params };
  for (let round = 0; round < 4; round++) {
    const r = (action.input as z.ZodType).safeParse(body);
    if (r.success) return { params: body, missing: [] };
    const issues = r.error.issues.filter(
      (i) => !linked.some((l) => i.path.map(String).join('.').startsWith(l)),
    );
    if (issues.length === 0) return { params: body, missing: [] };
    const bad = new Set(issues.map((i) => String(i.path[0] ?? '')));
    // Repair: a field we filled that fails on its own is dropped (the action has a default or does without).
    const droppable = [...bad].filter((k) => k && k in body && !isRequired(action, k) && !linked.includes(k));
    if (droppable.length === 0) {
      const seen = new Set<string>();
      const missing = issues
        .map((i) => {
          const field = i.path.map(String).join('.') || '(body)';
          const desc = field === '(body)' ? '' : fieldDescription(action, field);
          const absent = i.code === 'invalid_type' && at(body, i.path) === undefined;
          return { field, what: [absent ? 'required' : i.message, desc].filter(Boolean).join(': ') };
        })
        .filter((m) => !seen.has(m.field) && seen.add(m.field));
      return { params: body, missing };
    }
    for (const k of droppable) delete body[k];
  }
  return { params: body, missing: [{ field: '(body)', what: 'could not be completed from the goal' }] };
}

interface Candidate {
  action: Action;
  score: number;
  checked: Checked;
}

/** Fields produced by another action (an id the goal did not give) cost more than values only the user knows. */
const produced = (a: Action, field: string) =>
  ID_SLOTS.some((s) => s.action === a && s.path === field && s.producers.length > 0);

/** Values the goal states outright (not enums read from its words): ids, URLs, quotes, numbers, dates, names. */
function stated(x: Extracted): Set<string> {
  // A whole address counts once: its zip, city and state are parts of it.
  const place = x.address ? [x.address.full] : [x.zip, x.city, x.state];
  const vals: unknown[] = [...x.urls, ...x.ids.map((i) => i.value), ...x.quoted, ...place, x.filename];
  vals.push(
    x.propertyType,
    x.bedrooms,
    x.bathrooms,
    x.squareFootage,
    x.yearBuilt,
    x.recencyDays,
    x.tag,
    x.name,
  );
  vals.push(
    x.email,
    x.phone,
    x.selector,
    x.asOf,
    x.count,
    x.depth,
    x.skip,
    x.sizeBytes,
    x.months,
    x.timeoutSec,
  );
  vals.push(x.waitMs, x.coords?.latitude, x.coords?.longitude, x.radius, x.price);
  return new Set(vals.filter((v) => v !== undefined).map((v) => JSON.stringify(v)));
}

/** A stated value is taken when a field holds it, or a part of it (skiptrace's street of a whole address). */
function takes(params: Record<string, unknown>, value: string): boolean {
  const v = JSON.parse(value) as unknown;
  return Object.values(params).some(
    (p) =>
      JSON.stringify(p) === value ||
      (typeof p === 'string' && typeof v === 'string' && p.length >= 5 && v.includes(p)) ||
      (Array.isArray(p) && p.some((e) => JSON.stringify(e) === value)),
  );
}

/** The main clause: what comes before "before …", "so that …", "in order to …" says what to do first. */
function mainClause(text: string): string {
  return text.split(/\b(?:before|so that|so i can|so we can|in order to)\b/i)[0] ?? text;
}

/** Every runnable action the goal points at, best first; `listing` keeps consult itself (discover lists it). */
export function rank(x: Extracted, runnable: (a: Action) => boolean, listing = false): Candidate[] {
  const full = new Map(scoreCatalog(x.text).map((m) => [m.action.id, m.score]));
  const main = mainClause(x.text);
  const head = main === x.text ? full : new Map(scoreCatalog(main).map((m) => [m.action.id, m.score]));
  const words = (id: Action['id']) => 0.6 * (head.get(id) ?? 0) + 0.4 * (full.get(id) ?? 0);
  // A goal about a service (files, video assembly, …) is partly about each of its actions.
  const byService = new Map<string, number>();
  for (const a of actions) byService.set(a.service, Math.max(byService.get(a.service) ?? 0, words(a.id)));
  const values = stated(x);
  const rows = actions
    .filter((a) => (listing || !NEVER.has(a.id)) && runnable(a))
    .map((action) => ({ action, checked: checkParams(action, fillParams(action, x)) }));
  // A stated value few actions can take (a date for asOf, a selector, a crawl id) points at those actions.
  const takers = new Map<string, number>();
  for (const r of rows)
    for (const v of new Set(Object.values(r.checked.params).map((v) => JSON.stringify(v))))
      if (values.has(v)) takers.set(v, (takers.get(v) ?? 0) + 1);
  const out: Candidate[] = [];
  for (const { action, checked } of rows) {
    const service = byService.get(action.service) ?? 0;
    const base = Math.max(words(action.id), service >= 2 ? 0.5 * service : 0);
    const adjust = goalAdjustment(action, x);
    const filled = Object.values(checked.params).map((v) => JSON.stringify(v));
    const rare = filled.filter((v) => (takers.get(v) ?? 99) <= 2).length;
    if (base <= 0 && adjust <= 0 && rare === 0) continue;
    let score = base + adjust + rare;
    // Prefer actions whose inputs the goal supplies, and that take more of what it says: each stated value the
    // action takes counts for it, each it cannot take against it, anything else it fills a little.
    const cost = checked.missing.reduce((n, m) => n + (produced(action, m.field) ? 2.5 : 0.75), 0);
    // A keyword listing (no values at all) weighs missing inputs less: every action misses its inputs alike.
    const weight = listing && values.size === 0 ? 0.5 : 1;
    score += weight * (checked.missing.length === 0 ? 0.75 : -Math.min(4, cost));
    const took = [...values].filter((v) => takes(checked.params, v)).length;
    const other = filled.filter((v) => !values.has(v)).length;
    score += 0.5 * took - 0.3 * (values.size - took) + Math.min(0.6, 0.15 * other);
    out.push({ action, score, checked });
  }
  return out.sort((a, b) => b.score - a.score || a.action.priceCents - b.action.priceCents);
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
