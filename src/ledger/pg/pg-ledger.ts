import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { PgPool } from '../../pg/pool.js';
import { balanceOf } from '../db-rows.js';
import { assertMicros, checkBegin, checkExternal, checkGrantLine, checkSettlement } from '../input-rules.js';
import { KeyCache } from '../key-cache.js';
import { counterKeys } from '../spend-caps.js';
import {
  type AccountKind,
  type AccountRow,
  type ApiKeyRow,
  type Balance,
  type BeginRequest,
  type BeginResult,
  type CaptureRequest,
  type ExternalRequest,
  type ExternalResult,
  type GrantLineRequest,
  type GrantLineResult,
  type KeyLimits,
  type KeyUsage,
  type Ledger,
  LedgerStateError,
  type NewApiKey,
  type SettlementOutcome,
  type SettlementRequest,
  type SettlementResult,
  type SettlementStart,
  type SweepResult,
  type VoidRequest,
} from '../types.js';
import { PgCallReads } from './pg-call-reads.js';
import { PgKeys } from './pg-keys.js';
import { PgLedgerReads } from './pg-ledger-reads.js';
import { asLedgerError, PgMovements } from './pg-movements.js';
import { PgOperatorMoves } from './pg-operator-moves.js';
import { type BeginRow, metaText, toBeginResult, VOID_PLAIN } from './pg-pair.js';
import { PgPlainCalls } from './pg-plain-calls.js';

// The ledger on PostgreSQL, shared by any number of replicas, with the semantics of the SQLite ledger (the same
// test suites run on both). begin, capture and void are one statement each for a plain call (./pg-pair.ts) and
// otherwise plpgsql functions (src/pg/migrations/ledger.ts, ledger-lean.ts); either way the account row is
// locked before the funds check, the idempotency claim and the caps, so they are serialized per account
// across replicas. A plain statement that did nothing (no row back) is followed by the function, which handles
// the case or says why not. The clock is read here, at call time, and passed in: times are the gateway's, not
// the database server's.

export interface PgLedgerOptions {
  clock: Clock;
  /** Idempotency keys older than this are forgotten. */
  idempotencyTtlMs: number;
  /** This process's replica: the holds it takes are recorded as its own. */
  replicaId: string;
  /** How long an API key read from the database is trusted (../key-cache.ts); 0: read every time. */
  keyCacheTtlMs?: number | undefined;
  /**
   * Whether a hold's commit waits for its WAL flush. Default false, as the SQLite ledger: a hold moves no money,
   * and the flush of its capture or void (which always waits) makes it durable too; a server crash in between
   * loses a hold that charged nothing (its capture then fails: `no hold for call`). True: every commit waits,
   * so every call id begin returns survives a crash (measured: no more PostgreSQL CPU per pair at 64 in flight,
   * 10–20 % fewer pairs/s, one more flush in the hold's latency; docs/decisions.md).
   */
  durableHolds?: boolean;
  /**
   * How many batches of plain holds, and of plain captures, may run at once (./pg-batch.ts); calls that arrive
   * meanwhile go out together in the next. Default 2 (measured: docs/decisions.md).
   */
  batchesInFlight?: number | undefined;
}

/** Holds resolved per sweep round, and how many of them at once (each in its own short transaction). */
const SWEEP_BATCH = 500;
const SWEEP_PARALLEL = 4;

export class PgLedger extends PgLedgerReads implements Ledger {
  private readonly ttl: number;
  private readonly replicaId: string;
  private readonly keys: PgKeys;
  private readonly asyncHolds: boolean;
  private readonly plain: PgPlainCalls;
  /**
   * Holds this instance took with a key, a cap or funding, until it resolves them: their capture and void go
   * straight to the functions (the one-statement forms would find nothing). A hint only: any instance may
   * resolve any hold, the statements check for themselves.
   */
  private readonly fullHolds = new Set<string>();
  /** The operator's refunds and adjustments (./pg-operator-moves.ts). */
  readonly refundCharge: Ledger['refundCharge'];
  readonly adjust: Ledger['adjust'];

  constructor(
    private readonly pool: PgPool,
    opts: PgLedgerOptions,
  ) {
    super(
      opts.clock,
      new PgMovements(pool),
      new PgCallReads((name, text, values) => this.rows(name, text, values)),
    );
    this.ttl = opts.idempotencyTtlMs;
    this.replicaId = opts.replicaId;
    this.keys = new PgKeys(pool, new KeyCache(opts.clock, opts.keyCacheTtlMs ?? 0), (name, text, values) =>
      this.rows(name, text, values),
    );
    this.asyncHolds = opts.durableHolds !== true;
    this.plain = new PgPlainCalls(
      (name, text, values) => this.rows(name, text, values),
      this.replicaId,
      this.asyncHolds,
      opts.batchesInFlight ?? 2,
    );
    const operator = new PgOperatorMoves(pool);
    this.refundCharge = (req) => operator.refundCharge(req, this.clock.now());
    this.adjust = (req) => operator.adjust(req, this.clock.now());
  }

  private async rows<T>(name: string | undefined, text: string, values: unknown[]): Promise<T[]> {
    try {
      const r = await this.pool.query(name ? { name, text, values } : { text, values });
      return r.rows as T[];
    } catch (err) {
      throw asLedgerError(err);
    }
  }

  // ---- accounts and keys -------------------------------------------------------------------------------

  async createAccount(input: { name?: string | null; kind?: AccountKind; id?: string }): Promise<AccountRow> {
    const now = this.clock.now();
    const id = input.id ?? newId('acct', now);
    await this.rows(undefined, 'INSERT INTO accounts (id, name, kind, created_at) VALUES ($1, $2, $3, $4)', [
      id,
      input.name ?? null,
      input.kind ?? 'customer',
      now,
    ]);
    return (await this.getAccount(id)) as AccountRow;
  }

  async getAccount(id: string): Promise<AccountRow | undefined> {
    return (await this.rows<AccountRow>('tg_account', 'SELECT * FROM accounts_v WHERE id = $1', [id]))[0];
  }

  listAccounts(kind?: AccountKind): Promise<AccountRow[]> {
    return kind
      ? this.rows('tg_accounts_kind', 'SELECT * FROM accounts_v WHERE kind = $1 ORDER BY created_at, id', [
          kind,
        ])
      : this.rows('tg_accounts', 'SELECT * FROM accounts_v ORDER BY created_at, id', []);
  }

  async balance(accountId: string): Promise<Balance> {
    const a = await this.getAccount(accountId);
    if (!a) throw new LedgerStateError(`unknown account ${accountId}`);
    return balanceOf(a);
  }

  insertApiKey(input: NewApiKey): Promise<ApiKeyRow> {
    return this.keys.insert(input, this.clock.now());
  }

  findApiKeyByHash(hash: string): Promise<ApiKeyRow | undefined> {
    return this.keys.findByHash(hash);
  }

  listApiKeys(accountId?: string): Promise<ApiKeyRow[]> {
    return this.keys.list(accountId);
  }

  revokeApiKey(id: string): Promise<boolean> {
    return this.keys.revoke(id, this.clock.now());
  }

  setApiKeyLimits(id: string, changes: Partial<KeyLimits>): Promise<ApiKeyRow | undefined> {
    return this.keys.setLimits(id, changes, this.clock.now());
  }

  keyUsage(accountId: string): Promise<KeyUsage[]> {
    return this.keys.usage(accountId, this.clock.now());
  }

  // ---- the call lifecycle ------------------------------------------------------------------------------

  async begin(req: BeginRequest): Promise<BeginResult> {
    checkBegin(req);
    const now = this.clock.now();
    const callId = newId('txn', now);
    const capped = req.caps !== undefined && req.caps.length > 0;
    if (!req.idempotency && !capped && !req.funding?.micros) {
      // A plain call: one statement, alone or in a batch (./pg-pair.ts). Not started: refused or unknown, which
      // tg_begin tells apart (or, left out of a batch, starts).
      if (await this.plain.begin(callId, req, now)) return { kind: 'started', callId };
    }
    return this.beginFull(req, now, callId, capped);
  }

  /** Every begin that is not a plain one that started: keys, caps, funding, refusals (tg_begin). */
  private async beginFull(
    req: BeginRequest,
    now: number,
    newCallId: string,
    capped: boolean,
  ): Promise<BeginResult> {
    const caps = capped ? (req.caps as NonNullable<BeginRequest['caps']>) : undefined;
    const capKeys = caps ? counterKeys(caps, now) : null;
    const [r] = await this.rows<BeginRow>(
      'tg_begin',
      'SELECT * FROM tg_begin($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)',
      [
        req.accountId,
        req.action,
        req.priceMicros,
        req.holdMicros,
        req.paymentMethod,
        req.principal,
        req.idempotency?.key ?? null,
        req.idempotency?.fingerprint ?? null,
        req.holdTtlMs,
        caps ? caps.map((c) => c.limitMicros) : null,
        capKeys,
        req.funding?.micros ?? 0,
        req.funding?.memo ?? null,
        metaText(req.meta),
        now,
        this.ttl,
        this.replicaId,
        newCallId,
        this.asyncHolds,
      ],
    );
    if (!r) throw new Error('tg_begin returned no row');
    if (r.kind === 'started' && (req.idempotency || capped || req.funding?.micros))
      this.fullHolds.add(newCallId);
    return toBeginResult(r, req, now);
  }

  async capture(callId: string, req: CaptureRequest): Promise<{ chargedMicros: number }> {
    assertMicros(req.amountMicros, 'capture');
    const now = this.clock.now();
    const full = this.fullHolds.delete(callId);
    if (req.jobHandle === undefined && !full) {
      if (await this.plain.capture(callId, req, now)) return { chargedMicros: req.amountMicros };
    }
    // Not a plain pending hold (a key, a cap, funding, a job), or not pending at all: tg_capture resolves it or
    // raises why not (unknown, already resolved, above the hold).
    await this.rows('tg_capture', 'SELECT tg_capture($1, $2, $3, $4, $5, $6, $7, $8)', [
      callId,
      req.amountMicros,
      req.provider,
      req.durationMs,
      JSON.stringify(req.response ?? null),
      metaText(req.meta),
      req.jobHandle ?? null,
      now,
    ]);
    return { chargedMicros: req.amountMicros };
  }

  async void(callId: string, req: VoidRequest): Promise<void> {
    const now = this.clock.now();
    if (!this.fullHolds.delete(callId)) {
      const done = await this.rows(VOID_PLAIN.name, VOID_PLAIN.text, [
        callId,
        req.errorCode,
        req.provider,
        req.durationMs,
        now,
        metaText(req.meta),
      ]);
      if (done.length === 1) return;
    }
    await this.release(callId, 'voided', req.errorCode, req.provider, req.durationMs, req.meta, now, true);
  }

  private async release(
    callId: string,
    status: 'voided' | 'expired',
    errorCode: string,
    provider: string | null,
    durationMs: number | null,
    meta: Record<string, unknown> | undefined,
    now: number,
    strict: boolean,
  ): Promise<boolean> {
    const [r] = await this.rows<{ ok: boolean }>(
      'tg_release',
      'SELECT tg_release($1, $2, $3, $4, $5, $6, $7, $8) AS ok',
      [callId, status, errorCode, provider, durationMs, metaText(meta), now, strict],
    );
    return r?.ok === true;
  }

  /** Releases holds, each in its own transaction (so a sweep never holds two accounts' locks); counts its own. */
  private async releaseAll(callIds: string[], errorCode: string, now: number): Promise<number> {
    let done = 0;
    let next = 0;
    const worker = async () => {
      while (next < callIds.length) {
        const id = callIds[next++] as string;
        if (await this.release(id, 'expired', errorCode, null, null, undefined, now, false)) done++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(SWEEP_PARALLEL, callIds.length) }, worker));
    return done;
  }

  refundCall(callId: string, reason: string): Promise<{ refundedMicros: number }> {
    return this.mv.refundCall(callId, reason, this.clock.now());
  }

  /** The server answers (the database-outage probe). */
  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  refundJob(
    accountId: string,
    handle: string,
    reason: string,
  ): Promise<{ refundedMicros: number; callId?: string }> {
    return this.mv.refundJob(accountId, handle, reason, this.clock.now());
  }

  /**
   * Voids holds past their expiry, and the pending holds of every other replica whose lease has expired (it
   * crashed or hangs: src/pg/replicas.ts); purges idempotency keys past their TTL. Every replica sweeps; each
   * hold is resolved by exactly one of them (tg_release re-checks it under its lock).
   */
  async sweep(now: number): Promise<SweepResult> {
    const expired = await this.rows<{ call_id: string }>(
      'tg_sweep_expired',
      'SELECT call_id FROM pending_holds WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2',
      [now, SWEEP_BATCH],
    );
    const expiredHolds = await this.releaseAll(
      expired.map((r) => r.call_id),
      'hold_expired',
      now,
    );
    const orphaned = await this.rows<{ call_id: string }>(
      'tg_sweep_orphaned',
      `SELECT h.call_id FROM pending_holds h JOIN replicas r ON r.id = h.replica_id
        WHERE r.lease_expires_at <= $1 AND r.id <> $2 LIMIT $3`,
      [now, this.replicaId, SWEEP_BATCH],
    );
    const orphanedHolds = await this.releaseAll(
      orphaned.map((r) => r.call_id),
      'orphaned_by_replica',
      now,
    );
    const purged = await this.pool.query(
      "DELETE FROM idempotency_keys WHERE status = 'done' AND created_at < $1",
      [now - this.ttl],
    );
    return { expiredHolds, purgedKeys: purged.rowCount ?? 0, orphanedHolds };
  }

  /** This replica's pending holds, and those of replicas whose lease has expired; never a live replica's. */
  async voidAllPending(reason: string): Promise<number> {
    const now = this.clock.now();
    const pending = await this.rows<{ call_id: string }>(
      undefined,
      `SELECT h.call_id FROM pending_holds h
        WHERE (h.replica_id = $1
               OR EXISTS (SELECT 1 FROM replicas r WHERE r.id = h.replica_id AND r.lease_expires_at <= $2))`,
      [this.replicaId, now],
    );
    return this.releaseAll(
      pending.map((r) => r.call_id),
      reason,
      now,
    );
  }

  // ---- money without a call (./pg-movements.ts) -----------------------------------------------------------

  credit(accountId: string, micros: number, memo: string): Promise<Balance> {
    assertMicros(micros, 'credit');
    return this.mv.credit(accountId, micros, memo, this.clock.now());
  }

  recordExternal(req: ExternalRequest): Promise<ExternalResult> {
    checkExternal(req.micros);
    return this.mv.external(req, this.clock.now());
  }

  grantCreditLine(req: GrantLineRequest): Promise<GrantLineResult> {
    checkGrantLine(req);
    return this.mv.grantLine(req, this.clock.now());
  }

  freezeCreditLine(accountId: string, reason: string | null): Promise<void> {
    return this.mv.freeze(accountId, reason, this.clock.now());
  }

  beginSettlement(req: SettlementRequest): Promise<SettlementStart> {
    checkSettlement(req);
    return this.mv.beginSettlement(req, this.clock.now());
  }

  finishSettlement(movementId: string, outcome: SettlementOutcome): Promise<SettlementResult> {
    return this.mv.finishSettlement(movementId, outcome, this.clock.now());
  }

  /** The pool belongs to the StateDb (other stores share it): closing the ledger leaves it open. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}
