import type { Clock } from '../../lib/clock.js';
import { counterKey } from '../spend-caps.js';
import type {
  CallRow,
  CapWindow,
  CreditLine,
  MovementKind,
  MovementRow,
  TimeRange,
  UsageRow,
} from '../types.js';
import type { PgCallReads } from './pg-call-reads.js';
import type { PgMovements } from './pg-movements.js';

// The PostgreSQL ledger's reads of the transaction record and of money that moved without a call: what the
// dashboard, the CLI and the alerts read, never a call's path. The money methods are in ./pg-ledger.ts.

export class PgLedgerReads {
  constructor(
    protected readonly clock: Clock,
    protected readonly mv: PgMovements,
    protected readonly reads: PgCallReads,
  ) {}

  getCall(id: string): Promise<CallRow | undefined> {
    return this.reads.call(id);
  }

  transactions(accountId: string, limit: number, range: TimeRange = {}): Promise<CallRow[]> {
    return this.reads.calls(accountId, limit, range);
  }

  usageByDay(accountId: string, range: TimeRange): Promise<UsageRow[]> {
    return this.reads.usage(accountId, range);
  }

  capSpend(accountId: string, scope: string, window: CapWindow): Promise<number> {
    return this.reads.capSpend(accountId, counterKey(scope, window, this.clock.now()));
  }

  transactionsOf(accountId: string, principals: readonly string[], limit: number, range: TimeRange = {}) {
    return this.reads.callsOf(accountId, principals, limit, range);
  }

  usageByDayOf(accountId: string, principals: readonly string[], range: TimeRange): Promise<UsageRow[]> {
    return this.reads.usageOf(accountId, principals, range);
  }

  spendByPrincipal(accountId: string, range: TimeRange) {
    return this.reads.spend(accountId, range);
  }

  movements(accountId: string, limit: number, range?: TimeRange): Promise<MovementRow[]> {
    return this.mv.movements(accountId, limit, range);
  }

  getMovement(id: string): Promise<MovementRow | undefined> {
    return this.mv.get(id);
  }

  movementByRef(kind: MovementKind, externalRef: string): Promise<MovementRow | undefined> {
    return this.mv.byRef(kind, externalRef);
  }

  creditLine(accountId: string): Promise<CreditLine> {
    return this.mv.creditLine(accountId);
  }

  drawnAccounts(minDrawnMicros: number, limit: number) {
    return this.mv.drawnAccounts(minDrawnMicros, limit);
  }

  pendingSettlements(startedBefore: number, limit: number): Promise<MovementRow[]> {
    return this.mv.pendingSettlements(startedBefore, limit);
  }
}
