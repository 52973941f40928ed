// The daily cap's day: a UTC calendar day, the same on both backends.

const MS_PER_DAY = 86_400_000;

/** YYYY-MM-DD of `ms` in UTC. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** When the UTC day of `ms` ends (the cap resets). */
export function nextUtcMidnight(ms: number): number {
  return (Math.floor(ms / MS_PER_DAY) + 1) * MS_PER_DAY;
}
