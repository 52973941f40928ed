import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { actions } from '../catalog/index.js';
import { compactToolList } from '../src/mcp/compact.js';
import { fullToolList } from '../src/mcp/tools.js';
import { type Evaluation, evaluate } from '../test/agents/evaluate.js';
import { HELD_OUT, HELD_OUT_2, HELD_OUT_3, HELD_OUT_4, TUNING } from '../test/agents/goals.js';
import { planCalls } from '../tools/consult-plan.js';
import type { BenchModule } from './types.js';

// How well agents succeed on their own (issue 13): platform/discover and platform/consult scored on the kept
// plain-English goals (test/agents/goals.ts, the same evaluation test/agents/agents.test.ts holds to its
// thresholds), the planner's speed, and the tokens an MCP host spends on tools/list in the full and the
// compact tool set. `npm run bench -- agents` runs this section alone.

function row(name: string, e: Evaluation): string {
  return `| ${name} | ${e.goals} | ${e.discoverTop1} % | ${e.discoverTop3} % | ${e.consultSolved} % | ${e.callsValid} % (${e.callsReturned} calls) |`;
}

function misses(e: Evaluation): string[] {
  return e.outcomes
    .filter((o) => o.problems.length > 0)
    .map((o) => `- ${o.solved ? '(consult ok) ' : ''}“${o.goal}”: ${o.problems.join('; ')}`);
}

function planTiming(): { p50: number; p99: number } {
  const goals = [...TUNING, ...HELD_OUT, ...HELD_OUT_2, ...HELD_OUT_3, ...HELD_OUT_4].map((g) => g.goal);
  for (const g of goals) planCalls(g); // warm up
  const samples: number[] = [];
  for (let round = 0; round < 20; round++) {
    for (const g of goals) {
      const t0 = performance.now();
      planCalls(g);
      samples.push(performance.now() - t0);
    }
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] as number;
  return { p50: at(0.5), p99: at(0.99) };
}

const bench: BenchModule = async () => {
  const tuning = evaluate(TUNING);
  const held = evaluate(HELD_OUT);
  const held2 = evaluate(HELD_OUT_2);
  const held3 = evaluate(HELD_OUT_3);
  const held4 = evaluate(HELD_OUT_4);
  const allAvailable = new Map(actions.map((a) => [a.id, { available: true }]));
  const fullTokens = countTokens(JSON.stringify(fullToolList(allAvailable, true)));
  const compactTokens = countTokens(JSON.stringify(compactToolList()));
  const cut = Math.round((1 - compactTokens / fullTokens) * 1000) / 10;
  const timing = planTiming();
  const body = [
    'Goals are plain-English requests across every service, each with the actions that answer it and the key',
    'values a correct first call carries (`test/agents/goals.ts`). Discover is scored on the goal as its query;',
    'consult’s first call *solves* a goal when it is an answering action, carries the key values, validates as',
    'returned and the plan holds the workflow’s steps; *valid* counts every returned call (plan and',
    'alternatives) whose body passes its action’s schema as returned. Every action is available here.',
    '',
    '| goal set | goals | discover top-1 | discover top-3 | consult first call solves | calls valid |',
    '|---|---|---|---|---|---|',
    row('tuning (developed against)', tuning),
    row('held-out 1, now', held),
    row('held-out 2, now', held2),
    row('held-out 3, now', held3),
    row('**held-out 4 (written last, never prompted a change)**', held4),
    '',
    'Each held-out set was written after the previous round of work and scored before any change it prompted',
    '(“untouched”); its misses then showed general gaps, fixed as general rules (never per goal), before the',
    'next set was written. Untouched figures, as first measured:',
    '',
    '| set | discover top-1 | top-3 | consult | valid | gaps it showed (fixed before the next set) |',
    '|---|---|---|---|---|---|',
    '| held-out 1 | 79.2 % | 87.5 % | 83.3 % | 100 % | an id of one poll taken for another’s; several URLs given to a one-page action; “wait for #app”; subjects after “… say about” |',
    '| held-out 2 | 91.7 % | 100 % | 87.5 % | 100 % | URL and id text counted as words; person names not used to pick skiptrace; “tagged” stemmed badly |',
    '| held-out 3 | 79.2 % | 91.7 % | 79.2 % | 100 % | “sold”, “text the owner”; counts like “my 20 most recent”; file-name filters for files/list |',
    `| held-out 4 | ${held4.discoverTop1} % | ${held4.discoverTop3} % | ${held4.consultSolved} % | ${held4.callsValid} % | (none: final) |`,
    '',
    'Targets (issue 13): consult ≥ 90 % and ≥ 95 % valid, discover top-1 ≥ 90 %. The untouched held-out 4 is',
    'the fairest estimate for goals nobody tuned on; the untouched rows above show the spread to expect.',
    '',
    `Planner speed (deterministic, no model): p50 ${timing.p50.toFixed(2)} ms, p99 ${timing.p99.toFixed(2)} ms per goal.`,
    '',
    '**MCP `tools/list` size** (o200k tokens of the tools array, every action listed):',
    '',
    '| tool set | tools | tokens |',
    '|---|---|---|',
    `| full (\`/mcp\`) | ${actions.length} | ${fullTokens.toLocaleString('en-US')} |`,
    `| compact (\`/mcp?tools=compact\`) | ${compactToolList().length} | ${compactTokens.toLocaleString('en-US')} |`,
    '',
    `The compact set is ${cut} % smaller (target ≥ 80 %); every action stays reachable through`,
    '`run_action` and priced through `platform_discover` and `describe_action`.',
    '',
    'Misses, tuning:',
    ...misses(tuning),
    '',
    'Misses, held-out 1:',
    ...misses(held),
    '',
    'Misses, held-out 2:',
    ...misses(held2),
    '',
    'Misses, held-out 3:',
    ...misses(held3),
    '',
    'Misses, held-out 4:',
    ...misses(held4),
  ].join('\n');
  const pct = (x: number, min: number) => (x >= min ? 'met' : 'not met') as 'met' | 'not met';
  const tuned = `(held-out 4; tuning ${tuning.discoverTop1} %)`;
  return {
    id: 'agents',
    title: 'Agents: discover, consult and the MCP tool list',
    body,
    targets: [
      {
        target: '#13 agents: discover top-1 ≥ 90 % on goals not tuned on',
        measured: `${held4.discoverTop1} % ${tuned}`,
        verdict: pct(held4.discoverTop1, 90),
      },
      {
        target: "#13 agents: consult's first call solves ≥ 90 %",
        measured: `${held4.consultSolved} % (held-out 4; tuning ${tuning.consultSolved} %)`,
        verdict: pct(held4.consultSolved, 90),
      },
      {
        target: "#13 agents: ≥ 95 % of consult's returned calls validate",
        measured: `${held4.callsValid} % (held-out 4; tuning ${tuning.callsValid} %)`,
        verdict: pct(held4.callsValid, 95),
      },
      {
        target: '#13 MCP compact tool set: tools/list ≥ 80 % fewer tokens',
        measured: `${fullTokens.toLocaleString('en-US')} → ${compactTokens.toLocaleString('en-US')} o200k tokens (−${cut} %)`,
        verdict: pct(Number(cut), 80),
      },
    ],
  };
};

export default bench;
