import { isIP } from 'node:net';
import type { Logger } from 'pino';
import type { StateDb } from '../backend.js';
import type { Config } from '../config/index.js';
import { isDatabaseUnavailable } from '../errors.js';
import type { LedgerRecords } from '../ledger/types.js';
import type { Clock } from '../lib/clock.js';
import type { Resolver } from '../upstreams/ssrf-guard.js';
import { createWebhookPoster } from '../upstreams/webhook-post.js';
import { type AppLimit, allCaps, appCaps, type CapSource } from './caps.js';
import { Deliveries } from './delivery.js';
import { Evaluator } from './evaluator.js';
import { type AlertEventType, money, newEvent } from './events.js';
import { type ParsedSettings, parseSettings, type SettingsForm } from './settings.js';
import { newSigningSecret } from './sign.js';
import type { AlertSignals } from './signals.js';
import { type AlertSettings, type Channel, type DeliveryRow, openAlertStore } from './store.js';

// Alerts (docs/operator.md "Alerts"; docs/decisions.md "Alerts"): per account, a signed webhook and e-mail for a
// balance below a threshold, a key or app at 80 % and 100 % of a cap, a credit line frozen or restored, a top-up
// or settlement that succeeded or failed. Each fires once per crossing (./evaluator.ts), is kept in a durable
// outbox and sent in the background with retries (./delivery.ts); nothing here is on a call's path but the
// lifecycle's O(1) `touched`.

export interface AlertsDeps {
  state: StateDb;
  ledger: LedgerRecords;
  /** The lifecycle: it reports money movements to the alerts from now on. */
  money: { setAlerts(signals: AlertSignals): void };
  clock: Clock;
  log: Logger;
  /** The account's OAuth apps and their daily limits (watched here; API keys' caps join through `caps`). */
  apps(accountId: string): Promise<AppLimit[]>;
  caps?: CapSource | undefined;
  /** The database's health (src/run/db-health.ts): a pass that fails because it does not answer is its outage. */
  health?: { report(err: unknown): void } | undefined;
  /** Tests resolve webhook host names offline. */
  resolve?: Resolver | undefined;
}

export interface Alerts {
  /** What the lifecycle and billing report to. */
  signals: AlertSignals;
  emailEnabled: boolean;
  settings(accountId: string): Promise<AlertSettings | undefined>;
  /**
   * Saves the dashboard's form (a 400 naming the field when a value is refused). Returns the webhook's signing
   * secret when one was just made (shown once).
   */
  save(accountId: string, form: SettingsForm): Promise<{ secret?: string }>;
  /** A new signing secret for the webhook (the old one stops at once); shown once. */
  rotateSecret(accountId: string): Promise<string | undefined>;
  /** Queues an `alert.test` event to every channel set. */
  sendTest(accountId: string): Promise<boolean>;
  deliveries(accountId: string, limit: number): Promise<DeliveryRow[]>;
  /** One background pass now: evaluate touched accounts, send what is due (tests drive it; a timer runs it). */
  tick(): Promise<void>;
  close(): Promise<void>;
}

const TICK_MS = 1_000;
const REFRESH_MS = 5_000;
const PURGE_MS = 3_600_000;
/** Finished deliveries stay in the dashboard's log this long. */
const KEEP_MS = 30 * 86_400_000;

/** Opens the alerts, attaches them to the lifecycle and starts their background passes. */
export async function openAlerts(config: Config, deps: AlertsDeps): Promise<Alerts> {
  const d = { ...deps, log: deps.log.child({ component: 'alerts' }), publicUrl: () => config.publicUrl };
  const store = openAlertStore(d.state);
  const poster = createWebhookPoster({ allow: config.fetchAllow, resolve: d.resolve });
  const smtp = config.alerts.smtp;
  const sender = smtp && (await import('../upstreams/smtp-mail.js')).createMailSender(smtp.url);
  const mail = sender && {
    sender: await sender,
    from: () => smtp?.from ?? `tollgate <alerts@${mailHost(d.publicUrl())}>`,
  };
  const channels = (s: AlertSettings): Channel[] => [
    ...(s.webhook_url && s.webhook_secret ? (['webhook'] as const) : []),
    ...(mail && s.emails.length > 0 ? (['email'] as const) : []),
  ];
  const apps = appCaps({ apps: d.apps, spent: (id, scope, window) => d.ledger.capSpend(id, scope, window) });
  const caps = d.caps ? allCaps(apps, d.caps) : apps;
  // Background failures, at most one line a minute: an outage of the database is logged once by the gateway.
  let lastWarn = 0;
  let closed = false;
  const warn = (err: unknown, fields: Record<string, unknown>, msg: string) => {
    // A database that does not answer is an outage, logged once by the health watch, not by every pass.
    if (isDatabaseUnavailable(err)) return void d.health?.report(err);
    if (closed || Date.now() - lastWarn < 60_000) return;
    lastWarn = Date.now();
    d.log.warn({ err, ...fields }, msg);
  };
  const evaluator = new Evaluator({
    ...{ store, ledger: d.ledger, caps, clock: d.clock, channels },
    failed: (err, account) => warn(err, { account }, 'alerts: could not look at an account; will again'),
  });
  const deliveries = new Deliveries({
    store,
    clock: d.clock,
    log: d.log,
    replica: d.state.replicaId,
    poster,
    mail,
    settings: (id) => store.settings(id),
    dashboardUrl: () => `${d.publicUrl()}/account/alerts`,
  });

  /** An event that happens once (a top-up, a settlement), queued if the account wants it; never rejects. */
  async function happened(
    type: AlertEventType,
    accountId: string,
    data: Record<string, unknown>,
    onceKey: string,
  ): Promise<void> {
    try {
      const s = await store.settings(accountId);
      if (!s?.events.includes(type)) return;
      const now = d.clock.now();
      await store.enqueue(newEvent(type, accountId, data, now, onceKey), channels(s), now);
    } catch (err) {
      d.log.error({ err, account: accountId, type }, 'alerts: could not queue an alert');
    }
  }

  const signals: AlertSignals = {
    touched: (id) => evaluator.touched(id),
    capRefused: (id, scope) => evaluator.capRefused(id, scope),
    async cardMoney(req, r) {
      evaluator.touched(req.accountId);
      if (req.kind === 'topup' && r.kind === 'recorded') {
        await happened(
          'topup.succeeded',
          req.accountId,
          { ...money('amount', r.movedMicros), reference: req.externalRef },
          req.externalRef,
        );
      }
    },
    async settlementFinished(movementId, outcome, r) {
      if (r.kind === 'already') return;
      const m = await d.ledger.getMovement(movementId).catch(() => undefined);
      if (!m) return;
      evaluator.touched(m.account_id);
      if (r.kind === 'settled') {
        await happened(
          'settlement.succeeded',
          m.account_id,
          { ...money('amount', r.micros), settlement: movementId },
          movementId,
        );
      } else {
        const reason = outcome.ok ? 'the charge did not go through' : outcome.reason;
        await happened('settlement.failed', m.account_id, { reason, settlement: movementId }, movementId);
      }
    },
    topUpFailed: (accountId, reference, micros, reason) =>
      happened(
        'topup.failed',
        accountId,
        { reference, reason, ...(micros === null ? {} : money('amount', micros)) },
        reference,
      ),
  };

  async function save(accountId: string, form: SettingsForm): Promise<{ secret?: string }> {
    const p: ParsedSettings = parseSettings(form, mail !== undefined);
    const webhookUrl = p.webhookUrl && (await poster.check(p.webhookUrl, 'webhook_url'));
    const before = await store.settings(accountId);
    const now = d.clock.now();
    const secret = webhookUrl ? (before?.webhook_secret ?? newSigningSecret()) : null;
    await store.putSettings({
      account_id: accountId,
      webhook_url: webhookUrl,
      webhook_secret: secret,
      emails: p.emails,
      balance_threshold_micros: p.thresholdMicros,
      events: p.events,
      created_at: before?.created_at ?? now,
      updated_at: now,
    });
    if (before?.balance_threshold_micros !== p.thresholdMicros) await store.dropMarks(accountId, 'balance:');
    // The states as they are now, so the next change is a crossing (and not the first look at the account).
    evaluator.watch(accountId);
    await evaluator.evaluate(accountId).catch((err: unknown) => {
      warn(err, { account: accountId }, 'alerts: could not look at an account; will again');
      evaluator.touched(accountId);
    });
    return secret && secret !== before?.webhook_secret ? { secret } : {};
  }

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let lastRefresh = 0;
  let lastPurge = 0;
  async function tick(): Promise<void> {
    const now = Date.now();
    if (now - lastRefresh >= REFRESH_MS) {
      await evaluator.refresh(lastRefresh === 0);
      lastRefresh = now;
    }
    await evaluator.pass();
    await deliveries.pass();
    if (now - lastPurge >= PURGE_MS) {
      lastPurge = now;
      await store.purge(d.clock.now() - KEEP_MS);
    }
  }
  const guarded = () => {
    running ??= tick()
      .catch((err: unknown) => warn(err, {}, 'alerts: a background pass failed; will again'))
      .finally(() => {
        running = undefined;
      });
    return running;
  };

  d.money.setAlerts(signals);
  const alerts: Alerts = {
    signals,
    emailEnabled: mail !== undefined,
    settings: (id) => store.settings(id),
    save,
    async rotateSecret(accountId) {
      const s = await store.settings(accountId);
      if (!s?.webhook_url) return undefined;
      const secret = newSigningSecret();
      await store.putSettings({ ...s, webhook_secret: secret, updated_at: d.clock.now() });
      return secret;
    },
    async sendTest(accountId) {
      const s = await store.settings(accountId);
      const to = s ? channels(s) : [];
      if (to.length === 0) return false;
      const now = d.clock.now();
      await store.enqueue(newEvent('alert.test', accountId, {}, now), to, now);
      return true;
    },
    deliveries: (id, limit) => store.recent(id, limit),
    tick: guarded,
    async close() {
      closed = true;
      if (timer) clearInterval(timer);
      // A webhook in flight is abandoned at once; an e-mail gets a moment (its lease lets another send it).
      deliveries.stop();
      await Promise.race([running, new Promise((r) => setTimeout(r, 1_000).unref())]);
      await poster.close();
      mail?.sender.close();
    },
  };
  // Leases this replica held before a restart are void: those attempts died with it.
  await store.releaseLeases(d.state.replicaId);
  timer = setInterval(guarded, TICK_MS);
  timer.unref();
  return alerts;
}

/** The From's domain by default: the public URL's host (an address literal is no mail domain). */
function mailHost(publicUrl: string): string {
  const host = new URL(publicUrl).hostname.replace(/^\[|\]$/g, '');
  return isIP(host) ? 'localhost' : host;
}

export { keyCaps } from './caps.js';
export { ALERT_EVENT_TYPES, EVENT_LABELS } from './events.js';
export type { AlertSignals } from './signals.js';
export type { AlertSettings, DeliveryRow } from './store.js';
