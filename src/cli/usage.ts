import { didYouMean, nearest } from '../lib/did-you-mean.js';
import { UsageError } from './output.js';

// The CLI's commands, each with its usage line: `--help` prints them all; a mistake prints the one that applies.

export const COMMANDS: Record<string, Record<string, string>> = {
  serve: { '': 'serve [--workers N] [--database sqlite|postgres]' },
  migrate: { '': 'migrate' },
  export: { '': 'export [--out FILE] [--database sqlite|postgres]' },
  import: { '': 'import <file> [--database sqlite|postgres]' },
  accounts: {
    create: 'accounts create [--name N] [--credit-usd X]',
    list: 'accounts list',
  },
  keys: {
    create:
      'keys create <account> [--name N] [--max-call-usd X] [--daily-limit-usd Y] [--monthly-limit-usd Z] [--actions a,b]',
    list: 'keys list [<account>]',
    limit:
      'keys limit <key_id> [--max-call-usd X|none] [--daily-limit-usd Y|none] [--monthly-limit-usd Z|none] [--actions a,b|none]',
    revoke: 'keys revoke <key_id>',
  },
  credit: { '': 'credit <account> <usd>' },
  adjust: { '': 'adjust <account> <±usd> --reason R [--idempotency-key K]' },
  refund: { '': 'refund <transaction_id> [--usd X] --reason R [--idempotency-key K]' },
  balance: { '': 'balance <account>' },
  tx: { '': 'tx <account> [--limit N]' },
  members: {
    list: 'members list <account>',
    invite: 'members invite <account> [--role owner|billing|member] [--name N]',
  },
  oauth: {
    list: 'oauth list <account>',
    revoke: 'oauth revoke <account> -- <client_id>',
  },
  catalog: { '': 'catalog' },
  'receipt-key': { '': 'receipt-key' },
  'server-json': { '': 'server-json [--template]' },
};

const ENTRY = 'node bin/tollgate.js';

export const USAGE = `tollgate — pay-per-call gateway for AI agents

Usage: ${ENTRY} <command> [options] [--json]     (or \`tollgate\` after \`npm link\`)

  serve [--workers N]                     start the gateway (HTTP shim, MCP, model router); with PostgreSQL,
                                          N worker processes behind one port (default: one per core)
  migrate                                 bring the database schema up to this version (serve also does)
  export [--out FILE]                     the whole state (accounts, keys, ledger, OAuth, …) as one file,
                                          with no gateway running (docs/operator.md "Move to PostgreSQL")
  import <file>                           an export into this (empty) database, checked to the micro-dollar
  accounts create [--name N] [--credit-usd X]
                                          create an account and its first API key
  accounts list                           accounts with their balances and credit lines
  keys create <account> [--name N] [--max-call-usd X] [--daily-limit-usd Y] [--monthly-limit-usd Z]
              [--actions svc/action,svc2]
                                          issue another API key, optionally with limits: most per call, per UTC
                                          day and month (USD), and the only services or actions it may call
  keys limit <key_id> [--max-call-usd X|none] [--daily-limit-usd Y|none] [--monthly-limit-usd Z|none]
             [--actions a,b|none]         change a key's limits (none removes one); applies within seconds
  keys list [<account>]                   list keys with their limits and what each spent today and this month
                                          (never the secrets)
  keys revoke <key_id>                    revoke a key; it stops working at once
  credit <account> <usd>                  add credit to an account
  adjust <account> <±usd> --reason R      correct a balance either way (recorded with the reason); a debit never
                                          takes what the account's calls in flight hold
  refund <transaction_id> [--usd X] --reason R
                                          give back all (or X of) what a call was charged, never more in total;
                                          the same request twice refunds once (--idempotency-key K: name it)
  balance <account>                       show an account's balance
  tx <account> [--limit N]                recent transactions, newest first
  members list <account>                  the account's team: members, roles, keys
  members invite <account> [--role R] [--name N]
                                          a one-time link to join the account as R (member by default)
  oauth list <account>                    apps (MCP hosts) connected to the account over OAuth
  oauth revoke <account> -- <client_id>   disconnect an app: its tokens stop working at once
                                          (client ids may start with "-": put them after --)
  catalog                                 this gateway's price list
  receipt-key                             a new receipt signing key (for TOLLGATE_RECEIPT_SIGNING_KEY)
  server-json [--template]                this gateway's entry for the MCP registry (server.json); --template:
                                          the one the repository ships, its host left as a variable

<account> is an account id (acct_…) or its name. Every command accepts --json and then prints one JSON object
on stdout (errors too: {"ok":false,"error":{"code","message"}}, with a non-zero exit code).
Configuration comes from TOLLGATE_* environment variables, or a .env file in the current directory
(see .env.example); the environment wins over .env. The database is TOLLGATE_DATABASE_URL (PostgreSQL) or the
SQLite file in TOLLGATE_DATA_DIR (default ./data): run operator commands where the gateway runs, or set them.
When the two disagree, --database sqlite|postgres says which one is meant.`;

/** The usage line of a command (and sub-command), prefixed with how to run the CLI. */
export function usageOf(command: string, sub?: string): string | undefined {
  const subs = COMMANDS[command];
  if (!subs) return undefined;
  const line = subs[sub ?? ''] ?? subs[''];
  return line === undefined
    ? Object.values(subs)
        .map((l) => `${ENTRY} ${l}`)
        .join('\n       ')
    : `${ENTRY} ${line}`;
}

/** The command is known (and its sub-command, where it has them), or a usage error with a did-you-mean. */
export function checkCommand(command: string | undefined, sub: string | undefined): void {
  if (!command) throw new UsageError('missing <command>', `${ENTRY} <command> [options] [--json]`);
  const subs = COMMANDS[command];
  if (!subs) {
    throw new UsageError(
      `unknown command "${command}"${didYouMean(command, Object.keys(COMMANDS))}`,
      `${ENTRY} <command> [options] [--json]`,
    );
  }
  if ('' in subs) return;
  if (sub === undefined || !(sub in subs)) {
    const near = sub === undefined ? undefined : nearest(sub, Object.keys(subs));
    throw new UsageError(
      sub === undefined
        ? `${command} needs one of: ${Object.keys(subs).join(', ')}`
        : `unknown: ${command} ${sub}${near ? ` — did you mean ${command} ${near}?` : ''}`,
      usageOf(command),
    );
  }
}
