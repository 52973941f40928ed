// What each role of a team account may do on the dashboard (docs/decisions.md "Team accounts"). One table, read
// by every route and by the page (a section a role may not use is not shown, and its routes refuse with 403).
//
// - owner: everything: members and their roles, invitations, every key (and, with the per-key limits, their
//   limits), connected apps, the card and top-ups, the whole history and its CSV, the event log.
// - billing: the card, top-ups and the line, the whole history and its CSV, spend per member and per key, the
//   event log; only its own keys.
// - member: its own keys and its own usage and calls; the account's balance (it spends from it), read only.

export const ROLES = ['owner', 'billing', 'member'] as const;
export type Role = (typeof ROLES)[number];

export const ROLE_LABELS: Record<Role, string> = {
  owner: 'Owner',
  billing: 'Billing',
  member: 'Member',
};

export type Permission =
  /** Invite, revoke invitations, remove members, change roles. */
  | 'team.manage'
  /** The member list, spend per member and per key, the event log. */
  | 'team.view'
  /** See, create for and revoke other members' keys (and set their limits). */
  | 'keys.others'
  /** OAuth-connected apps: their daily limits, disconnecting them. */
  | 'apps'
  /** The card, top-ups, paying what is drawn, the payment pages. */
  | 'payments'
  /** The whole account's usage, history and CSV (without it: one's own calls only). */
  | 'history.account';

const GRANTS: Record<Permission, readonly Role[]> = {
  'team.manage': ['owner'],
  'team.view': ['owner', 'billing'],
  'keys.others': ['owner'],
  apps: ['owner'],
  payments: ['owner', 'billing'],
  'history.account': ['owner', 'billing'],
};

export function can(role: Role, permission: Permission): boolean {
  return GRANTS[permission].includes(role);
}

export function isRole(v: unknown): v is Role {
  return typeof v === 'string' && (ROLES as readonly string[]).includes(v);
}
