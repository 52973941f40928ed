/**
 * RFC 9110 §11.6.2 credentials for RFC 6750 §2.1: the scheme (any case), one or more spaces, one token68, and
 * nothing after it. One parser for every door (HTTP shim, model router, MCP), so a header one door accepts no
 * other refuses: `Bearer <key> <anything>` is refused everywhere, never read as `<key>`.
 */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/** The token of an `Authorization: Bearer <token>` header, or undefined (any other scheme or shape included). */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  return BEARER.exec(header)?.[1];
}
