import { newId } from '../../lib/ids.js';
import type { SqliteDb } from '../../lib/sqlite.js';

// Refunds of calls whose work failed after they were charged (a render that fails, a job that fails): a
// compensating transfer from revenue back to the account — entries stay append-only and sum to zero — at most
// once per call (a unique index on refund entries is the backstop). What is given back also comes off the cap
// counters the call counted against, in the windows it was charged in (docs/decisions.md "Limits per API key").
// Runs inside one of the ledger's commits (./group-commit.ts).

interface Row {
  call_id: string;
  status: string;
  charged_micros: number;
  /** The cap counters the call counted against (JSON), or null. */
  caps: string | null;
  refunded_micros: number;
}

export class SqliteRefunds {
  private readonly link;
  private readonly find;
  private readonly call;
  private readonly entry;
  private readonly balance;
  private readonly mark;
  private readonly uncount;

  constructor(db: SqliteDb) {
    this.link = db.prepare('INSERT OR IGNORE INTO call_jobs (account_id, handle, call_id) VALUES (?, ?, ?)');
    this.find = db.prepare<[string, string], Row>(
      `SELECT c.id AS call_id, c.status, c.charged_micros, c.refunded_micros, c.cap_keys AS caps
         FROM call_jobs j JOIN calls c ON c.id = j.call_id
        WHERE j.account_id = ? AND j.handle = ?`,
    );
    this.call = db.prepare<[string], Row & { account_id: string }>(
      'SELECT id AS call_id, account_id, status, charged_micros, refunded_micros, cap_keys AS caps FROM calls WHERE id = ?',
    );
    this.entry = db.prepare(
      "INSERT INTO entries (transfer_id, account_id, amount_micros, kind, call_id, memo, created_at) VALUES (?, ?, ?, 'refund', ?, ?, ?)",
    );
    this.balance = db.prepare('UPDATE accounts SET balance_micros = balance_micros + ? WHERE id = ?');
    // What the operator refunded in part before stays refunded: the rest is given back (./operator-moves.ts).
    this.mark = db.prepare(
      "UPDATE calls SET status = 'refunded', refunded_micros = charged_micros, error_code = ? WHERE id = ? AND status = 'succeeded' AND refunded_micros = ?",
    );
    this.uncount = db.prepare(
      'UPDATE spend_counters SET spent_micros = max(0, spent_micros - ?) WHERE account_id = ? AND counter = ?',
    );
  }

  /** Records that `callId` started job `handle` (in the capture's transaction). */
  linkJob(accountId: string, handle: string, callId: string): void {
    this.link.run(accountId, handle, callId);
  }

  refund(
    accountId: string,
    handle: string,
    reason: string,
    now: number,
  ): { refundedMicros: number; callId?: string } {
    const row = this.find.get(accountId, handle);
    if (!row) return { refundedMicros: 0 };
    return { refundedMicros: this.give(accountId, row, reason, now), callId: row.call_id };
  }

  /** Refunds a call by its id (whatever started it), once: what the operator has not refunded already. */
  refundCall(callId: string, reason: string, now: number): { refundedMicros: number } {
    const row = this.call.get(callId);
    return { refundedMicros: row ? this.give(row.account_id, row, reason, now) : 0 };
  }

  private give(accountId: string, row: Row, reason: string, now: number): number {
    const amount = row.charged_micros - row.refunded_micros;
    if (row.status !== 'succeeded' || amount <= 0) return 0;
    if (this.mark.run(reason, row.call_id, row.refunded_micros).changes !== 1) return 0;
    const transfer = newId('tr', now);
    this.entry.run(transfer, accountId, amount, row.call_id, reason, now);
    this.entry.run(transfer, 'sys_revenue', -amount, row.call_id, reason, now);
    this.balance.run(amount, accountId);
    this.balance.run(-amount, 'sys_revenue');
    this.uncountCaps(accountId, row.caps, amount);
    return amount;
  }

  /**
   * Takes `micros` given back off the cap counters a call counted against (`calls.cap_keys`, JSON), never below
   * zero: for refunds of failed work here and the operator's (./operator-moves.ts).
   */
  uncountCaps(accountId: string, caps: string | null, micros: number): void {
    if (caps === null) return;
    for (const counter of JSON.parse(caps) as string[]) this.uncount.run(micros, accountId, counter);
  }
}
