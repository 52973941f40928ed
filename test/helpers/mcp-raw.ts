// The headers of a raw JSON-RPC POST to /mcp in the 2025 era, as a client that speaks it by hand sends them.
export function mcp2025Headers(token: string): Record<string, string> {
  return {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
  };
}
