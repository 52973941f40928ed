import { MIGRATIONS, type PgMigration } from './migrations/index.js';
import type { PgPool } from './pool.js';

// Versioned migrations. Every `serve` runs them at start and `tollgate migrate` runs them on demand; several
// replicas starting at once serialize on one advisory lock, so each migration runs exactly once.

/** An arbitrary constant: the advisory lock every tollgate process takes to migrate. */
const MIGRATION_LOCK = 0x7011_6a7e;

export interface MigrateResult {
  applied: Array<{ version: number; name: string }>;
  current: number;
}

export async function migrate(
  pool: PgPool,
  migrations: readonly PgMigration[] = MIGRATIONS,
): Promise<MigrateResult> {
  const c = await pool.connect();
  try {
    await c.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await c.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const done = new Set(
        (await c.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map(
          (r) => r.version,
        ),
      );
      const applied: MigrateResult['applied'] = [];
      for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
        if (done.has(m.version)) continue;
        await c.query('BEGIN');
        try {
          await c.query(m.sql);
          await c.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
          await c.query('COMMIT');
        } catch (err) {
          await c.query('ROLLBACK').catch(() => {});
          throw new Error(`migration ${m.version} (${m.name}) failed: ${(err as Error).message}`, {
            cause: err,
          });
        }
        applied.push({ version: m.version, name: m.name });
      }
      const current = Math.max(0, ...migrations.map((m) => m.version));
      return { applied, current };
    } finally {
      await c.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    }
  } finally {
    c.release();
  }
}
