import { LEDGER_MIGRATIONS } from './ledger.js';
import { REPLICA_MIGRATIONS } from './replicas.js';
import { SESSION_MIGRATIONS } from './sessions.js';
import { SIGN_IN_MIGRATIONS } from './sign-in.js';
import { STORE_MIGRATIONS } from './stores.js';

/** One schema change, applied once in one transaction. Versions are global; each file keeps to its range. */
export interface PgMigration {
  version: number;
  name: string;
  sql: string;
}

// Ranges, so that areas grow without renumbering: ledger 1–99, OAuth/accounts/billing 100–199,
// jobs/files/payments/limits 200–299, replicas 300–399.
export const MIGRATIONS: readonly PgMigration[] = [
  ...LEDGER_MIGRATIONS,
  ...SIGN_IN_MIGRATIONS,
  ...STORE_MIGRATIONS,
  ...SESSION_MIGRATIONS,
  ...REPLICA_MIGRATIONS,
];
