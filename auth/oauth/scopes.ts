// The scopes of tollgate's authorization server. One resource scope, `mcp`: every tool, paid ones charged to
// the signed-in account (an API key also covers everything, docs/spec.md §5). The OpenID scopes are accepted because
// hosts ask for them; registration refuses scopes the server does not list.

export const MCP_SCOPE = 'mcp';

export const OAUTH_SCOPES = ['openid', 'offline_access', MCP_SCOPE] as const;

const DESCRIPTIONS: Record<string, string> = {
  [MCP_SCOPE]: "Call tollgate's tools for you. Paid calls are charged to your balance, at the listed prices.",
  offline_access: 'Stay connected without asking again, until it disconnects or goes unused for a while.',
  openid: 'Know your tollgate account id.',
};

export function describeScope(scope: string): string {
  return DESCRIPTIONS[scope] ?? 'An access right this server does not describe.';
}
