import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { actions } from '../../catalog/index.js';
import { evaluate } from './evaluate.js';
import { HELD_OUT, HELD_OUT_2, HELD_OUT_3, HELD_OUT_4, TUNING } from './goals.js';
import { FRESH, FRESH_2 } from './goals-fresh.js';
import { HELD_OUT_25 } from './goals-held-out.js';

// [agents:evaluation] platform/discover and platform/consult on plain-English goals. The targets docs/benchmarks.md
// claims (issue 25): on goals nobody tuned for, consult's first call solves ≥ 90 %, ≥ 95 % of returned calls
// validate or name their missing fields, discover's first result answers ≥ 93 %. The held-out file
// (goals-held-out.ts) was written before the rules changed and never read while tuning; it is gated at exactly
// those targets. The sets the rules were developed against (goals.ts, goals-fresh.ts) are held to the same
// targets, so a regression on them fails too. `npm run bench -- agents` reports every set, and the figures first
// measured on each (bench/agents-untouched.json, never rewritten).

const TARGETS = { consultSolved: 90, callsAccounted: 95, discoverTop1: 93 };
const TUNED = { TUNING, HELD_OUT, HELD_OUT_2, HELD_OUT_3, HELD_OUT_4, FRESH, FRESH_2 };

function meetsTargets(name: string, e: ReturnType<typeof evaluate>): void {
  const misses = e.outcomes.filter((o) => !o.solved).map((o) => `${o.goal}: ${o.problems.join('; ')}`);
  expect(e.consultSolved, `${name} consult\n${misses.join('\n')}`).toBeGreaterThanOrEqual(
    TARGETS.consultSolved,
  );
  expect(e.callsAccounted, `${name} calls validate or name what they lack`).toBeGreaterThanOrEqual(
    TARGETS.callsAccounted,
  );
  expect(e.discoverTop1, `${name} discover top-1`).toBeGreaterThanOrEqual(TARGETS.discoverTop1);
}

describe('[agents:evaluation] discover and consult on plain-English goals', () => {
  it('the goal sets cover every service and name only real actions', () => {
    expect(TUNING.length).toBeGreaterThanOrEqual(50);
    expect(HELD_OUT_25.length).toBeGreaterThanOrEqual(60);
    for (const set of [HELD_OUT, HELD_OUT_2, HELD_OUT_3, HELD_OUT_4, FRESH, FRESH_2])
      expect(set.length).toBeGreaterThanOrEqual(20);
    const all = [...Object.values(TUNED).flat(), ...HELD_OUT_25];
    const services = (gs: typeof all) =>
      [...new Set(gs.flatMap((g) => g.actions.map((a) => a.split('/')[0])))].sort();
    const every = [...new Set(actions.map((a) => a.service))].sort();
    expect(services([...TUNING, ...HELD_OUT])).toEqual(every);
    expect(services(HELD_OUT_25)).toEqual(every);
    for (const g of all) {
      const named = [...g.actions, ...(g.consultFirst ?? []), ...(g.otherReading ?? [])];
      for (const a of [...named, ...(g.steps ?? []).flatMap((s) => s.split('|'))]) {
        expect(
          actions.some((x) => x.id === a),
          `${g.goal}: ${a}`,
        ).toBe(true);
      }
    }
  });

  it('the held-out goals (never read while tuning) meet the targets the docs claim', () => {
    meetsTargets('held-out', evaluate(HELD_OUT_25));
  });

  it('every set the rules were developed against meets them too', () => {
    for (const [name, set] of Object.entries(TUNED)) meetsTargets(name, evaluate(set));
  });

  it('the untouched figures are recorded once, for every set, and never by the bench', () => {
    const file = JSON.parse(
      readFileSync(new URL('../../bench/agents-untouched.json', import.meta.url), 'utf8'),
    );
    const sets = (file.sets as Array<{ set: string; consultSolved: number }>).map((s) => s.set);
    expect(sets).toContain('issue-25 held-out');
    expect(sets).toContain('issue-25 fresh (tuning)');
    const bench = readFileSync(new URL('../../bench/agents.ts', import.meta.url), 'utf8');
    expect(bench).toContain('agents-untouched.json');
    expect(bench).not.toMatch(/writeFile|appendFile/);
  });
});
