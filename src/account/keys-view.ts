import type { KeyLimits, KeyUsage } from '../ledger/types.js';
import { escapeHtml, isoMinute, postForm, secretBox, usd } from './html.js';

// The dashboard's API keys: each key with its limits and what it spent today and this month (UTC), revocation,
// and the form that creates a key. An owner (`keys.others`: ./roles.ts) sees every key with its member, changes
// any key's limits, and creates keys for any member, with limits or without; a member or billing member sees its
// own keys and their limits, read only, and a key it creates has the limits of the key it signed in with
// (docs/decisions.md "Teams × limits"). Amounts carry their exact micro-USD in data-micros, so the browser test
// holds the page to the ledger's numbers.

export interface KeysView {
  csrf: string;
  keys: Array<KeyUsage & { member_id?: string | undefined }>;
  signedInKey: string | null;
  /** An owner: every key, its member, the change-limits forms, keys for others. */
  owner: boolean;
  members: Array<{ id: string; name: string; active: boolean }>;
  /** The viewer's own member id (preselected as whom a new key is for). */
  memberId: string;
  newKey?: { key: string; name: string | null; memberName?: string | undefined } | undefined;
}

/** The form fields of a key's limits: the same names in the create and change forms (src/account/routes.ts). */
export const LIMIT_FIELDS = {
  maxCallUsd: 'max_call_usd',
  dailyLimitUsd: 'daily_limit_usd',
  monthlyLimitUsd: 'monthly_limit_usd',
  actions: 'actions',
} as const;

/** What the refusals call the fields (as their labels read). */
export const LIMIT_LABELS = {
  maxCallUsd: 'Most per call',
  dailyLimitUsd: 'Per UTC day',
  monthlyLimitUsd: 'Per UTC month',
  actions: 'Only these services or actions',
} as const;

/** Spent, and of what limit: `$1.20 of $5.00 today`, or `$1.20 today`. */
function spentCell(cls: string, spent: number, limit: number | null, when: string): string {
  const of = limit === null ? when : `of ${usd(limit)} ${when}`;
  return `<td class="num price ${cls}" data-micros="${spent}" data-limit-micros="${limit ?? ''}">${usd(spent)} <span class="hint">${of}</span></td>`;
}

/** The four limit inputs, prefilled with a key's current limits (empty: none). */
export function limitInputs(idPrefix: string, k: KeyLimits | undefined): string {
  const amount = (m: number | null | undefined) => (m === null || m === undefined ? '' : usd(m).slice(1));
  const field = (key: keyof typeof LIMIT_FIELDS, value: string, hint: string, size: number) =>
    `<div><label for="${idPrefix}-${LIMIT_FIELDS[key]}">${LIMIT_LABELS[key]}</label><input type="text" id="${idPrefix}-${LIMIT_FIELDS[key]}" name="${LIMIT_FIELDS[key]}" value="${escapeHtml(value)}" size="${size}" placeholder="${hint}" autocomplete="off"${key === 'actions' ? '' : ' inputmode="decimal"'}></div>`;
  return [
    field('maxCallUsd', amount(k?.max_call_micros), 'no limit', 8),
    field('dailyLimitUsd', amount(k?.daily_limit_micros), 'no limit', 8),
    field('monthlyLimitUsd', amount(k?.monthly_limit_micros), 'no limit', 8),
    field('actions', k?.actions?.join(',') ?? '', 'every action', 18),
  ].join('');
}

function keyRow(v: KeysView, k: KeysView['keys'][number], names: Map<string, string>): string {
  const active = k.revoked_at === null;
  const prefix = escapeHtml(k.prefix);
  const id = escapeHtml(k.id);
  const mine = k.id === v.signedInKey ? ' <span class="hint">(this session signed in with it)</span>' : '';
  const member = v.owner
    ? `<td class="meta" data-member="${escapeHtml(k.member_id ?? '')}">${escapeHtml(names.get(k.member_id ?? '') ?? '')}</td>`
    : '';
  const maxCall =
    k.max_call_micros === null
      ? '<td class="meta max-call" data-micros="">no maximum per call</td>'
      : `<td class="meta max-call price" data-micros="${k.max_call_micros}">at most ${usd(k.max_call_micros)} per call</td>`;
  const actions = `<td class="meta allowed">${k.actions === null ? 'every action' : `only ${escapeHtml(k.actions.join(', '))}`}</td>`;
  // Only an owner changes limits: a member could otherwise lift the limits an owner set on its key.
  const change =
    active && v.owner
      ? `<tr class="key-limits"><td colspan="${columns(v)}" class="wide"><details><summary>Change the limits of ${prefix}</summary>${postForm(
          '/account/keys/limits',
          v.csrf,
          `<input type="hidden" name="key_id" value="${id}">${limitInputs(`lim-${id}`, k)}<div><button type="submit" class="secondary" aria-label="Save the limits of key ${prefix}">Save</button></div>`,
          ' class="row"',
        )}<p class="hint">USD amounts, such as 2.50; empty for no limit. Services or actions comma-separated (llm is the model router).</p></details></td></tr>`
      : '';
  const revoke = active
    ? postForm(
        '/account/keys/revoke',
        v.csrf,
        `<input type="hidden" name="key_id" value="${id}"><button type="submit" class="danger" aria-label="Revoke key ${prefix}">Revoke</button>`,
      )
    : '';
  return `<tbody data-key-id="${id}"><tr data-key="${id}"><td class="lead"><code>${prefix}</code>${mine}</td><td class="meta">${escapeHtml(k.name ?? '')}</td>${member}<td class="meta">${active ? 'active' : `revoked ${isoMinute(k.revoked_at as number)}`}</td>${spentCell('today', k.spent_today_micros, k.daily_limit_micros, 'today')}${spentCell('month', k.spent_month_micros, k.monthly_limit_micros, 'this month')}${maxCall}${actions}<td class="num">${revoke}</td></tr>${change}</tbody>`;
}

const columns = (v: KeysView) => (v.owner ? 9 : 8);

/** An owner's choice of the member a new key is for. */
function memberChoice(v: KeysView): string {
  return `<div><label for="key-member">For</label><select id="key-member" name="member_id">${v.members
    .filter((m) => m.active)
    .map(
      (m) =>
        `<option value="${escapeHtml(m.id)}"${m.id === v.memberId ? ' selected' : ''}>${escapeHtml(m.name)}${m.id === v.memberId ? ' (you)' : ''}</option>`,
    )
    .join('')}</select></div>`;
}

export function keysSection(v: KeysView): string {
  const nk = v.newKey;
  const shown = nk
    ? `<div class="notice" role="status"><p><strong>The new API key${nk.name ? ` “${escapeHtml(nk.name)}”` : ''}${nk.memberName ? ` for ${escapeHtml(nk.memberName)}` : ''}.</strong> It is shown only this once: store it now${nk.memberName ? ' and hand it over' : ''}.</p>
${secretBox('new-api-key', nk.key, 'Copy the new API key')}</div>`
    : '';
  const names = new Map(v.members.map((m) => [m.id, m.name]));
  const rows = v.keys.map((k) => keyRow(v, k, names)).join('');
  const create = postForm(
    '/account/keys',
    v.csrf,
    `<div><label for="key-name">Name of a new key</label><input type="text" id="key-name" name="name" maxlength="60" autocomplete="off"></div>${
      v.owner
        ? `${memberChoice(v)}
<details><summary>Limits of the new key (optional)</summary><div class="row">${limitInputs('new', undefined)}</div></details>`
        : ''
    }
<div><button type="submit">Create a key</button></div>`,
    ' class="row"',
  );
  const hint = v.owner
    ? 'A key covers every action, the model router and MCP, unless you limit it: the most one call may cost, what it may spend per UTC day and month (a call that would pass a limit is refused, nothing charged), and the only services or actions it may call. Only owners change limits; an owner’s key with limits cannot sign in here. Changes apply within seconds.'
    : 'Your keys’ limits are set by an owner of the account: ask one to change them. A key you create has the limits of the key you signed in with.';
  return `<section aria-labelledby="keys-h" id="keys">
<h2 id="keys-h">${v.owner ? 'API keys' : 'Your API keys'}</h2>
${shown}
<p class="hint">${hint}</p>
<div class="scroll"><table id="keys-table" class="cards"><caption>Spent: calls that succeeded, net of refunds, today and this month (UTC)${v.owner ? '; each key belongs to a member' : ''}</caption>
<thead><tr><th scope="col">Key</th><th scope="col">Name</th>${v.owner ? '<th scope="col">Member</th>' : ''}<th scope="col">Status</th><th scope="col" class="num">Today</th><th scope="col" class="num">This month</th><th scope="col">Per call</th><th scope="col">Allowed</th><th scope="col"><span class="hint">Action</span></th></tr></thead>
${rows || `<tbody><tr><td colspan="${columns(v)}">No keys yet.</td></tr></tbody>`}</table></div>
${create}
</section>`;
}
