// "Did you mean …?" for names people and agents mistype: CLI commands, action ids, tool names, variables.

/** Edit distance counting a swap of two neighbours as one edit (optimal string alignment): `alcie` → `alice` is 1. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    const row = d[i] as number[];
    const prev = d[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        v = Math.min(v, ((d[i - 2] as number[])[j - 2] as number) + 1);
      }
      row[j] = v;
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

/**
 * The known name nearest to `name`, when it is near enough to be a typo and nearer than any other: within a third
 * of its length in edits (at least 1, at most `max`), compared without case. Ties find nothing: a guess between
 * two names helps no one.
 */
export function nearest(name: string, known: Iterable<string>, max = 3): string | undefined {
  const wanted = name.toLowerCase();
  const limit = Math.min(max, Math.max(1, Math.floor(wanted.length / 3)));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  let tie = false;
  for (const k of known) {
    const candidate = k.toLowerCase();
    if (Math.abs(candidate.length - wanted.length) > limit) continue;
    const d = editDistance(candidate, wanted);
    if (d > limit) continue;
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
      tie = false;
    } else if (d === bestDistance && k !== best) tie = true;
  }
  return tie ? undefined : best;
}

/** ` — did you mean x?` or nothing. */
export function didYouMean(name: string, known: Iterable<string>): string {
  const near = nearest(name, known);
  return near === undefined ? '' : ` — did you mean ${near}?`;
}

/**
 * `Unknown action "scraperC/markdwn" — did you mean scraperC/markdown? GET /api/run lists the catalog.`: the
 * message of a name that is not known, with the nearest known one and where the list is.
 */
export function unknownName(kind: string, name: string, known: Iterable<string>, where: string): string {
  return `Unknown ${kind} "${name}"${didYouMean(name, known) || '.'} ${where}.`;
}
