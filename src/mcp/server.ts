import {
  isInputRequiredResult,
  type McpRequestContext,
  Server,
  type Tool,
} from '@modelcontextprotocol/server';
import { principalFromAuthInfo } from '../../auth/mcp-verifier.js';
import { ANONYMOUS } from '../../auth/principal.js';
import { catalog } from '../../catalog/index.js';
import { availability, availabilityKey, type UnavailableListing } from '../run/availability.js';
import type { RunDeps } from '../run/execute.js';
import { paymentTerms } from '../run/rails.js';
import { type CallDeps, callerKey, callTool } from './call.js';
import type { CallRegistry } from './cancellations.js';
import { compactToolList, type ToolSet, toolSetOf } from './compact.js';
import { RESOURCES, readResource } from './resources.js';
import { actionForTool, fullToolList } from './tools.js';
import type { TopUpDeps } from './top-up.js';

// The per-request server. `createMcpHandler` needs a fresh instance for every HTTP request (one instance per
// exchange is what keeps callers apart, CVE-2026-25536), so this factory does as little as possible: the
// low-level Server with four handlers over lists built once at module load. The high-level McpServer would
// also validate arguments against the advertised schema with its own wording; validation is src/run's.

export const SERVER_NAME = 'tollgate';

/** The server's identity, as `initialize` and every 2026-07-28 result's `_meta` name it. */
export const SERVER_INFO = (version: string) => ({ name: SERVER_NAME, title: 'tollgate', version });

const TOOL_LIST_TTL_MS = 300_000;

export const INSTRUCTIONS = [
  'tollgate sells a catalog of actions as tools (web scraping and crawling, search, property data, files, ' +
    'media and video assembly), paid from your account balance.',
  `Begin with ${catalog['platform/discover'].toolName} (free keyword search of the catalog) or ` +
    `${catalog['platform/consult'].toolName} (turns a plain-English goal into ready-to-run calls with their ` +
    'prices).',
  "Every tool states its price in its description (also in _meta['tollgate/price']); a call is charged only " +
    'when it succeeds, and every result reports charged_cents and transaction_id. Pass max_cost_cents to ' +
    'refuse anything above your ceiling.',
  "To retry safely, send the same _meta['tollgate/idempotency-key'] with the same arguments: a finished call " +
    'is replayed, never charged twice.',
  'Long-running work (crawls, video renders) returns a handle at once: poll it with the matching status or ' +
    'result tool until finished is true, waiting next_poll_seconds between polls. Never re-run a render or ' +
    'crawl to check on it.',
  'Hosts with a small context budget can connect to /mcp?tools=compact instead: three tools (discover, ' +
    'describe_action, run_action) reach every action by id.',
  `Read ${'tollgate://account'} for your balance and recent charges, and ${'tollgate://catalog'} for the price list.`,
].join('\n');

export interface ServerDeps {
  run: RunDeps;
  calls: CallRegistry;
  version: string;
  /** Actions this gateway cannot run: left out of tools/list (hide, the default) or listed and marked. */
  unavailable?: UnavailableListing | undefined;
  /** Asking the host to let the person top up when a call cannot be paid (./top-up.ts). */
  topUp?: TopUpDeps | undefined;
}

/** Tool `_meta` key with a paid tool's payment terms (price mode and protocols: src/run/rails.ts). */
export const PAYMENT_META_KEY = 'tollgate/payment';

/**
 * Each paid tool's payment terms in `_meta` and what its rails advertise beside them (x402: its requirements, as a
 * challenge would carry them).
 */
function withPayment(tools: Tool[], rails: RunDeps['rails']): Tool[] {
  return tools.map((tool) => {
    const action = actionForTool(tool.name);
    const terms = action && paymentTerms(rails, action);
    if (!action || !terms) return tool;
    const advertised = rails?.list.map((r) => r.toolMeta?.(action));
    return {
      ...tool,
      _meta: Object.assign({ ...tool._meta, [PAYMENT_META_KEY]: terms }, ...(advertised ?? [])),
    };
  });
}

/**
 * tools/list for a tool set and the gateway's current availability. Availability follows the configuration
 * (and the browser), so it is asked on every listing (a few dozen pure checks); the list itself is built once
 * per (set, availability) and reused.
 */
function toolLister(deps: ServerDeps): (set: ToolSet) => { tools: Tool[] } {
  const built = new Map<string, { tools: Tool[] }>();
  const mark = deps.unavailable === 'mark';
  return (set) => {
    const avail = availability(deps.run.services);
    const key = `${set}|${availabilityKey(avail)}`;
    let list = built.get(key);
    if (!list) {
      const tools = set === 'compact' ? compactToolList() : fullToolList(avail, mark);
      list = { tools: withPayment(tools, deps.run.rails) };
      if (built.size > 64) built.clear();
      built.set(key, list);
    }
    return list;
  };
}

export function serverFactory(deps: ServerDeps): (ctx: McpRequestContext) => Server {
  const info = SERVER_INFO(deps.version);
  const toolList = toolLister(deps);
  const resourceList = { resources: RESOURCES as (typeof RESOURCES)[number][] };
  const callDeps: CallDeps = { run: deps.run, calls: deps.calls, topUp: deps.topUp };

  return ({ authInfo, requestInfo }) => {
    const principal = principalFromAuthInfo(authInfo) ?? ANONYMOUS;
    const set = toolSetOf(requestInfo?.url);
    const server = new Server(info, {
      capabilities: { tools: { listChanged: false }, resources: {} },
      instructions: INSTRUCTIONS,
      cacheHints: {
        'tools/list': { ttlMs: TOOL_LIST_TTL_MS, cacheScope: 'public' },
        'resources/list': { ttlMs: TOOL_LIST_TTL_MS, cacheScope: 'public' },
      },
    });
    server.setRequestHandler('tools/list', () => toolList(set));
    server.setRequestHandler('tools/call', async (request, ctx) => {
      const result = await callTool(callDeps, request.params, ctx);
      // An `input_required` answer (./top-up.ts) is no tool result to project.
      return isInputRequiredResult(result) ? result : server.projectCallToolResult(result, undefined);
    });
    server.setRequestHandler('resources/list', () => resourceList);
    server.setRequestHandler('resources/read', (request, ctx) =>
      readResource(deps.run, request.params.uri, principal, ctx.mcpReq.signal),
    );
    // Stateless 2025-era serving: a cancellation arrives on its own request and instance; find the call
    // process-wide. The SDK's own handler would only look inside this (fresh, empty) instance.
    if (principal.kind !== 'anonymous') {
      const caller = callerKey(principal);
      server.setNotificationHandler('notifications/cancelled', (n) => {
        const id = n.params.requestId;
        if (id !== undefined) deps.calls.cancel(caller, id, n.params.reason ?? 'cancelled by the client');
      });
    }
    return server;
  };
}
