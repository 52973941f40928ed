import type { Migration } from './types.js';

// Alerts (src/alerts): each account's settings, the state of each threshold it watches (so that an alert fires
// once per crossing, whichever replica sees it, across restarts), and the outbox of deliveries, retried with
// backoff until delivered or given up. Both dialects; versions 330–339.

export const ALERT_MIGRATIONS: readonly Migration[] = [
  {
    version: 330,
    name: 'alerts: settings, crossing marks, delivery outbox',
    up: `
      CREATE TABLE IF NOT EXISTS alert_settings (
        account_id               text PRIMARY KEY,
        webhook_url              text,
        webhook_secret           text,           -- signs every delivery (HMAC-SHA256); shown once to its holder
        emails                   text NOT NULL DEFAULT '',  -- comma-separated
        balance_threshold_micros bigint,
        events                   text NOT NULL,  -- comma-separated event types
        created_at               bigint NOT NULL,
        updated_at               bigint NOT NULL
      );
      -- The last state seen of each watched threshold (balance:<threshold>, line, cap:<kind>:<id>:<window>:<level>):
      -- an alert is queued in the same transaction that changes it, so it fires once per change.
      CREATE TABLE IF NOT EXISTS alert_marks (
        account_id text NOT NULL,
        mark       text NOT NULL,
        value      text NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (account_id, mark)
      );
      CREATE TABLE IF NOT EXISTS alert_outbox (
        event_id        text NOT NULL,
        channel         text NOT NULL CHECK (channel IN ('webhook', 'email')),
        account_id      text NOT NULL,
        type            text NOT NULL,
        payload         text NOT NULL,   -- the event as JSON: the exact body every attempt sends
        target          text,            -- where the last attempt went (a URL, addresses)
        status          text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts        integer NOT NULL DEFAULT 0,
        next_attempt_at bigint NOT NULL,
        lease_owner     text,            -- the replica sending it now; another takes over once lease_until passes
        lease_until     bigint,
        last_status     integer,         -- the receiver's HTTP status, or the SMTP reply code
        last_error      text,
        created_at      bigint NOT NULL,
        updated_at      bigint NOT NULL,
        PRIMARY KEY (event_id, channel)
      );
      CREATE INDEX IF NOT EXISTS alert_outbox_due ON alert_outbox (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX IF NOT EXISTS alert_outbox_account ON alert_outbox (account_id, created_at DESC);
    `,
  },
];
