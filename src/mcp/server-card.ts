import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { actions } from '../../catalog/index.js';
import { MCP_PATH, MCP_X402_PATH } from './paths.js';

// What tollgate says about itself before anyone connects, generated from the catalog and the configuration:
// - the MCP server card (SEP-2127, experimental: modelcontextprotocol/experimental-ext-server-card, schema v1),
//   served at <MCP URL>/server-card and /.well-known/mcp/server-card.json;
// - the MCP registry's server.json (schema 2025-12-11), printed by `tollgate server-json`; the repository ships
//   the template (`npm run server-json`), whose URL leaves the host as a variable for each deployment.
// Both describe remote endpoints only (tollgate is not installed by the host) and list no tools: hosts list
// those at run time. The catalog's prices travel in `_meta`, where each format allows vendor data.

export const SERVER_CARD_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json';
export const SERVER_CARD_MEDIA_TYPE = 'application/mcp-server-card+json';
export const SERVER_JSON_SCHEMA =
  'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';
/** The registry keeps only this `_meta` key of a server.json (at most 4 KiB). */
export const REGISTRY_META_KEY = 'io.modelcontextprotocol.registry/publisher-provided';
export const CARD_META_KEY = 'tollgate/catalog';
/** The project's own registry namespace, used by the template; a deployment names itself after its host. */
export const PROJECT_SERVER_NAME = 'io.github.tollgate/tollgate';
/**
 * Protocol revisions /mcp answers: the 2026-07-28 era natively (the SDK keeps its list of modern revisions
 * internal) and every 2025-era revision the SDK serves statelessly. The server card test holds this list to the
 * live server: each revision is negotiated.
 */
export const PROTOCOL_VERSIONS: readonly string[] = ['2026-07-28', ...SUPPORTED_PROTOCOL_VERSIONS];

export interface CardSource {
  /** TOLLGATE_PUBLIC_URL; undefined for the registry template (its host becomes a variable). */
  publicUrl: string | undefined;
  /** TOLLGATE_MCP_SERVER_NAME; default: the public URL's host reversed (the template: the project's). */
  name: string | undefined;
  version: string;
  /** x402 configured: the accountless endpoint /mcp/x402 sells paid tools too. */
  x402: boolean;
  /** Other accountless ways to pay on /mcp/x402 (`mpp`, `x402-session`: src/run/rails.ts). */
  rails?: readonly string[] | undefined;
  /** The tools this gateway lists now (the live card); the registry template names every catalog tool. */
  tools?: ReadonlySet<string> | undefined;
  /** TOLLGATE_LIST_UNAVAILABLE=mark: the listed tools this gateway cannot run, with the reason. */
  unavailable?: Record<string, string> | undefined;
}

const TITLE = 'tollgate';

function description(): string {
  const priced = actions.filter((a) => a.priceCents > 0).length;
  return `Pay-per-call tools for AI agents: ${priced} priced actions for web, property data, files, media, video.`;
}

/** Whether /mcp/x402 sells paid tools to callers without an account (x402, or another rail such as MPP). */
function accountless(source: CardSource): boolean {
  return source.x402 || (source.rails?.length ?? 0) > 0;
}

/** `https://mcp.acme.com/gw` → `com.acme.mcp/tollgate`. */
export function serverName(source: CardSource): string {
  if (source.name) return source.name;
  if (!source.publicUrl) return PROJECT_SERVER_NAME;
  const host = new URL(source.publicUrl).hostname.replace(/^\[|\]$/g, '');
  // An address is not a DNS name: reversed, 127.0.0.1 would read as the namespace 1.0.0.127.
  if (host === 'localhost' || /^[\d.]+$/.test(host) || host.includes(':')) {
    return /^127\.|^::1$|^localhost$/.test(host)
      ? 'localhost/tollgate'
      : `${host.replace(/:/g, '-')}/tollgate`;
  }
  const reversed = host.split('.').filter(Boolean).reverse().join('.');
  return `${reversed.replace(/[^a-zA-Z0-9.-]/g, '-')}/tollgate`;
}

const AUTHORIZATION_HEADER = {
  name: 'Authorization',
  description:
    'Bearer followed by a tollgate API key (tg_sk_…). Hosts that support MCP authorization sign in with OAuth instead and need no header.',
  isRequired: false,
  isSecret: true,
  placeholder: 'Bearer tg_sk_…',
};

/** The catalog in brief: prices per tool in integer cents, how to pay, where the full catalog is. */
function catalogMeta(source: CardSource): Record<string, unknown> {
  return {
    ...(source.publicUrl ? { catalog_url: `${source.publicUrl}/api/run` } : {}),
    currency: 'USD',
    payment: [
      ...(source.x402 ? ['api_key', 'oauth', 'x402'] : ['api_key', 'oauth']),
      ...(source.rails ?? []),
    ],
    price_cents: Object.fromEntries(
      actions.filter((a) => source.tools?.has(a.toolName) ?? true).map((a) => [a.toolName, a.priceCents]),
    ),
    ...(source.unavailable && Object.keys(source.unavailable).length > 0
      ? { unavailable: source.unavailable }
      : {}),
  };
}

/** The streamable-HTTP endpoints: /mcp (API key or OAuth) and, when `x402`, the accountless /mcp/x402. */
function remotes(base: string, x402: boolean, extra: Record<string, unknown>): unknown[] {
  const remote = (path: string, headers?: unknown[]) => ({
    type: 'streamable-http',
    url: `${base}${path}`,
    ...(headers ? { headers } : {}),
    ...extra,
  });
  return [remote(MCP_PATH, [AUTHORIZATION_HEADER]), ...(x402 ? [remote(MCP_X402_PATH)] : [])];
}

export function serverCard(source: CardSource & { publicUrl: string }): Record<string, unknown> {
  return {
    $schema: SERVER_CARD_SCHEMA,
    name: serverName(source),
    version: source.version,
    description: description(),
    title: TITLE,
    remotes: remotes(source.publicUrl, accountless(source), { supportedProtocolVersions: PROTOCOL_VERSIONS }),
    _meta: { [CARD_META_KEY]: catalogMeta(source) },
  };
}

export function registryEntry(source: CardSource): Record<string, unknown> {
  const base = source.publicUrl ?? 'https://{host}';
  const variables = source.publicUrl
    ? undefined
    : {
        host: {
          description:
            'Host name of your tollgate deployment, with its base path if any: TOLLGATE_PUBLIC_URL without https://',
          isRequired: true,
          placeholder: 'gateway.example.com',
        },
      };
  return {
    $schema: SERVER_JSON_SCHEMA,
    name: serverName(source),
    title: TITLE,
    description: description(),
    version: source.version,
    remotes: remotes(base, source.x402, variables ? { variables } : {}),
    _meta: { [REGISTRY_META_KEY]: catalogMeta(source) },
  };
}
