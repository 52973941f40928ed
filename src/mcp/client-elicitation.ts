// Which MCP clients may be asked to open a URL (URL-mode elicitation; spec 2025-11-25 client/elicitation:
// "Servers MUST NOT send elicitation requests with modes that are not supported by the client").
//
// A 2026-07-28 request declares its client's capabilities in its own `_meta` envelope. A 2025-era client declares
// them once, in `initialize`, and /mcp serves that era statelessly: the tools/call that needs the person arrives
// on another request, on a server instance that never saw the handshake. So the door remembers, per caller (an
// account through one credential: an API key, or one OAuth app), what its latest `initialize` declared. This is
// in-process: a tools/call that reaches another replica than its handshake did finds nothing, and its client gets
// the refusal with the URL in words instead (docs/decisions.md "Top up without leaving the host").

/** True when a capabilities object declares URL-mode elicitation (`elicitation: { url: {} }`). */
export function declaresUrlElicitation(capabilities: unknown): boolean {
  const url = (capabilities as { elicitation?: { url?: unknown } } | null | undefined)?.elicitation?.url;
  return typeof url === 'object' && url !== null;
}

/** How long a handshake's declaration is remembered: a host reconnects (and declares again) far more often. */
const REMEMBER_MS = 24 * 3_600_000;
const MAX_CALLERS = 10_000;

/** 2025-era callers whose latest `initialize` declared URL-mode elicitation, with when that expires. */
export class LegacyElicitation {
  private readonly callers = new Map<string, number>();

  /** An `initialize` of `caller` declared these capabilities: the latest handshake wins, either way. */
  note(caller: string, capabilities: unknown, now = Date.now()): void {
    this.callers.delete(caller);
    if (!declaresUrlElicitation(capabilities)) return;
    // Oldest first (insertion order, refreshed above): the map is bounded by dropping the oldest.
    if (this.callers.size >= MAX_CALLERS) {
      const oldest = this.callers.keys().next().value;
      if (oldest !== undefined) this.callers.delete(oldest);
    }
    this.callers.set(caller, now + REMEMBER_MS);
  }

  urlCapable(caller: string, now = Date.now()): boolean {
    const until = this.callers.get(caller);
    if (until === undefined) return false;
    if (until > now) return true;
    this.callers.delete(caller);
    return false;
  }
}
