import { LEDGER_MIGRATIONS } from '../../pg/migrations/ledger.js';
import { ALERT_MIGRATIONS } from './alerts.js';
import { SIGN_IN_MIGRATIONS } from './sign-in.js';
import { STORE_MIGRATIONS } from './stores.js';
import { TEAM_MIGRATIONS } from './teams.js';
import type { Migration } from './types.js';

export type { Migration, StateFile } from './types.js';

// Ranges, so that areas grow without renumbering: ledger 1–99 (PostgreSQL), OAuth/accounts/billing 100–199,
// handles/files/payments/web engine/limits 200–299, replicas and later changes 300+. Versions up to 300 are the
// ones PostgreSQL databases have recorded since the first release (that made by the two-schema code of before
// is upgraded as it stands); they create only what is missing, so a SQLite database made then, whose tables
// each part created under its own namespace, takes them too (docs/decisions.md "One store layer").
export const MIGRATIONS: readonly Migration[] = [
  ...LEDGER_MIGRATIONS.map(
    (m): Migration => ({ version: m.version, name: m.name, up: m.sql, only: 'postgres' }),
  ),
  ...SIGN_IN_MIGRATIONS,
  ...TEAM_MIGRATIONS,
  ...STORE_MIGRATIONS,
  ...ALERT_MIGRATIONS,
];
