import type { Migration } from './types.js';

// Team accounts (version 110, in the accounts range 100–199): members and their roles, one-time invitations, which
// member each API key belongs to, the account's event log, and the member a dashboard session is signed in as.
// src/account/team-store.ts and src/account/audit.ts.

export const TEAM_MIGRATIONS: readonly Migration[] = [
  {
    version: 110,
    name: 'team accounts: members, invitations, key owners, the event log',
    up: `
    CREATE TABLE IF NOT EXISTS account_members (
      id          text PRIMARY KEY,
      account_id  text NOT NULL,
      name        text NOT NULL,
      role        text NOT NULL CHECK (role IN ('owner', 'billing', 'member')),
      -- The member who invited this one (NULL: the account's first owner, or the operator's invitation).
      invited_by  text,
      created_at  bigint NOT NULL,
      removed_at  bigint,
      removed_by  text
    );
    CREATE INDEX IF NOT EXISTS account_members_account ON account_members(account_id, created_at);
    -- An invitation is a one-time link: only the SHA-256 of its token is kept; accepted once, before it expires.
    CREATE TABLE IF NOT EXISTS account_invites (
      id          text PRIMARY KEY,
      token_hash  text NOT NULL UNIQUE,
      account_id  text NOT NULL,
      role        text NOT NULL CHECK (role IN ('owner', 'billing', 'member')),
      name        text,
      created_by  text,
      created_at  bigint NOT NULL,
      expires_at  bigint NOT NULL,
      accepted_at bigint,
      member_id   text,
      revoked_at  bigint
    );
    CREATE INDEX IF NOT EXISTS account_invites_account ON account_invites(account_id, created_at);
    -- The member an API key belongs to. A key without a row (made by the operator, or before teams) belongs to
    -- the account's first owner.
    CREATE TABLE IF NOT EXISTS account_member_keys (
      key_id     text PRIMARY KEY,
      account_id text NOT NULL,
      member_id  text NOT NULL,
      created_at bigint NOT NULL
    );
    CREATE INDEX IF NOT EXISTS account_member_keys_member ON account_member_keys(member_id);
    CREATE INDEX IF NOT EXISTS account_member_keys_account ON account_member_keys(account_id);
    -- Who did what to the account (invited, joined, removed, changed a role or a limit, made or revoked a key).
    CREATE TABLE IF NOT EXISTS account_events (
      id           text PRIMARY KEY,
      account_id   text NOT NULL,
      created_at   bigint NOT NULL,
      actor_id     text,
      actor_name   text NOT NULL,
      action       text NOT NULL,
      subject_id   text,
      subject_name text,
      detail       text
    );
    CREATE INDEX IF NOT EXISTS account_events_account ON account_events(account_id, created_at DESC);
    -- The member a dashboard session acts as (NULL: a session from before teams, resolved by its key).
    ALTER TABLE account_sessions ADD COLUMN member_id text;
    CREATE INDEX IF NOT EXISTS account_sessions_member ON account_sessions(member_id) WHERE member_id IS NOT NULL;
    `,
  },
];
