// Where the MCP door lives: the door mounts every path named here (./door.ts). Its own module so that what
// describes the door (the server card, server.json) can name its URLs without importing the door.

export const MCP_PATH = '/mcp';
/**
 * Accountless MCP (x402): no credentials; a paid tool answers with an x402 challenge and is paid with
 * `_meta["x402/payment"]`. It cannot share /mcp, where an anonymous request must get the 401 that sends OAuth
 * hosts into sign-in — the same 401 would stop an x402 client at `initialize` (docs/decisions.md).
 */
export const MCP_X402_PATH = '/mcp/x402';
/** The server card (SEP-2127's reserved location: the streamable-HTTP URL + /server-card). */
export const SERVER_CARD_PATH = `${MCP_PATH}/server-card`;
/** The card's earlier, domain-level location in the SEP, still what crawlers probe. */
export const WELL_KNOWN_SERVER_CARD_PATH = '/.well-known/mcp/server-card.json';
/** RFC 9728's path-aware well-known location of /mcp's protected-resource metadata. */
export const RESOURCE_METADATA_PATH = `/.well-known/oauth-protected-resource${MCP_PATH}`;
