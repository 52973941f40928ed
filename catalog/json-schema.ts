import { z } from 'zod';
import type { Action } from './define.js';

// JSON Schemas of the catalog, computed once per action (the request path never converts a schema).

export type JsonSchema = Record<string, unknown>;

const MAX_COST_SCHEMA = {
  type: 'integer',
  minimum: 0,
  description:
    'Optional ceiling in cents: if the price is above it the call is refused and nothing is charged. Not the charge.',
};

const inputCache = new WeakMap<Action, JsonSchema>();
const outputCache = new WeakMap<Action, JsonSchema>();

/** The action's input schema plus the `max_cost_cents` guard, which every action accepts. */
export function inputJsonSchema(action: Action): JsonSchema {
  let s = inputCache.get(action);
  if (!s) {
    s = z.toJSONSchema(action.input, { io: 'input', target: 'draft-2020-12' }) as JsonSchema;
    const props = (s.properties ?? {}) as Record<string, unknown>;
    s.properties = { ...props, max_cost_cents: MAX_COST_SCHEMA };
    inputCache.set(action, s);
  }
  return s;
}

export function outputJsonSchema(action: Action): JsonSchema {
  let s = outputCache.get(action);
  if (!s) {
    s = z.toJSONSchema(action.output, { io: 'output', target: 'draft-2020-12' }) as JsonSchema;
    outputCache.set(action, s);
  }
  return s;
}
