import { evaluate } from './test/agents/evaluate.js';
import { TUNING, HELD_OUT } from './test/agents/goals.js';
const set = process.argv[2] === 'held' ? HELD_OUT : TUNING;
const e = evaluate(set);
for (const o of e.outcomes) if (o.problems.length) console.log(o.solved ? ' ' : 'X', o.goal, '\n     ', o.problems.join(' | '), '| top3', o.discoverTop.join(','));
const { outcomes, ...rest } = e;
console.log(rest);
