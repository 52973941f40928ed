import { actions } from '../../catalog/index.js';
import type { Config } from '../config/index.js';
import { VERSION } from '../main.js';
import { registryEntry } from '../mcp/server-card.js';
import { listed } from '../run/availability.js';
import { configuredAvailability } from './catalog.js';
import { isLoopbackHost } from './start-checks.js';

// `tollgate server-json`: this deployment's entry for the MCP registry (its public URL, its name, x402 if
// configured, the tools it lists by the one listing rule), ready for `mcp-publisher publish`. With --template:
// the entry the repository ships as server.json, independent of any configuration (the host is a URL variable,
// every action listed; `npm run server-json` writes it).

export function serverJson(
  config: Config,
  template: boolean,
  warn: (text: string) => void = () => {},
): string {
  if (template) {
    const entry = registryEntry({ publicUrl: undefined, name: undefined, version: VERSION, x402: false });
    return `${JSON.stringify(entry, null, 2)}\n`;
  }
  const host = new URL(config.publicUrl).hostname;
  if (isLoopbackHost(host)) {
    warn(
      `${config.env.TOLLGATE_PUBLIC_URL ? 'TOLLGATE_PUBLIC_URL is a loopback address' : 'TOLLGATE_PUBLIC_URL is not set'}: this entry names ${config.publicUrl}/mcp, which no one else can reach. Set TOLLGATE_PUBLIC_URL to the https URL callers use (and TOLLGATE_MCP_SERVER_NAME to a namespace you own) before publishing it.`,
    );
  }
  const avail = configuredAvailability(config);
  const mode = config.env.TOLLGATE_LIST_UNAVAILABLE;
  const entry = registryEntry({
    publicUrl: config.publicUrl,
    name: config.env.TOLLGATE_MCP_SERVER_NAME,
    version: VERSION,
    x402: config.x402 !== undefined,
    tools: new Set(actions.filter((a) => listed(a.id, avail, mode)).map((a) => a.toolName)),
    unavailable: mode === 'mark' ? unavailableTools(avail) : undefined,
  });
  return `${JSON.stringify(entry, null, 2)}\n`;
}

/** Tool name → why it cannot run here (the `mark` listing). */
export function unavailableTools(avail: ReadonlyMap<string, { available: boolean; reason?: string }>) {
  return Object.fromEntries(
    actions.flatMap((a) => {
      const s = avail.get(a.id);
      return s && !s.available ? [[a.toolName, s.reason ?? 'not configured']] : [];
    }),
  );
}
