import type { Tool } from '@modelcontextprotocol/server';
import { type Action, actions, findAction } from '../../catalog/index.js';
import { inputJsonSchema } from '../../catalog/json-schema.js';

// Every catalog action as an MCP tool, built once at module load: tools/list answers with the same prebuilt
// array on every request, and tools/call resolves a name with one map lookup. Nothing here depends on the
// request or the caller, so nothing here is rebuilt per request.

/** Tool `_meta` key carrying the price (hosts rarely show `_meta` to the model, so it is in the description too). */
export const PRICE_META_KEY = 'tollgate/price';
/** Request `_meta` key carrying the idempotency key (the HTTP door's `Idempotency-Key` header). */
export const IDEMPOTENCY_META_KEY = 'tollgate/idempotency-key';

/**
 * No `outputSchema` is advertised (docs/decisions.md, "MCP"): stock v1 clients validate `structuredContent`
 * against it even on `isError` results, so our error results (and x402 payment challenges later) would be
 * turned into client-side exceptions instead of reaching the model.
 */
function toTool(action: Action): Tool {
  return {
    name: action.toolName,
    title: action.title,
    description: describe(action),
    inputSchema: inputJsonSchema(action) as Tool['inputSchema'],
    annotations: { title: action.title, ...action.annotations },
    _meta: { [PRICE_META_KEY]: { cents: action.priceCents, currency: 'USD' } },
  };
}

/**
 * The catalog description (which already states the price), plus how to follow a long-running call. The
 * catalog links the two halves of a start + poll pair with `pollWith` (from either side); the poll half is
 * the one named like a status or result read (`crawl_status`, `result`).
 */
function describe(action: Action): string {
  const other = action.pollWith === undefined ? undefined : findAction(action.pollWith);
  if (!other) return action.description;
  if (isPoll(action)) {
    return `${action.description} Reads a job started by ${other.toolName}; it never starts new work.`;
  }
  return (
    `${action.description} Long-running: returns a handle at once. Poll it with ${other.toolName} every few ` +
    'seconds until it finishes; do not call this tool again for the same job.'
  );
}

function isPoll(action: Action): boolean {
  return /(?:^|_)(?:status|result)$/.test(action.action);
}

export const TOOLS: readonly Tool[] = actions.map(toTool);

const byToolName: ReadonlyMap<string, Action> = new Map(actions.map((a) => [a.toolName, a]));

export function actionForTool(name: string): Action | undefined {
  return byToolName.get(name);
}
