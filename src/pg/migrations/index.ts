/** A PostgreSQL-only migration (the ledger's, src/pg/migrations/ledger.ts); the one list is src/db/migrations. */
export interface PgMigration {
  version: number;
  name: string;
  sql: string;
}
