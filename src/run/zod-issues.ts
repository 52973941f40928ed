import type { z } from 'zod';
import type { FieldIssue } from '../errors.js';

/** zod issues as field paths an agent can act on. Unknown keys of strict actions are named one by one. */
export function zodIssues(error: z.ZodError): FieldIssue[] {
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
    } else {
      out.push({ path: base, message: issue.message });
    }
  }
  return out;
}
