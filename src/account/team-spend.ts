import type { LedgerReads, TimeRange } from '../ledger/types.js';
import { lastDays } from './chart.js';
import { CHART_DAYS, csvField, decimalUsd } from './dashboard.js';
import type { Filters } from './dashboard-view.js';
import type { MemberKey, Team } from './team.js';
import type { MemberRow } from './team-store.js';

// Spend per member and per key, read from the ledger's calls (their principal is the key's id for an API-key
// call) and attributed to members by the keys they own. Money stays the account's: this is who spent it. Calls
// made through connected apps (OAuth) or other credentials are listed by their principal, under no member.

const DAY = 86_400_000;

export interface SpendRange {
  /** YYYY-MM-DD, UTC, both included. */
  from: string;
  to: string;
  range: TimeRange;
}

export interface MemberSpend {
  member: MemberRow;
  micros: number;
  calls: number;
  keys: number;
}

export interface KeySpend {
  key: MemberKey;
  member: MemberRow | undefined;
  micros: number;
  calls: number;
}

export interface SpendView {
  from: string;
  to: string;
  members: MemberSpend[];
  keys: KeySpend[];
  /** Principals that are not keys of the account (connected apps: `oauth:<client>`). */
  others: Array<{ principal: string; micros: number; calls: number }>;
  totalMicros: number;
}

/** The period: the transaction filters' dates when given, else the usage chart's (the last 30 UTC days). */
export function spendRange(f: Pick<Filters, 'from' | 'to'>, now: number): SpendRange {
  const days = lastDays(now, CHART_DAYS);
  const from = f.from || (days[0] as string);
  const to = f.to || (days.at(-1) as string);
  return {
    from,
    to,
    range: { fromMs: Date.parse(`${from}T00:00:00Z`), toMs: Date.parse(`${to}T00:00:00Z`) + DAY },
  };
}

export async function teamSpend(
  ledger: LedgerReads,
  team: Team,
  accountId: string,
  r: SpendRange,
  /** The account's keys and members when the caller has read them already. */
  known?: { keys: MemberKey[]; members: MemberRow[] },
): Promise<SpendView> {
  const [rows, keys, members] = await Promise.all([
    ledger.spendByPrincipal(accountId, r.range),
    known?.keys ?? team.keysOf(accountId),
    known?.members ?? team.store.members(accountId),
  ]);
  const byPrincipal = new Map(rows.map((x) => [x.principal ?? '', x]));
  const memberById = new Map(members.map((m) => [m.id, m]));
  const perMember = new Map<string, MemberSpend>(
    members.map((m) => [m.id, { member: m, micros: 0, calls: 0, keys: 0 }]),
  );
  const keySpend: KeySpend[] = [];
  for (const key of keys) {
    const s = byPrincipal.get(key.id);
    byPrincipal.delete(key.id);
    const member = memberById.get(key.member_id);
    const m = perMember.get(key.member_id);
    if (m) {
      m.micros += s?.micros ?? 0;
      m.calls += s?.calls ?? 0;
      if (key.revoked_at === null) m.keys++;
    }
    if (s || key.revoked_at === null) {
      keySpend.push({ key, member, micros: s?.micros ?? 0, calls: s?.calls ?? 0 });
    }
  }
  const others = [...byPrincipal.entries()].map(([principal, s]) => ({
    principal: principal || '(none)',
    micros: s.micros,
    calls: s.calls,
  }));
  const bySpend = <T extends { micros: number }>(a: T, b: T) => b.micros - a.micros;
  return {
    from: r.from,
    to: r.to,
    // A removed member stays listed while it has spend in the period.
    members: [...perMember.values()].filter((m) => m.member.removed_at === null || m.calls > 0).sort(bySpend),
    keys: keySpend.sort(bySpend),
    others: others.sort(bySpend),
    totalMicros: rows.reduce((t, x) => t + x.micros, 0),
  };
}

const COLUMNS = [
  'scope',
  'member_id',
  'member_name',
  'member_role',
  'member_status',
  'key_id',
  'key_prefix',
  'key_name',
  'principal',
  'calls',
  'spent_usd',
  'spent_micros',
  'from',
  'to',
] as const;
const NUMERIC_COLUMNS = new Set<string>(['calls', 'spent_usd', 'spent_micros']);

/** One row per member, then per key, then per other principal: what each spent in the period. */
export function spendCsv(v: SpendView): string {
  const lines: string[] = [COLUMNS.join(',')];
  const row = (values: Partial<Record<(typeof COLUMNS)[number], unknown>>, micros: number, calls: number) => {
    const all = {
      ...values,
      calls,
      spent_usd: decimalUsd(micros),
      spent_micros: micros,
      from: v.from,
      to: v.to,
    };
    lines.push(COLUMNS.map((c) => csvField(all[c], NUMERIC_COLUMNS.has(c))).join(','));
  };
  const status = (m: MemberRow | undefined) => (m ? (m.removed_at === null ? 'active' : 'removed') : null);
  for (const m of v.members) {
    row(
      {
        scope: 'member',
        member_id: m.member.id,
        member_name: m.member.name,
        member_role: m.member.role,
        member_status: status(m.member),
      },
      m.micros,
      m.calls,
    );
  }
  for (const k of v.keys) {
    row(
      {
        scope: 'key',
        member_id: k.key.member_id,
        member_name: k.member?.name,
        member_role: k.member?.role,
        member_status: status(k.member),
        key_id: k.key.id,
        key_prefix: k.key.prefix,
        key_name: k.key.name,
        principal: k.key.id,
      },
      k.micros,
      k.calls,
    );
  }
  for (const o of v.others) row({ scope: 'other', principal: o.principal }, o.micros, o.calls);
  return `${lines.join('\r\n')}\r\n`;
}
