import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Clock } from '../../lib/clock.js';
import type { CommitHistograms } from '../../lib/histogram.js';
import { newId } from '../../lib/ids.js';
import type { SqliteDb } from '../../lib/sqlite.js';
import { MAX_TIME, toCallRow } from '../db-rows.js';
import {
  assertMicros,
  checkAdjust,
  checkBegin,
  checkExternal,
  checkGrantLine,
  checkRefund,
  checkSettlement,
} from '../input-rules.js';
import { KeyCache } from '../key-cache.js';
import { counterKey } from '../spend-caps.js';
import {
  type AccountKind,
  type AccountRow,
  type AdjustRequest,
  type AdjustResult,
  type ApiKeyRow,
  type Balance,
  type BeginRequest,
  type BeginResult,
  type CallRow,
  type CaptureRequest,
  type CapWindow,
  type ChargeRefundRequest,
  type ChargeRefundResult,
  type CreditLine,
  type ExternalRequest,
  type ExternalResult,
  type GrantLineRequest,
  type GrantLineResult,
  type KeyLimits,
  type KeyUsage,
  type Ledger,
  LedgerStateError,
  type MovementKind,
  type MovementRow,
  type NewApiKey,
  type PrincipalSpendRow,
  type SettlementOutcome,
  type SettlementRequest,
  type SettlementResult,
  type SettlementStart,
  type SweepResult,
  type TimeRange,
  type UsageRow,
  type VoidRequest,
} from '../types.js';
import { SqliteCalls } from './calls.js';
import { type Checkpointer, startCheckpointer } from './checkpointer.js';
import { type Durability, GroupCommit } from './group-commit.js';
import { SqliteKeys } from './keys.js';
import { voidLegacyHolds } from './legacy-holds.js';
import { SqliteMovements } from './movements.js';
import { SqliteOperatorMoves } from './operator-moves.js';
import { SqlitePrincipalReads } from './principal-reads.js';
import { SqliteRefunds } from './refunds.js';
import { migrateLedger } from './schema.js';
import { prepareStatements } from './statements.js';

/**
 * Free space the outage probe asks for after its write (`SqliteLedger.ping`): about what the WAL holds when the
 * checkpointer starts it over (1,024 frames of 4 KiB pages, ./checkpointer.ts), so that it can get there again.
 */
export const PROBE_ROOM_BYTES = 4 * 1024 * 1024;

export interface SqliteLedgerOptions {
  clock: Clock;
  /** Idempotency keys older than this are forgotten (Stripe: at least 24 h). */
  idempotencyTtlMs: number;
  /** Each group commit is observed into these: seconds from BEGIN to COMMIT, and the writes it carried. */
  commits?: CommitHistograms | undefined;
  /**
   * How commits are made durable (./group-commit.ts): `group` for the gateway (one fdatasync off the event loop
   * for every commit since the last, checkpoints on a thread of their own), `inline` (the default) for the CLI.
   */
  durability?: Durability | undefined;
  /** How long an API key read from the database is trusted (./key-cache.ts); 0: read every time. */
  keyCacheTtlMs?: number | undefined;
  /** Told when a background checkpoint fails (the WAL then grows until one succeeds). */
  onCheckpointError?: ((message: string) => void) | undefined;
}

export class SqliteLedger implements Ledger {
  private readonly commits: GroupCommit;
  private readonly refunds: SqliteRefunds;
  private readonly movements_: SqliteMovements;
  private readonly operator: SqliteOperatorMoves;
  private readonly calls: SqliteCalls;
  private readonly clock: Clock;
  private readonly idempotencyTtlMs: number;
  private readonly checkpointer: Checkpointer | undefined;
  private readonly keys: SqliteKeys;
  private readonly s;
  private readonly byPrincipal: SqlitePrincipalReads;
  /** The directory of the database file (the probe's free-space check), none in memory. */
  private readonly dir: string | undefined;

  constructor(db: SqliteDb, opts: SqliteLedgerOptions) {
    migrateLedger(db);
    this.dir = db.memory ? undefined : dirname(db.name);
    this.clock = opts.clock;
    this.idempotencyTtlMs = opts.idempotencyTtlMs;
    const c = opts.commits;
    const durability = opts.durability ?? { kind: 'inline' };
    this.commits = new GroupCommit(
      db,
      durability,
      c &&
        ((seconds, writes) => {
          c.seconds.observe(seconds);
          c.writes.observe(writes);
        }),
    );
    if (durability.kind === 'group') {
      this.checkpointer = startCheckpointer(
        durability.walPath.replace(/-wal$/, ''),
        opts.onCheckpointError ?? (() => undefined),
      );
      this.commits.attach(this.checkpointer.gate);
    }
    this.s = prepareStatements(db);
    this.byPrincipal = new SqlitePrincipalReads(db);
    this.keys = new SqliteKeys(this.s, new KeyCache(opts.clock, opts.keyCacheTtlMs ?? 0), (run) =>
      this.write(run),
    );
    this.refunds = new SqliteRefunds(db);
    this.calls = new SqliteCalls(this.s, this.commits, this.refunds, this.idempotencyTtlMs);
    // Card refunds and disputes take only money no hold reserves: this process's holds included.
    this.movements_ = new SqliteMovements(db, (id) => this.calls.reserved.heldOf(id));
    this.operator = new SqliteOperatorMoves(db, {
      pending: (id) => {
        const h = this.calls.reserved.get(id);
        return h && SqliteCalls.pendingRow(h);
      },
      available: (a) => this.calls.availableOf(a),
      balance: (id) => this.balanceOf(id),
      uncountCaps: (id, caps, micros) => this.refunds.uncountCaps(id, caps, micros),
    });
  }

  /** Durable writes (accounts, keys, money without a call): each waits for the commit to be on disk. */
  private write<T>(run: () => T): Promise<T> {
    return this.commits.write({ run, durable: true });
  }

  // ---- accounts and keys -------------------------------------------------------------------------------

  createAccount(input: { name?: string | null; kind?: AccountKind; id?: string }): Promise<AccountRow> {
    const now = this.clock.now();
    return this.write(() => {
      const id = input.id ?? newId('acct', now);
      this.s.insAccount.run(id, input.name ?? null, input.kind ?? 'customer', now);
      return this.s.account.get(id) as AccountRow;
    });
  }

  getAccount(id: string): Promise<AccountRow | undefined> {
    return Promise.resolve(this.s.account.get(id));
  }

  listAccounts(kind?: AccountKind): Promise<AccountRow[]> {
    return Promise.resolve(kind ? this.s.accountsOfKind.all(kind) : this.s.accountsAll.all());
  }

  credit(accountId: string, micros: number, memo: string): Promise<Balance> {
    assertMicros(micros, 'credit');
    const now = this.clock.now();
    return this.write(() => this.movements_.credit(accountId, micros, memo, now));
  }

  balance(accountId: string): Promise<Balance> {
    return Promise.resolve(this.balanceOf(accountId));
  }

  private balanceOf(accountId: string): Balance {
    const a = this.s.account.get(accountId);
    if (!a) throw new LedgerStateError(`unknown account ${accountId}`);
    return {
      balance_micros: a.balance_micros + this.calls.reserved.fundingOf(accountId),
      held_micros: a.held_micros + this.calls.reserved.heldOf(accountId),
      available_micros: this.calls.availableOf(a),
    };
  }

  insertApiKey(input: NewApiKey): Promise<ApiKeyRow> {
    return this.keys.insert(input, this.clock.now());
  }

  findApiKeyByHash(hash: string): Promise<ApiKeyRow | undefined> {
    return Promise.resolve(this.keys.findByHash(hash));
  }

  listApiKeys(accountId?: string): Promise<ApiKeyRow[]> {
    return Promise.resolve(this.keys.list(accountId));
  }

  revokeApiKey(id: string): Promise<boolean> {
    return this.keys.revoke(id, this.clock.now());
  }

  setApiKeyLimits(id: string, changes: Partial<KeyLimits>): Promise<ApiKeyRow | undefined> {
    return this.keys.setLimits(id, changes, this.clock.now());
  }

  keyUsage(accountId: string): Promise<KeyUsage[]> {
    return Promise.resolve(this.keys.usage(accountId, this.clock.now()));
  }

  // ---- the call lifecycle (./calls.ts) ---------------------------------------------------------------

  begin(req: BeginRequest): Promise<BeginResult> {
    try {
      checkBegin(req);
      return Promise.resolve(this.calls.begin(req, this.clock.now()));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  capture(callId: string, req: CaptureRequest): Promise<{ chargedMicros: number }> {
    try {
      assertMicros(req.amountMicros, 'capture');
    } catch (e) {
      return Promise.reject(e);
    }
    return this.calls.capture(callId, req, this.clock.now());
  }

  refundJob(
    accountId: string,
    handle: string,
    reason: string,
  ): Promise<{ refundedMicros: number; callId?: string }> {
    const now = this.clock.now();
    return this.write(() => this.refunds.refund(accountId, handle, reason, now));
  }

  refundCall(callId: string, reason: string): Promise<{ refundedMicros: number }> {
    const now = this.clock.now();
    return this.write(() => this.refunds.refundCall(callId, reason, now));
  }

  async refundCharge(req: ChargeRefundRequest): Promise<ChargeRefundResult> {
    checkRefund(req);
    const now = this.clock.now();
    return this.write(() => this.operator.refundCharge(req, now));
  }

  async adjust(req: AdjustRequest): Promise<AdjustResult> {
    checkAdjust(req);
    const now = this.clock.now();
    return this.write(() => this.operator.adjust(req, now));
  }

  void(callId: string, req: VoidRequest): Promise<void> {
    return this.calls.void(callId, req, this.clock.now());
  }

  async sweep(now: number): Promise<SweepResult> {
    const expiredHolds = await this.calls.expire(now);
    const before = now - this.idempotencyTtlMs;
    const purgedKeys =
      this.s.staleIdem.get(before) === undefined
        ? 0
        : await this.commits.write({ durable: false, run: () => this.s.purgeIdem.run(before).changes });
    return { expiredHolds, purgedKeys };
  }

  /**
   * Every pending hold: this process's (in memory; at start-up it has none yet) and, in a database written by an
   * earlier version, holds left as rows when its process died — voided as then (released, their funding reversed,
   * the idempotency key freed), so nothing stays reserved.
   */
  async voidAllPending(reason: string): Promise<number> {
    const now = this.clock.now();
    const inMemory = await this.calls.voidPending(reason, now);
    const rows = await this.write(() => voidLegacyHolds(this.s, reason, now));
    return inMemory + rows;
  }

  // ---- reads ---------------------------------------------------------------------------------------------

  getCall(id: string): Promise<CallRow | undefined> {
    const pending = this.calls.reserved.get(id);
    if (pending) return Promise.resolve(SqliteCalls.pendingRow(pending));
    const r = this.s.call.get(id);
    return Promise.resolve(r ? toCallRow(r) : undefined);
  }

  /** Calls, newest first: this process's pending ones (held in memory) with the recorded ones. */
  transactions(accountId: string, limit: number, range: TimeRange = {}): Promise<CallRow[]> {
    const rows = this.s.callsOf.all(accountId, range.fromMs ?? 0, range.toMs ?? MAX_TIME, limit);
    return Promise.resolve(this.withPending(accountId, rows.map(toCallRow), limit, range));
  }

  transactionsOf(
    accountId: string,
    principals: readonly string[],
    limit: number,
    range: TimeRange = {},
  ): Promise<CallRow[]> {
    const rows = this.byPrincipal.calls(accountId, principals, limit, range).map(toCallRow);
    const only = new Set(principals);
    return Promise.resolve(
      this.withPending(accountId, rows, limit, range, (c) => c.principal !== null && only.has(c.principal)),
    );
  }

  /** Recorded calls merged with this process's pending ones in the range, newest first. */
  private withPending(
    accountId: string,
    rows: CallRow[],
    limit: number,
    range: TimeRange,
    keep: (c: CallRow) => boolean = () => true,
  ): CallRow[] {
    const from = range.fromMs ?? 0;
    const to = range.toMs ?? MAX_TIME;
    const pending = this.calls.reserved
      .ofAccount(accountId)
      .filter((h) => h.createdAt >= from && h.createdAt < to)
      .map(SqliteCalls.pendingRow)
      .filter(keep);
    if (pending.length === 0) return rows;
    const all = [...pending, ...rows].sort((a, b) =>
      a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : b.created_at - a.created_at,
    );
    return all.slice(0, limit);
  }

  usageByDay(accountId: string, range: TimeRange): Promise<UsageRow[]> {
    return Promise.resolve(this.s.usage.all(accountId, range.fromMs ?? 0, range.toMs ?? MAX_TIME));
  }

  capSpend(accountId: string, scope: string, window: CapWindow): Promise<number> {
    const key = counterKey(scope, window, this.clock.now());
    const committed = this.s.spent.get(accountId, key)?.spent_micros ?? 0;
    return Promise.resolve(committed + this.calls.reserved.capHeldOf(accountId, key));
  }

  usageByDayOf(accountId: string, principals: readonly string[], range: TimeRange): Promise<UsageRow[]> {
    return Promise.resolve(this.byPrincipal.usage(accountId, principals, range));
  }

  spendByPrincipal(accountId: string, range: TimeRange): Promise<PrincipalSpendRow[]> {
    return Promise.resolve(this.byPrincipal.spend(accountId, range));
  }

  movements(accountId: string, limit: number, range?: TimeRange): Promise<MovementRow[]> {
    return Promise.resolve(this.movements_.movements(accountId, limit, range));
  }

  getMovement(id: string): Promise<MovementRow | undefined> {
    return Promise.resolve(this.movements_.get(id));
  }

  movementByRef(kind: MovementKind, externalRef: string): Promise<MovementRow | undefined> {
    return Promise.resolve(this.movements_.byRef(kind, externalRef));
  }

  creditLine(accountId: string): Promise<CreditLine> {
    return Promise.resolve(this.movements_.creditLine(accountId));
  }

  drawnAccounts(minDrawnMicros: number, limit: number) {
    return Promise.resolve(this.movements_.drawnAccounts(minDrawnMicros, limit));
  }

  pendingSettlements(startedBefore: number, limit: number): Promise<MovementRow[]> {
    return Promise.resolve(this.movements_.pendingSettlements(startedBefore, limit));
  }

  // ---- money without a call: card payments and credit lines (./movements.ts) ----------------------------

  recordExternal(req: ExternalRequest): Promise<ExternalResult> {
    checkExternal(req.micros);
    const now = this.clock.now();
    return this.write(() => this.movements_.external(req, now));
  }

  grantCreditLine(req: GrantLineRequest): Promise<GrantLineResult> {
    checkGrantLine(req);
    const now = this.clock.now();
    return this.write(() => this.movements_.grantLine(req, now));
  }

  freezeCreditLine(accountId: string, reason: string | null): Promise<void> {
    const now = this.clock.now();
    return this.write(() => this.movements_.freeze(accountId, reason, now));
  }

  beginSettlement(req: SettlementRequest): Promise<SettlementStart> {
    checkSettlement(req);
    // Durable before the card is charged: the charge names this movement, so it must survive power loss.
    const now = this.clock.now();
    return this.write(() => this.movements_.beginSettlement(req, now));
  }

  finishSettlement(movementId: string, outcome: SettlementOutcome): Promise<SettlementResult> {
    const now = this.clock.now();
    return this.write(() => this.movements_.finishSettlement(movementId, outcome, now));
  }

  /**
   * The outage probe: a small durable write, on a filesystem with room to spare. After a full disk the write alone
   * proves little: a commit that failed half way leaves blocks inside the WAL file that a small write fits in, so
   * the outage would end while the next captures fail again. It ends once the database's filesystem has room for
   * the WAL to grow to the size at which it starts over (docs/decisions.md "When the database stumbles").
   */
  async ping(): Promise<void> {
    await this.write(() => {
      this.s.touch.run();
    });
    if (this.dir === undefined) return;
    // A filesystem that cannot say its free space leaves the write as the only test (never down for good).
    const fs = await statfs(this.dir).catch(() => undefined);
    if (!fs) return;
    const room = fs.bavail * fs.bsize;
    if (room < PROBE_ROOM_BYTES) {
      throw Object.assign(new Error(`${room} bytes free where the database is: not yet room to write`), {
        code: 'SQLITE_FULL',
      });
    }
  }

  async close(): Promise<void> {
    await this.commits.close();
    await this.checkpointer?.stop();
  }
}
