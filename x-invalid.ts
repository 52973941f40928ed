import { planCalls } from './tools/consult-plan.js';
import { callValidates } from './test/agents/evaluate.js';
import { TUNING, HELD_OUT } from './test/agents/goals.js';
const set = process.argv[2] === 'held' ? HELD_OUT : TUNING;
for (const g of set) {
  const p = planCalls(g.goal);
  for (const c of [...p.calls, ...p.alternatives]) if (!callValidates(c)) console.log(g.goal, '→', c.action, JSON.stringify(c.missing));
}
