import { LIMIT_CHOICES } from '../../auth/oauth/limits.js';
import type { CardRow } from '../billing/index.js';
import type { AccountRow, ApiKeyRow, Balance, CreditLine, KeyUsage, MovementRow } from '../ledger/types.js';
import { describeTransaction, type TransactionView } from '../run/account-view.js';
import { type Chart, legend } from './chart.js';
import { alert, escapeHtml, isoMinute, notice, postForm, usd } from './html.js';
import { keysSection } from './keys-view.js';
import { can, ROLE_LABELS, type Role } from './roles.js';
import { eventsSection, spendSection, type TeamView, teamSection } from './team-view.js';

// The dashboard's sections, rendered from what the ledger, billing and the OAuth store say (dashboard.ts
// gathers it). Amounts carry their exact micro-USD in data-micros, so the browser test can hold the page to the
// ledger's numbers.

export interface Filters {
  from: string;
  to: string;
  kind: 'all' | 'calls' | 'payments';
  status: '' | 'succeeded' | 'failed' | 'refunded' | 'pending';
}

export interface AppView {
  client_id: string;
  client_name: string | null;
  granted_at: string | null;
  daily_limit_micros: number | null;
}

/** Who is looking, and what of the account it sees (docs/decisions.md "Team accounts"). */
export interface DashboardScope {
  role: Role;
  memberId: string;
  memberName: string;
  /** The keys it sees (an owner: all, with their member; others: their own). */
  keys: Array<ApiKeyRow & { member_id?: string }>;
  /** An owner's choice of member to make a key for, and the names of the keys' members. */
  members: Array<{ id: string; name: string; active: boolean }>;
  /** A member's own keys: its usage and history are those of these keys only. Absent: the whole account. */
  principals?: readonly string[] | undefined;
}

export interface DashboardView {
  csrf: string;
  scope: DashboardScope;
  account: AccountRow;
  balance: Balance;
  line: CreditLine;
  chart: Chart;
  chartDays: string[];
  history: TransactionView[];
  filters: Filters;
  /** The keys the viewer sees, newest first, with their limits, spend today and this month, and member. */
  keys: Array<KeyUsage & { member_id?: string | undefined }>;
  signedInKey: string | null;
  apps: AppView[];
  payments:
    | { enabled: false }
    | {
        enabled: true;
        card: CardRow | undefined;
        movements: MovementRow[];
        topUpMin: number;
        topUpMax: number;
        welcomeLine: number;
      };
  flash?: string | undefined;
  error?: string | undefined;
  newKey?: { key: string; name: string | null; memberName?: string | undefined } | undefined;
}

const money = (micros: number, cls = 'num') =>
  `<td class="${cls} price" data-micros="${micros}">${usd(micros)}</td>`;

function moneySection(v: DashboardView): string {
  const { balance, line } = v;
  const frozen = line.frozen
    ? `<div class="alert" role="alert"><strong>Your credit line is frozen:</strong> ${escapeHtml(line.frozen.reason)}. ` +
      'Calls beyond your prepaid balance are refused until a charge succeeds: add a new card or top up below.</div>'
    : '';
  const settling = line.settling
    ? `<p class="hint">A charge of ${usd(line.settling.micros)} to your card is in progress.</p>`
    : '';
  const lineText =
    line.limit_micros > 0
      ? usd(line.limit_micros)
      : v.payments.enabled && v.payments.welcomeLine > 0
        ? `none yet`
        : 'none';
  const lineHint =
    line.limit_micros === 0 && v.payments.enabled && v.payments.welcomeLine > 0
      ? `<p class="hint">Add a card to get a ${usd(v.payments.welcomeLine)} credit line: usage beyond your prepaid balance is charged to the card, only what you used.</p>`
      : '';
  return `<section aria-labelledby="money-h" id="money">
<h2 id="money-h">Balance</h2>
${frozen}
<dl class="figures">
<div><dt>Prepaid balance</dt><dd id="prepaid" data-micros="${Math.max(0, balance.balance_micros)}">${usd(Math.max(0, balance.balance_micros))}</dd></div>
<div><dt>Credit line</dt><dd id="credit-line" data-micros="${line.limit_micros}">${lineText}</dd></div>
<div><dt>Drawn on the line</dt><dd id="drawn" data-micros="${line.drawn_micros}">${usd(line.drawn_micros)}</dd></div>
<div><dt>Available now</dt><dd id="available" data-micros="${Math.max(0, balance.available_micros)}">${usd(Math.max(0, balance.available_micros))}</dd></div>
</dl>
${lineHint}${settling}
</section>`;
}

function usageSection(v: DashboardView): string {
  const rows = v.chartDays
    .flatMap((day) =>
      [...(v.chart.grid.get(day)?.entries() ?? [])].map(
        ([service, micros]) =>
          `<tr><td class="meta">${day}</td><td class="lead">${escapeHtml(service)}</td>${money(micros)}</tr>`,
      ),
    )
    .join('');
  return `<section aria-labelledby="usage-h" id="usage">
<h2 id="usage-h">${v.scope.principals ? 'Your usage' : 'Usage'}, last ${v.chartDays.length} days</h2>
<p>Spent: <strong id="usage-total" data-micros="${v.chart.totalMicros}">${usd(v.chart.totalMicros)}</strong> (UTC days, calls that succeeded, net of refunds).</p>
<div class="chart">${v.chart.svg}${v.chart.svgNarrow}</div>
${legend(v.chart)}
<details><summary>The same as a table</summary>
<div class="scroll"><table id="usage-table" class="cards"><caption>Spend by day and service</caption>
<thead><tr><th scope="col">Day</th><th scope="col">Service</th><th scope="col" class="num">Spent</th></tr></thead>
<tbody>${rows || '<tr><td colspan="3">No paid calls in this period.</td></tr>'}</tbody></table></div>
</details>
</section>`;
}

function historySection(v: DashboardView): string {
  const f = v.filters;
  const opt = (value: string, label: string, current: string) =>
    `<option value="${value}"${value === current ? ' selected' : ''}>${label}</option>`;
  const qs = new URLSearchParams(Object.entries(f).filter(([, x]) => x !== '' && x !== 'all')).toString();
  const rows = v.history
    .map((t) => {
      const what = escapeHtml(describeTransaction(t));
      return `<tr data-id="${escapeHtml(t.id)}"><td class="meta">${isoMinute(t.created_at)}</td><td class="meta">${escapeHtml(t.kind)}</td><td class="lead">${what}</td><td class="meta">${escapeHtml(t.status)}${t.error_code ? ` <span class="hint">(${escapeHtml(t.error_code)})</span>` : ''}</td>${money(t.amount_micros)}<td class="wide"><code>${escapeHtml(t.id)}</code></td></tr>`;
    })
    .join('');
  return `<section aria-labelledby="tx-h" id="transactions">
<h2 id="tx-h">${v.scope.principals ? 'Your calls' : 'Transactions'}</h2>
<form method="get" action="/account#transactions" class="row" aria-label="Filter transactions">
<div><label for="f-from">From</label><input type="date" id="f-from" name="from" value="${escapeHtml(f.from)}"></div>
<div><label for="f-to">To</label><input type="date" id="f-to" name="to" value="${escapeHtml(f.to)}"></div>
<div><label for="f-kind">Kind</label><select id="f-kind" name="kind">${opt('all', 'Everything', f.kind)}${opt('calls', 'Calls', f.kind)}${opt('payments', 'Payments and credits', f.kind)}</select></div>
<div><label for="f-status">Status</label><select id="f-status" name="status">${opt('', 'Any', f.status)}${opt('succeeded', 'Succeeded', f.status)}${opt('failed', 'Failed', f.status)}${opt('refunded', 'Refunded', f.status)}${opt('pending', 'Pending', f.status)}</select></div>
<div><button type="submit" class="secondary">Filter</button></div>
<div><a class="button secondary" href="/account/transactions.csv${qs ? `?${qs}` : ''}" download>Download CSV</a></div>
</form>
<div class="scroll"><table id="tx-table" class="cards"><caption>Newest first, up to 100; the CSV has up to 10,000</caption>
<thead><tr><th scope="col">When (UTC)</th><th scope="col">Kind</th><th scope="col">What</th><th scope="col">Status</th><th scope="col" class="num">Amount</th><th scope="col">Id</th></tr></thead>
<tbody>${rows || '<tr><td colspan="6">No transactions match.</td></tr>'}</tbody></table></div>
</section>`;
}

function appsSection(v: DashboardView): string {
  const rows = v.apps
    .map((a, i) => {
      const name = escapeHtml(a.client_name ?? a.client_id);
      const current = a.daily_limit_micros === null ? 'none' : usd(a.daily_limit_micros);
      const options = LIMIT_CHOICES.map(
        (c) => `<option value="${c.value}">${escapeHtml(c.label)}</option>`,
      ).join('');
      const change = postForm(
        '/account/apps/limit',
        v.csrf,
        `<input type="hidden" name="client_id" value="${escapeHtml(a.client_id)}">
<div><label for="limit-${i}">Daily limit</label><select id="limit-${i}" name="daily_limit"><option value="custom">Another amount…</option>${options}</select></div>
<div><label for="custom-${i}">Amount (USD)</label><input type="text" id="custom-${i}" name="custom_limit_usd" inputmode="decimal" size="6"></div>
<div><button type="submit" class="secondary" aria-label="Change the daily limit of ${name}">Change</button></div>`,
        ' class="row"',
      );
      const revoke = postForm(
        '/account/apps/revoke',
        v.csrf,
        `<input type="hidden" name="client_id" value="${escapeHtml(a.client_id)}"><button type="submit" class="danger" aria-label="Disconnect ${name}">Disconnect</button>`,
      );
      return `<tr><td class="lead">${name}<br><code class="hint">${escapeHtml(a.client_id)}</code></td><td class="meta">${a.granted_at ? isoMinute(a.granted_at) : ''}</td><td class="num price" data-micros="${a.daily_limit_micros ?? ''}">${current}</td><td class="wide">${change}</td><td class="wide">${revoke}</td></tr>`;
    })
    .join('');
  return `<section aria-labelledby="apps-h" id="apps">
<h2 id="apps-h">Connected apps</h2>
<div class="scroll"><table id="apps-table" class="cards"><caption>MCP hosts you connected over OAuth, with what each may spend per UTC day</caption>
<thead><tr><th scope="col">App</th><th scope="col">Connected (UTC)</th><th scope="col">Daily limit</th><th scope="col">Change</th><th scope="col"><span class="hint">Action</span></th></tr></thead>
<tbody>${rows || '<tr><td colspan="5">No apps connected.</td></tr>'}</tbody></table></div>
</section>`;
}

function paymentsSection(v: DashboardView): string {
  const p = v.payments;
  if (!p.enabled) {
    return `<section aria-labelledby="pay-h" id="payments"><h2 id="pay-h">Card and top-ups</h2>
<p>Card payments are not enabled on this gateway: its operator adds credit for you. (Operator: set TOLLGATE_STRIPE_SECRET_KEY and TOLLGATE_STRIPE_WEBHOOK_SECRET.)</p></section>`;
  }
  const card = p.card
    ? `<p id="card-on-file">Card on file: <strong>${escapeHtml(p.card.brand)} ending ${escapeHtml(p.card.last4)}</strong>, expires ${String(p.card.exp_month).padStart(2, '0')}/${p.card.exp_year}.</p>`
    : `<p id="card-on-file">No card on file.</p>`;
  const cardButton = postForm(
    '/account/card',
    v.csrf,
    `<button type="submit">${p.card ? 'Replace the card' : 'Add a card'}</button>`,
  );
  const payNow =
    p.card && v.line.drawn_micros >= 500_000 && !v.line.settling
      ? postForm(
          '/account/settle',
          v.csrf,
          `<button type="submit" class="secondary">Pay the ${usd(v.line.drawn_micros)} drawn now</button>`,
        )
      : '';
  const rows = p.movements
    .map((m) => {
      const moved = m.kind !== 'settlement' || m.status === 'succeeded' ? m.amount_micros : 0;
      const reason =
        typeof m.meta?.reason === 'string' ? ` <span class="hint">${escapeHtml(m.meta.reason)}</span>` : '';
      return `<tr><td class="meta">${isoMinute(m.created_at)}</td><td class="meta">${escapeHtml(m.kind)}</td><td class="lead">${escapeHtml(m.memo ?? '')}${reason}</td><td class="meta">${escapeHtml(m.status)}</td>${money(moved)}</tr>`;
    })
    .join('');
  return `<section aria-labelledby="pay-h" id="payments">
<h2 id="pay-h">Card and top-ups</h2>
${card}
<div class="row">${cardButton}${payNow}</div>
<h3>Top up</h3>
${postForm('/account/topup', v.csrf, `<div><label for="topup-amount">Amount (USD, ${usd(p.topUpMin)}–${usd(p.topUpMax)})</label><input type="text" id="topup-amount" name="amount_usd" inputmode="decimal" required size="8"></div><div><button type="submit">Top up by card</button></div>`, ' class="row"')}
<h3>Payment history</h3>
<div class="scroll"><table id="payments-table" class="cards"><caption>Top-ups, settlements of the credit line, refunds and disputes</caption>
<thead><tr><th scope="col">When (UTC)</th><th scope="col">Kind</th><th scope="col">What</th><th scope="col">Status</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody>${rows || '<tr><td colspan="5">No payments yet.</td></tr>'}</tbody></table></div>
</section>`;
}

export function dashboardBody(v: DashboardView, team?: TeamView): string {
  const role = v.scope.role;
  const sections: Array<[string, string, string]> = [
    ['money', 'Balance', moneySection(v)],
    ['usage', 'Usage', usageSection(v)],
    ['transactions', v.scope.principals ? 'Your calls' : 'Transactions', historySection(v)],
    [
      'keys',
      'API keys',
      keysSection({
        csrf: v.csrf,
        keys: v.keys,
        signedInKey: v.signedInKey,
        owner: can(role, 'keys.others'),
        members: v.scope.members,
        memberId: v.scope.memberId,
        newKey: v.newKey,
      }),
    ],
  ];
  if (team) {
    sections.push(['team', 'Team', teamSection(team)], ['spend', 'Spend per member', spendSection(team)]);
    sections.push(['events', 'Who did what', eventsSection(team)]);
  }
  if (can(role, 'apps')) sections.push(['apps', 'Connected apps', appsSection(v)]);
  if (can(role, 'payments')) sections.push(['payments', 'Card and top-ups', paymentsSection(v)]);
  const nav =
    sections.map(([id, label]) => `<a href="#${id}">${label}</a>`).join('') +
    (can(role, 'payments') ? '<a href="/account/alerts">Alerts</a>' : '');
  return `<h1>Your account${v.account.name ? `: ${escapeHtml(v.account.name)}` : ''}</h1>
<p class="hint" id="signed-in-as">Signed in as <strong>${escapeHtml(v.scope.memberName)}</strong> (${ROLE_LABELS[role]})</p>
<nav class="inline" aria-label="Sections">${nav}</nav>
${alert(v.error)}${notice(v.flash)}
${sections.map(([, , html]) => html).join('\n')}`;
}
