import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import { type Action, catalog, findAction } from '../../catalog/index.js';
import { inputJsonSchema } from '../../catalog/json-schema.js';
import { portableInputSchema } from '../../catalog/portable-schema.js';
import { invalidInput, mcpErrorResult } from '../errors.js';
import { didYouMean } from '../lib/did-you-mean.js';
import type { Availability } from '../run/availability.js';
import { actionForTool, describe, PRICE_META_KEY } from './tools.js';

// The compact tool set (`/mcp?tools=compact`): three tools instead of one per action, for hosts whose context
// budget cannot carry the whole catalog. Every action stays reachable and priced: platform_discover finds it
// (with its price), describe_action gives its price, input schema and example, run_action runs it by id through
// the same path as its own tool (price, hold, charge, idempotency, x402). In this mode actions are named by id.

export const DESCRIBE_TOOL = 'describe_action';
export const RUN_TOOL = 'run_action';

export type ToolSet = 'full' | 'compact';

/** `?tools=compact` on the MCP URL picks the compact set; anything else is the full one. */
export function toolSetOf(requestUrl: string | undefined): ToolSet {
  if (!requestUrl) return 'full';
  try {
    return new URL(requestUrl, 'http://x').searchParams.get('tools') === 'compact' ? 'compact' : 'full';
  } catch {
    return 'full';
  }
}

const discover = catalog['platform/discover'];

// Tool schemas in the portable subset (catalog/portable-schema.ts): closed objects, every field required.
const actionField = {
  type: 'string',
  description: 'Action id, service/action (e.g. "propstats/value-estimate"), as platform_discover lists it.',
};

const COMPACT: readonly Tool[] = [
  {
    name: discover.toolName,
    title: discover.title,
    description: `${describe(discover)} Each result's id is what describe_action and run_action take.`,
    inputSchema: portableInputSchema(discover) as Tool['inputSchema'],
    annotations: { title: discover.title, ...discover.annotations },
    _meta: { [PRICE_META_KEY]: { cents: 0, currency: 'USD' } },
  },
  {
    name: DESCRIBE_TOOL,
    title: 'Describe an action',
    description:
      'Returns one catalog action by id: what it does and when to use it, its price in cents, its input JSON ' +
      'Schema and an example body. Use it after platform_discover, before run_action, to build valid params. ' +
      'Free.',
    inputSchema: {
      type: 'object',
      properties: { action: actionField },
      required: ['action'],
      additionalProperties: false,
    },
    annotations: {
      title: 'Describe an action',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    _meta: { [PRICE_META_KEY]: { cents: 0, currency: 'USD' } },
  },
  {
    name: RUN_TOOL,
    title: 'Run an action',
    description:
      'Runs one catalog action by id with params as its JSON body and returns its result with charged_cents ' +
      'and transaction_id. Use it for every action found with platform_discover (describe_action gives the ' +
      'params). It is charged exactly that action’s price, only if it succeeds; put max_cost_cents in params ' +
      'to refuse anything dearer.',
    inputSchema: {
      type: 'object',
      properties: {
        action: actionField,
        // An open object has no place in strict hosts' subset: the body travels as JSON text (an object works too).
        params: {
          anyOf: [{ type: 'string' }, { type: 'null' }],
          description: 'The action’s JSON body (see describe_action), as JSON text; null for an empty body.',
        },
      },
      required: ['action', 'params'],
      additionalProperties: false,
    },
    annotations: {
      title: 'Run an action',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    },
  },
];

export function compactToolList(): Tool[] {
  return [...COMPACT];
}

function actionOf(name: unknown): Action | undefined {
  if (typeof name !== 'string') return undefined;
  return findAction(name) ?? actionForTool(name);
}

function unknownAction(name: unknown): CallToolResult {
  return mcpErrorResult(
    invalidInput([
      {
        path: 'action',
        message: `unknown action ${JSON.stringify(name)}${typeof name === 'string' ? didYouMean(name, Object.keys(catalog)) : ''}; platform_discover lists them`,
      },
    ]),
  );
}

/** describe_action: the action's descriptor, free and without credentials. */
export function describeAction(
  args: Record<string, unknown>,
  avail: ReadonlyMap<string, Availability>,
): CallToolResult {
  const a = actionOf(args.action);
  if (!a) return unknownAction(args.action);
  const state = avail.get(a.id);
  const body = {
    id: a.id,
    title: a.title,
    description: describe(a),
    price_cents: a.priceCents,
    access: a.access,
    available: state?.available ?? true,
    ...(state?.reason ? { availability_note: state.reason } : {}),
    poll_with: a.pollWith ?? null,
    input_schema: inputJsonSchema(a),
    example: a.example,
  };
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
}

/** run_action: which action, and its body. Either an action or a refusal to return as the tool's result. */
export function runTarget(
  args: Record<string, unknown>,
): { action: Action; input: unknown } | { refused: CallToolResult } {
  const a = actionOf(args.action);
  if (!a) return { refused: unknownAction(args.action) };
  let params = args.params ?? {};
  if (typeof params === 'string') {
    try {
      params = JSON.parse(params) ?? {};
    } catch {
      return { refused: mcpErrorResult(invalidInput([{ path: 'params', message: 'is not JSON text' }])) };
    }
  }
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    return { refused: mcpErrorResult(invalidInput([{ path: 'params', message: 'must be a JSON object' }])) };
  }
  return { action: a, input: params };
}
