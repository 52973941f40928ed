import { randomBytes } from 'node:crypto';
import type { PgPool } from '../pg/pool.js';

// The file links' signing secret when replicas share PostgreSQL and TOLLGATE_SIGNING_SECRET is unset: generated
// once into the database (table `shared_secrets`), so a link signed by one replica verifies on every other.
// INSERT … ON CONFLICT DO NOTHING and a read-back: replicas starting at the same moment all read the winner's.

const NAME = 'file_link_signing';

export async function loadPgSigningSecret(pool: PgPool, now: number): Promise<Buffer> {
  await pool.query(
    'INSERT INTO shared_secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING',
    [NAME, randomBytes(32).toString('hex'), now],
  );
  const r = await pool.query<{ value: string }>('SELECT value FROM shared_secrets WHERE name = $1', [NAME]);
  const hex = r.rows[0]?.value;
  if (hex === undefined || !/^[0-9a-f]{64}$/.test(hex)) {
    throw new Error(
      `the shared signing secret in the database is missing or malformed (shared_secrets.${NAME})`,
    );
  }
  return Buffer.from(hex, 'hex');
}
