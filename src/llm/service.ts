import { z } from 'zod';
import { GatewayError } from '../errors.js';
import { linkSignals } from '../lib/abort.js';
import type { LlmService } from '../ports/index.js';
import { readUsage, usageCostMicros } from './cost.js';
import { DEFAULT_MAX_TOKENS, MAX_TOKENS_CAP } from './request.js';
import type { LlmRouter } from './router.js';

// The internal LLM service (tools/context.ts LlmService) used inside actions, e.g. structured extraction. Same
// upstream, tiers and ceilings as the router door; its cost is the gateway's own, already inside the action's
// flat price, so it never touches the ledger.

type CompleteRequest = Parameters<LlmService['complete']>[0];
type Completion = Awaited<ReturnType<LlmService['complete']>>;

const MAX_CACHED_SCHEMAS = 100;

export function createLlmService(router: LlmRouter, opts: { timeoutMs: number }): LlmService {
  const schemas = new Map<string, z.ZodType>();
  const validatorFor = (schema: Record<string, unknown>): z.ZodType => {
    const key = JSON.stringify(schema);
    let v = schemas.get(key);
    if (!v) {
      v = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
      if (schemas.size >= MAX_CACHED_SCHEMAS) schemas.clear();
      schemas.set(key, v);
    }
    return v;
  };

  return {
    async complete(req: CompleteRequest): Promise<Completion> {
      const linked = linkSignals([req.signal], opts.timeoutMs);
      try {
        return await completeWith(req, linked.signal);
      } finally {
        linked.dispose();
      }
    },
  };

  async function completeWith(req: CompleteRequest, signal: AbortSignal): Promise<Completion> {
    const route = await router.resolve(req.tier, signal);
    const body: Record<string, unknown> = {
      messages: req.messages,
      max_tokens: Math.min(req.maxTokens ?? DEFAULT_MAX_TOKENS, MAX_TOKENS_CAP),
    };
    if (req.jsonSchema) {
      body.response_format = {
        type: 'json_schema',
        json_schema: { name: 'result', strict: true, schema: req.jsonSchema },
      };
    }
    const validate = req.jsonSchema ? validatorFor(req.jsonSchema) : undefined;
    let spent = 0;
    let last: GatewayError | undefined;
    for (const c of route.candidates) {
      const r = await router.complete(c.id, body, { signal, timeoutMs: opts.timeoutMs });
      if (!r.ok) {
        if (!r.fallback) throw r.error;
        last = r.error;
        continue;
      }
      const usage = readUsage(r.body.usage);
      if (usage) spent += usageCostMicros(c.price, usage, 0).micros;
      const text = firstText(r.body);
      const model = typeof r.body.model === 'string' ? r.body.model : c.id;
      const result: Completion = {
        text,
        model,
        usage: { prompt_tokens: usage?.promptTokens ?? 0, completion_tokens: usage?.completionTokens ?? 0 },
        costMicros: spent,
      };
      if (!validate) return result;
      // A model that answers off-schema is treated like a failed one: the next model of the tier may comply.
      const parsed = parseJson(text);
      const checked = parsed.ok ? validate.safeParse(parsed.value) : undefined;
      if (checked?.success) return { ...result, json: checked.data };
      last = new GatewayError('bad_response', 'The model did not answer with JSON matching the schema.');
    }
    throw last ?? new GatewayError('upstream_unavailable', 'No model could answer.');
  }
}

function firstText(body: Record<string, unknown>): string {
  const choices = body.choices as Array<{ message?: { content?: unknown } } | null> | undefined;
  const content = choices?.[0]?.message?.content;
  return typeof content === 'string' ? content : '';
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  // Some models wrap JSON in a markdown fence even when asked for a schema.
  const unfenced = text
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/\s*```$/, '');
  try {
    return { ok: true, value: JSON.parse(unfenced) };
  } catch {
    return { ok: false };
  }
}
