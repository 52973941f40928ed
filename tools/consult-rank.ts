import type { z } from 'zod';
import { type Action, actions } from '../catalog/index.js';
import { inputJsonSchema } from '../catalog/json-schema.js';
import { scoreCatalog } from './catalog-search.js';
import type { Extracted } from './consult-extract.js';
import { fillParams } from './consult-fill.js';
import { ID_SLOTS } from './consult-ids.js';
import { goalAdjustment } from './goal-signals.js';

// platform/consult and platform/discover: which actions a goal points at. Every body is checked with its
// action's schema (checkParams); actions are ranked by the catalog's words (the main clause weighing most), the
// goal's signals (goal-signals), and how much of what the goal states each action takes: values it takes count
// for it, values it cannot take against it, inputs still missing against it (an id another action would
// produce most of all).

export interface Missing {
  field: string;
  what: string;
}

/** Actions consult never suggests: itself. */
const NEVER = new Set(['platform/consult']);

export interface Checked {
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

export interface Candidate {
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
