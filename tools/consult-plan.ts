import type { z } from 'zod';
import { type Action, actions } from '../catalog/index.js';
import { inputJsonSchema } from '../catalog/json-schema.js';
import { scoreCatalog } from './catalog-search.js';
import { type Extracted, extract } from './consult-extract.js';
import { fillParams } from './consult-fill.js';
import { type Step, single, viaAutocomplete, videoPipeline, wantsVideoPipeline } from './consult-flows.js';
import { goalAdjustment } from './goal-signals.js';

// platform/consult's deterministic planner. For a goal: read its values (consult-extract), rank the actions this
// gateway can run by how well the catalog's own words match the goal *and* how completely the goal supplies
// their inputs (consult-fill, checked with each action's schema), expand the winner into its workflow
// (consult-flows), and return the steps as ready-to-run calls. Every returned body is validated against its
// action's schema; a field that fails is dropped when optional, else listed in `missing` with what to put there.

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

export interface Plan {
  calls: PlannedCall[];
  alternatives: PlannedCall[];
  total_price_cents: number;
}

/** Actions consult never suggests: itself, and the free keyword search it is a richer form of. */
const NEVER = new Set(['platform/consult']);

interface Checked {
  params: Record<string, unknown>;
  missing: Missing[];
}

function fieldDescription(action: Action, field: string): string {
  const props = (inputJsonSchema(action).properties ?? {}) as Record<string, { description?: string }>;
  return props[field.split('.')[0] as string]?.description ?? '';
}

/** Validates a body, dropping optional fields that fail; what still fails is `missing`. */
export function checkParams(action: Action, params: Record<string, unknown>): Checked {
  const body = { ...params };
  for (let round = 0; round < 4; round++) {
    const r = (action.input as z.ZodType).safeParse(body);
    if (r.success) return { params: body, missing: [] };
    const bad = new Set(r.error.issues.map((i) => String(i.path[0] ?? '')));
    // Repair: a field we filled that fails on its own is dropped (the action has a default or does without).
    const droppable = [...bad].filter((k) => k && k in body && !isRequired(action, k));
    if (droppable.length === 0) {
      const missing = r.error.issues.map((i) => {
        const field = i.path.map(String).join('.') || '(body)';
        const desc = field === '(body)' ? '' : fieldDescription(action, field);
        const absent = i.code === 'invalid_type' && at(body, i.path) === undefined;
        return { field, what: [absent ? 'required' : i.message, desc].filter(Boolean).join(': ') };
      });
      return { params: body, missing: dedupe(missing) };
    }
    for (const k of droppable) delete body[k];
  }
  return { params: body, missing: [{ field: '(body)', what: 'could not be completed from the goal' }] };
}

function at(obj: unknown, path: readonly PropertyKey[]): unknown {
  let cur = obj;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[k];
  }
  return cur;
}

function dedupe(ms: Missing[]): Missing[] {
  const seen = new Set<string>();
  return ms.filter((m) => !seen.has(m.field) && seen.add(m.field));
}

function isRequired(action: Action, field: string): boolean {
  const req = (inputJsonSchema(action).required ?? []) as string[];
  return req.includes(field);
}

interface Candidate {
  action: Action;
  score: number;
  checked: Checked;
}

function rank(x: Extracted, runnable: (a: Action) => boolean): Candidate[] {
  const search = new Map(scoreCatalog(x.text).map((m) => [m.action.id, m.score]));
  const out: Candidate[] = [];
  for (const action of actions) {
    if (NEVER.has(action.id) || !runnable(action)) continue;
    const base = search.get(action.id) ?? 0;
    if (base <= 0) continue;
    const checked = checkParams(action, fillParams(action, x));
    let score = base;
    // Prefer actions whose inputs the goal supplies; each missing required input costs.
    score += checked.missing.length === 0 ? 1.5 : -Math.min(4, 1.5 * checked.missing.length);
    score += goalAdjustment(action, x);
    out.push({ action, score, checked });
  }
  return out.sort((a, b) => b.score - a.score || a.action.priceCents - b.action.priceCents);
}

function expand(top: Candidate, x: Extracted, runnable: (a: Action) => boolean): Step[] {
  const a = top.action;
  if (a.service === 'videoasm' && wantsVideoPipeline(x)) {
    const steps = videoPipeline(x);
    if (steps.every((s) => runnable(s.action))) return steps;
  }
  return expandSingle(top, x, runnable);
}

function expandSingle(top: Candidate, x: Extracted, runnable: (a: Action) => boolean): Step[] {
  const a = top.action;
  const lookups = ['propdata/property-detail', 'propdata/avm', 'propdata/parcel'];
  if (lookups.includes(a.id) && !x.address && x.partialAddress && top.checked.missing.length > 0) {
    const steps = viaAutocomplete(x, a);
    if (steps.every((s) => runnable(s.action))) return steps;
  }
  return single(a, top.checked.params);
}

function why(action: Action, missing: Missing[], note?: string): string {
  const first = action.whenToUse.replace(/^Use it /, '').split(/[;.]/)[0];
  const base = `${action.title}: use it ${first}.`;
  const todo = missing.length > 0 ? ` Fill in ${missing.map((m) => m.field).join(', ')} first.` : '';
  return `${base}${todo}${note ? ` ${note}` : ''}`;
}

function toCall(s: Step, n: number): PlannedCall {
  const checked = checkParams(s.action, s.params);
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
  const top = video ?? ranked[0];
  if (!top || top.score < MIN_SCORE) return { calls: [], alternatives: [], total_price_cents: 0 };
  const steps = expand(top, x, runnable);
  const calls = steps.map((s, i) => toCall(s, i + 1));
  const inPlan = new Set(steps.map((s) => s.action.id));
  // Alternatives are other single calls that could answer the goal instead: only ready-to-run ones.
  const alternatives = ranked
    .filter((c) => !inPlan.has(c.action.id) && c.checked.missing.length === 0)
    .filter((c) => c.score >= Math.max(MIN_SCORE, top.score - 4))
    .slice(0, 2)
    .map((c) => toCall({ action: c.action, params: c.checked.params, inputs_from: {} }, 1));
  return { calls, alternatives, total_price_cents: calls.reduce((sum, c) => sum + c.price_cents, 0) };
}
