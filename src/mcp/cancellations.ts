import type { RequestId } from '@modelcontextprotocol/server';

// 2025-era clients cancel a call by POSTing `notifications/cancelled { requestId }`. Served statelessly, that
// POST reaches a fresh server instance that never saw the call, so the SDK's own per-instance cancellation
// cannot find it. This process-wide registry can: calls in flight are keyed by who sent them and their
// JSON-RPC id, and a cancellation from the same caller aborts the matching call (its hold is then voided).
// 2026-era clients cancel by closing the call's own response stream, which aborts the call's signal directly.

export class CallRegistry {
  private readonly calls = new Map<string, Set<AbortController>>();

  /**
   * Registers a call in flight; `end` must be called when it finishes, whatever the outcome. `controller`: the
   * door's own (aborted when the client goes away), which a cancellation then aborts too; else a new one.
   */
  begin(
    caller: string,
    id: RequestId,
    controller = new AbortController(),
  ): { signal: AbortSignal; end: () => void } {
    const key = keyOf(caller, id);
    let set = this.calls.get(key);
    if (!set) {
      set = new Set();
      this.calls.set(key, set);
    }
    set.add(controller);
    return {
      signal: controller.signal,
      end: () => {
        const s = this.calls.get(key);
        if (!s) return;
        s.delete(controller);
        if (s.size === 0) this.calls.delete(key);
      },
    };
  }

  /**
   * Aborts the caller's calls with this id. Client ids are only unique per client, so two clients sharing one
   * credential can collide; the cancellation then stops both, which is safe for money (a cancelled call is
   * never charged) and is confined to that one credential.
   */
  cancel(caller: string, id: RequestId, reason: string): number {
    const set = this.calls.get(keyOf(caller, id));
    if (!set) return 0;
    for (const c of set) c.abort(new CancelledByClient(reason));
    return set.size;
  }
}

export class CancelledByClient extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'CancelledByClient';
  }
}

// The id's type is part of the key: JSON-RPC ids 1 and "1" are different requests.
function keyOf(caller: string, id: RequestId): string {
  return `${caller}\u0000${typeof id}:${String(id)}`;
}
