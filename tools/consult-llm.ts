import { type Action, findAction } from '../catalog/index.js';
import { inputJsonSchema } from '../catalog/json-schema.js';
import { checkParams, type Plan, type PlannedCall } from './consult-plan.js';
import type { HandlerContext } from './context.js';

// platform/consult with the model router configured: the cheap tier may refine the deterministic plan's first
// call (a better-worded query, a value the rules missed). Only a refinement that keeps to runnable actions and
// validates completely replaces the rules' call; anything else (an error, a timeout, an invalid or missing
// body) keeps the deterministic plan. Its cost is the gateway's, inside consult's flat price.

const ANSWER_SCHEMA = {
  type: 'object',
  properties: {
    action: { type: 'string', description: 'service/action id of the first call' },
    params: { type: 'object', description: 'its JSON body' },
  },
  required: ['action', 'params'],
  additionalProperties: false,
};

const LLM_TIMEOUT_MS = 8_000;

export async function refineWithModel(
  goal: string,
  plan: Plan,
  ctx: HandlerContext,
  runnable: (a: Action) => boolean,
): Promise<Plan> {
  const llm = ctx.services.llm;
  const first = plan.calls[0];
  const target = first && findAction(`${first.service}/${first.action}`);
  if (!llm || !first || !target || !runnable(target)) return plan;
  const prompt = [
    `Goal: ${goal}`,
    `Action: ${target.id}: ${target.description}`,
    `Its JSON Schema: ${JSON.stringify(inputJsonSchema(target))}`,
    `Draft params: ${JSON.stringify(first.params)}`,
    'Improve the params for the goal: keep every value the goal gives, fix what the draft got wrong, invent ' +
      `nothing. Answer { "action": "${target.id}", "params": { … } }.`,
  ].join('\n');
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(LLM_TIMEOUT_MS)]);
  try {
    const r = await llm.complete({
      tier: 'platform/cheap',
      messages: [
        { role: 'system', content: 'You turn a goal into the first API call. Answer JSON only.' },
        { role: 'user', content: prompt },
      ],
      jsonSchema: ANSWER_SCHEMA,
      maxTokens: 600,
      signal,
    });
    const answer = r.json as { action?: unknown; params?: unknown } | undefined;
    const action = typeof answer?.action === 'string' ? findAction(answer.action) : undefined;
    // Only the params may change; the same validation as the rules' calls, and only a complete body counts.
    if (action !== target || !isObject(answer?.params)) return plan;
    const checked = checkParams(action, answer.params);
    if (checked.missing.length > 0) return plan;
    const refined: PlannedCall = {
      ...first,
      params: checked.params,
      why: `${first.why} Refined by a model.`,
    };
    return { ...plan, calls: [refined, ...plan.calls.slice(1)] };
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    ctx.log.warn({ err }, 'consult: model refinement failed; the deterministic plan stands');
    return plan;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
