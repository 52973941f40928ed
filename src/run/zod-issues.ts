import type { z } from 'zod';
import { type FieldIssue, REQUIRED } from '../errors.js';

/**
 * zod issues as field paths an agent can act on. Unknown keys of strict actions are named one by one; a field
 * that is absent says "required" (not zod's "expected string, received undefined").
 *
 * `input`, when given, decides what is absent for every kind of schema (enums, literals, unions too); without
 * it only zod's own "received undefined" can tell.
 */
export function zodIssues(error: z.ZodError, input?: unknown): FieldIssue[] {
  const out: FieldIssue[] = [];
  for (const issue of error.issues) {
    const base = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) {
        out.push({
          path: base ? `${base}.${k}` : k,
          message: 'unknown field (this action accepts no extra fields)',
        });
      }
    } else if (isMissing(issue, input)) {
      out.push({ path: base, message: REQUIRED });
    } else {
      // The summary already says "Invalid input"; zod's own prefix would say it twice.
      out.push({ path: base, message: issue.message.replace(/^Invalid (input|option): /, '') });
    }
  }
  return out;
}

/** Issues about a value's type or shape: the ones that mean "absent" when there is no value. Custom rules
 * (superRefine) keep their own words even on an absent field: they say what else would do. */
const SHAPE_CODES = new Set(['invalid_type', 'invalid_value', 'invalid_union']);

function isMissing(issue: z.core.$ZodIssue, input: unknown): boolean {
  if (issue.path.length === 0 || !SHAPE_CODES.has(issue.code)) return false;
  if (input === undefined) return saysUndefined(issue);
  let v: unknown = input;
  for (const k of issue.path) {
    if (v === null || typeof v !== 'object') return false;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v === undefined;
}

function saysUndefined(issue: z.core.$ZodIssue): boolean {
  if (issue.code === 'invalid_type') return /, received undefined$/.test(issue.message);
  if (issue.code === 'invalid_union') {
    return (
      issue.errors.length > 0 &&
      issue.errors.every((branch) => branch.some((i) => i.path.length === 0 && saysUndefined(i)))
    );
  }
  return false;
}
