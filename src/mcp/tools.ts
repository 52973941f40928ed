import type { Tool } from '@modelcontextprotocol/server';
import { type Action, actions, findAction } from '../../catalog/index.js';
import { portableInputSchema } from '../../catalog/portable-schema.js';
import type { Availability } from '../run/availability.js';

// Every catalog action as an MCP tool. Tools are built once per action at module load; a listing only picks
// the available ones (and marks the others when the operator asks), so tools/list does no schema work per
// request, and tools/call resolves a name with one map lookup.

/** Tool `_meta` key carrying the price (hosts rarely show `_meta` to the model, so it is in the description too). */
export const PRICE_META_KEY = 'tollgate/price';
/** Tool `_meta` key set on a listed tool this gateway cannot run now (TOLLGATE_LIST_UNAVAILABLE=mark). */
export const AVAILABLE_META_KEY = 'tollgate/available';
/** Request `_meta` key carrying the idempotency key (the HTTP door's `Idempotency-Key` header). */
export const IDEMPOTENCY_META_KEY = 'tollgate/idempotency-key';

/** Action ids, longest first so `scraperB/extract_status` wins over `scraperB/extract`. */
const ID_PATTERN = new RegExp(
  `(?<![\\w/])(${[...actions.map((a) => a.id)]
    .sort((a, b) => b.length - a.length)
    .map((id) => id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('|')})(?![\\w-])`,
  'g',
);

/** On /mcp other tools are named as the host sees them: `scraperA_crawl_status`, not `scraperA/crawl_status`. */
export function withToolNames(text: string): string {
  return text.replace(ID_PATTERN, (id) => findAction(id)?.toolName ?? id);
}

/** The same rewrite over every description of a JSON Schema. */
function schemaWithToolNames(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(schemaWithToolNames);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    out[k] = k === 'description' && typeof v === 'string' ? withToolNames(v) : schemaWithToolNames(v);
  }
  return out;
}

/**
 * No `outputSchema` is advertised (docs/decisions.md, "MCP"): stock v1 clients validate `structuredContent`
 * against it even on `isError` results, so our error results (and x402 payment challenges later) would be
 * turned into client-side exceptions instead of reaching the model.
 */
function toTool(action: Action): Tool {
  return {
    name: action.toolName,
    title: action.title,
    description: withToolNames(describe(action)),
    // The portable rendering of the zod schema, which stays the validator (catalog/portable-schema.ts).
    inputSchema: schemaWithToolNames(portableInputSchema(action)) as Tool['inputSchema'],
    annotations: { title: action.title, ...action.annotations },
    _meta: { [PRICE_META_KEY]: { cents: action.priceCents, currency: 'USD' } },
  };
}

/**
 * The catalog description (which already states the price), plus how to follow a long-running call. The
 * catalog links the two halves of a start + poll pair with `pollWith` (from either side); the poll half is
 * the one named like a status or result read (`crawl_status`, `result`).
 */
export function describe(action: Action): string {
  const other = action.pollWith === undefined ? undefined : findAction(action.pollWith);
  if (!other) return action.description;
  return (
    `${action.description} Long-running: returns a handle at once. Poll it with ${other.id} until finished ` +
    'is true, waiting next_poll_seconds between polls; do not call this again for the same job.'
  );
}

const FULL: ReadonlyMap<string, Tool> = new Map(actions.map((a) => [a.id, toTool(a)]));

/**
 * The tools/list of the full tool set: available actions only, or with `mark` the unavailable ones too,
 * flagged in `_meta` and in the first words of the description with the reason.
 */
export function fullToolList(avail: ReadonlyMap<string, Availability>, mark: boolean): Tool[] {
  const out: Tool[] = [];
  for (const a of actions) {
    const tool = FULL.get(a.id) as Tool;
    const state = avail.get(a.id);
    if (!state || (state.available && !state.reason)) {
      out.push(tool);
    } else if (state.available) {
      out.push({ ...tool, description: `${tool.description} On this gateway: ${state.reason}.` });
    } else if (mark) {
      out.push({
        ...tool,
        description: `Unavailable on this gateway: ${state.reason}. ${tool.description}`,
        _meta: { ...tool._meta, [AVAILABLE_META_KEY]: false },
      });
    }
  }
  return out;
}

const byToolName: ReadonlyMap<string, Action> = new Map(actions.map((a) => [a.toolName, a]));

export function actionForTool(name: string): Action | undefined {
  return byToolName.get(name);
}
