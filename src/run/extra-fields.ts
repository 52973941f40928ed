import type { Action } from '../../catalog/index.js';

/**
 * Fields a non-strict action does not define are passed through to its provider as given (docs/spec.md §4:
 * "additional properties allowed"); each is named in the answer's `warnings`, with the field meant when it
 * looks like a typo, so a misspelt option is not silently ignored.
 */
export function extraFieldWarnings(action: Action, body: Record<string, unknown>): string[] | undefined {
  let out: string[] | undefined;
  for (const k in body) {
    if (action.fields.has(k)) continue;
    const near = nearest(k, action.fields);
    out ??= [];
    out.push(
      `"${k}" is not a field of ${action.id}; it was passed through to the provider unchecked` +
        (near ? ` (did you mean "${near}"?)` : '.'),
    );
  }
  return out;
}

/** The known field within edit distance 2 of `name`, if exactly one is nearest. */
function nearest(name: string, fields: ReadonlySet<string>): string | undefined {
  let best: string | undefined;
  let bestD = 3;
  for (const f of fields) {
    const d = editDistance(name.toLowerCase(), f.toLowerCase(), bestD);
    if (d < bestD) {
      best = f;
      bestD = d;
    }
  }
  return best;
}

/** Levenshtein distance, giving up (returning `cap`) once it cannot be below `cap`. */
function editDistance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) >= cap) return cap;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(
        (prev[j] as number) + 1,
        (cur[j - 1] as number) + 1,
        (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      cur.push(v);
      if (v < rowMin) rowMin = v;
    }
    if (rowMin >= cap) return cap;
    prev = cur;
  }
  return Math.min(prev[b.length] as number, cap);
}
