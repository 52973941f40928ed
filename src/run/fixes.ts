import type { GatewayError } from '../errors.js';

// What a person can do on the dashboard so that a refused call can run. A refusal that a person can fix carries
// one in `details.fix`; the doors show its URL in words, and the MCP door also asks an agent host to open it
// (URL elicitation: src/mcp/top-up.ts). The MCP door reads nothing but `details.fix`, so a new kind of fixable
// refusal (a key's own spending limit: `raise_limit`) needs only its refusal to carry the fix and its page.

/** top_up: add prepaid credit (the page also offers a card); add_card: save or replace the card (a frozen line is
 * fixed by a new card); raise_limit: raise a limit the account holder set. */
export type FixAction = 'top_up' | 'add_card' | 'raise_limit';

export interface Fix {
  action: FixAction;
  /** The dashboard page that fixes it: signed in, or one sign-in away (it returns there). No credential in it. */
  url: string;
}

/** The dashboard pages of the fixes this module knows the page of (`raise_limit` names its own URL). */
const PAGES = { top_up: '/top-up', add_card: '/card' } as const;

/** The fix of `action` on the dashboard at `accountUrl` (`…/account`). */
export function fixAt(accountUrl: string, action: keyof typeof PAGES): Fix {
  return { action, url: `${accountUrl}${PAGES[action]}` };
}

/**
 * The page that raises a caller's own limit: an API key's (`/account/limit?key=<key id>`) or an OAuth app's
 * (`?app=<client id>`). An owner changes it there; anyone else is told that an owner must (src/account/limit-page.ts).
 */
export function raiseLimitAt(accountUrl: string, of: { key: string } | { app: string }): Fix {
  const q = 'key' in of ? `key=${encodeURIComponent(of.key)}` : `app=${encodeURIComponent(of.app)}`;
  return { action: 'raise_limit', url: `${accountUrl}/limit?${q}` };
}

const ACTIONS = new Set<string>(['top_up', 'add_card', 'raise_limit']);

/** The fix a refusal carries, if any. */
export function fixOf(error: GatewayError): Fix | undefined {
  const fix = error.details?.fix as Partial<Fix> | undefined;
  if (!fix || typeof fix.url !== 'string' || typeof fix.action !== 'string' || !ACTIONS.has(fix.action)) {
    return undefined;
  }
  return fix as Fix;
}
