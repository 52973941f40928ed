import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/index.js';
import { DB_FILE } from '../ledger/index.js';
import { CliError, UsageError } from './output.js';

// Which database a command acts on, said and never guessed (docs/decisions.md "Which database the CLI uses").
// TOLLGATE_DATABASE_URL names PostgreSQL; unset, the SQLite file under the data dir. A gateway serving on
// PostgreSQL leaves a note in its data dir (database.json), so a command run there without the variable (a shell
// that did not load the service's environment) refuses instead of reading an old SQLite file; a data dir that holds
// a SQLite file while the variable names PostgreSQL is refused too. `--database sqlite|postgres` chooses.

/** The note a gateway on PostgreSQL keeps in its data dir: which database it serves (password masked). */
export const DATABASE_NOTE = 'database.json';

/** `postgres://user:secret@host/db` → `postgres://user:***@host/db`: said in messages, never the secret. */
export function maskedUrl(url: string): string {
  if (!URL.canParse(url)) return 'postgres://…';
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

/** One line naming the database: what the CLI prints, what `serve` logs. */
export function describeDatabase(config: Pick<Config, 'dataDir' | 'database'>): string {
  return config.database
    ? `PostgreSQL ${maskedUrl(config.database.url)} (TOLLGATE_DATABASE_URL)`
    : `SQLite ${join(config.dataDir, DB_FILE)}`;
}

function readNote(dataDir: string): { url?: string } | undefined {
  try {
    return JSON.parse(readFileSync(join(dataDir, DATABASE_NOTE), 'utf8')) as { url?: string };
  } catch {
    return undefined;
  }
}

/**
 * The configuration with the database this command uses, or a refusal when the data dir and TOLLGATE_DATABASE_URL
 * disagree and no `--database` says which one is meant.
 */
export function chooseDatabase<C extends Pick<Config, 'dataDir' | 'database'>>(
  config: C,
  flag: string | undefined,
): C {
  if (flag !== undefined && flag !== 'sqlite' && flag !== 'postgres') {
    throw new UsageError(`--database must be sqlite or postgres, not ${flag}`);
  }
  const sqliteFile = join(config.dataDir, DB_FILE);
  if (flag === 'sqlite') return { ...config, database: undefined };
  if (flag === 'postgres') {
    if (!config.database) {
      throw new CliError('config', '--database postgres needs TOLLGATE_DATABASE_URL (postgres://…)', 1);
    }
    return config;
  }
  if (config.database && existsSync(sqliteFile)) {
    throw new CliError(
      'database_ambiguous',
      `TOLLGATE_DATABASE_URL names PostgreSQL (${maskedUrl(config.database.url)}), but ${config.dataDir} holds a SQLite database (${DB_FILE}) too: add --database postgres or --database sqlite to say which one, or move the old file away`,
      1,
      { data_dir: config.dataDir },
    );
  }
  const note = config.database ? undefined : readNote(config.dataDir);
  if (note) {
    throw new CliError(
      'database_ambiguous',
      `${config.dataDir} belongs to a gateway on PostgreSQL (${note.url ?? 'see its database.json'}), but TOLLGATE_DATABASE_URL is not set here: set it as the gateway has it (its .env or environment), or add --database sqlite to use ${sqliteFile}`,
      1,
      { data_dir: config.dataDir },
    );
  }
  return config;
}

/** `serve` on PostgreSQL: note it in the data dir (written whole, then renamed: replicas may share the dir). */
export function noteDatabase(config: Pick<Config, 'dataDir' | 'database'>): void {
  if (!config.database) return;
  mkdirSync(config.dataDir, { recursive: true });
  const tmp = join(config.dataDir, `.${DATABASE_NOTE}.${process.pid}`);
  writeFileSync(
    tmp,
    `${JSON.stringify({ backend: 'postgres', url: maskedUrl(config.database.url), note: 'written by tollgate serve: commands run in this data dir need TOLLGATE_DATABASE_URL' })}\n`,
  );
  renameSync(tmp, join(config.dataDir, DATABASE_NOTE));
}

interface SocketError {
  code?: string;
  port?: number;
  hostname?: string;
}

/** A socket error of a connection to this URL's server (not to another service that failed at start). */
function aimedAt(e: SocketError | undefined, url: string): boolean {
  if (!e || /^[0-9A-Z]{5}$/.test(e.code ?? '')) return true; // a PostgreSQL SQLSTATE: the server answered
  if (!URL.canParse(url)) return true;
  const u = new URL(url);
  return (
    (e.port === undefined || e.port === Number(u.port || 5432)) &&
    (e.hostname === undefined || e.hostname === u.hostname)
  );
}

/**
 * A database that does not answer, as one line naming the variable (instead of `connect ECONNREFUSED` and a stack
 * trace); other errors pass through.
 */
export function databaseError(e: unknown, config: Pick<Config, 'database'>): unknown {
  if (!config.database) return e;
  const code = (e as { code?: string } | undefined)?.code ?? '';
  const reasons: Record<string, string> = {
    ECONNREFUSED: 'the connection was refused (is PostgreSQL running there?)',
    ENOTFOUND: 'its host name does not resolve',
    EAI_AGAIN: 'its host name does not resolve (yet)',
    ETIMEDOUT: 'the connection timed out',
    EHOSTUNREACH: 'the host is unreachable',
    ECONNRESET: 'the connection was reset',
    '28P01': 'the password was refused',
    '28000': 'the user may not connect',
    '3D000': 'that database does not exist',
    '57P03': 'PostgreSQL is starting up or shutting down',
  };
  const first = (e as { errors?: Array<SocketError> } | undefined)?.errors?.[0];
  const socket = code in reasons ? (e as SocketError) : first;
  const reason = reasons[code] ?? (first?.code ? reasons[first.code] : undefined);
  if (!reason || !aimedAt(socket, config.database.url)) return e;
  return new CliError(
    'database_unavailable',
    `cannot use the PostgreSQL database of TOLLGATE_DATABASE_URL (${maskedUrl(config.database.url)}): ${reason}`,
    1,
    { database: maskedUrl(config.database.url) },
  );
}

/** No database where a command looked: it names the directory and how it was chosen. */
export function noDatabase(dataDir: string): CliError {
  const how = process.env.TOLLGATE_DATA_DIR
    ? 'TOLLGATE_DATA_DIR'
    : 'the default ./data of the current directory; set TOLLGATE_DATA_DIR';
  return new CliError(
    'no_database',
    `no tollgate database in ${dataDir} (${how}): run this where the gateway runs, or point TOLLGATE_DATA_DIR at its data directory`,
    1,
    { data_dir: dataDir },
  );
}
