import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import type { MailSender } from '../upstreams/smtp-mail.js';
import { SsrfRefusal, type WebhookPoster } from '../upstreams/webhook-post.js';
import { type AlertEvent, describe } from './events.js';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signatureHeader } from './sign.js';
import type { AlertSettings, AlertStore, AttemptResult, DeliveryRow } from './store.js';

// The outbox's sender, in the background of every replica. A pass takes the deliveries that are due, claims each
// (exactly one replica gets an attempt), sends it and records the outcome: delivered on a 2xx (webhook) or the
// SMTP server's acceptance; otherwise retried with exponential backoff — 30 s after the first attempt, doubling,
// at most 2 h apart — until MAX_ATTEMPTS, then given up (`failed`, in the log and on the dashboard). A webhook
// is signed at each attempt with the account's current secret and sent to its current URL; a 3xx is a failure
// (redirects are never followed). The body, and the event id in it, is the same every time.

export const MAX_ATTEMPTS = 10;
const FIRST_RETRY_MS = 30_000;
const MAX_RETRY_MS = 2 * 3_600_000;
/** An attempt is its replica's for this long; one that died with its process is taken over after it. */
export const LEASE_MS = 60_000;
const WEBHOOK_TIMEOUT_MS = 10_000;
const BATCH = 20;

/** How long after the `attempts`-th failed attempt the next one is made. */
export function retryDelayMs(attempts: number): number {
  return Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1));
}

export interface DeliveryDeps {
  store: AlertStore;
  clock: Clock;
  log: Logger;
  /** This replica's id: the owner of its leases. */
  replica: string;
  poster: WebhookPoster;
  mail: { sender: MailSender; from: () => string } | undefined;
  settings(accountId: string): Promise<AlertSettings | undefined>;
  dashboardUrl(): string;
}

type Outcome = Omit<AttemptResult, 'retryAt'>;
/** An attempt that reached no one (`gone: …`: nothing to send to any more, given up at once). */
const failed = (error: string): Outcome => ({ delivered: false, target: null, status: null, error });

export class Deliveries {
  private running: Promise<void> | undefined;
  /** Aborted when the gateway stops: attempts in flight are dropped, their leases left to run out. */
  private readonly stopping = new AbortController();

  constructor(private readonly d: DeliveryDeps) {}

  /** Sends what is due; a pass still running is joined rather than doubled. */
  pass(): Promise<void> {
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async run(): Promise<void> {
    if (this.stopping.signal.aborted) return;
    const now = this.d.clock.now();
    const due = await this.d.store.due(now, BATCH);
    await Promise.all(
      due.map(async ({ event_id, channel }) => {
        const row = await this.d.store.claim(event_id, channel, this.d.replica, now, LEASE_MS);
        if (row) await this.attempt(row);
      }),
    );
  }

  /** Stops sending: what is in flight is abandoned unrecorded (another replica, or the next start, makes it). */
  stop(): void {
    this.stopping.abort();
  }

  private async attempt(row: DeliveryRow): Promise<void> {
    let out: Outcome;
    try {
      out = row.channel === 'webhook' ? await this.webhook(row) : await this.email(row);
    } catch (err) {
      out = failed((err as Error).message);
    }
    if (this.stopping.signal.aborted && !out.delivered) return;
    const now = this.d.clock.now();
    const giveUp = !out.delivered && (row.attempts >= MAX_ATTEMPTS || out.error?.startsWith('gone:'));
    const result: AttemptResult = {
      ...out,
      error: out.error?.replace(/^gone: /, '') ?? null,
      retryAt: out.delivered || giveUp ? undefined : now + retryDelayMs(row.attempts),
    };
    const recorded = await this.d.store.finish(row, this.d.replica, result, now);
    const fields = {
      event: row.event_id,
      type: row.type,
      channel: row.channel,
      account: row.account_id,
      attempts: row.attempts,
      status: out.status,
    };
    if (!recorded)
      this.d.log.warn(fields, 'alerts: an attempt outlived its lease; its outcome is not recorded');
    else if (out.delivered) this.d.log.info(fields, 'alert delivered');
    else if (giveUp) this.d.log.warn({ ...fields, error: result.error }, 'alert given up');
    else this.d.log.info({ ...fields, error: result.error }, 'alert delivery failed; will retry');
  }

  private async webhook(row: DeliveryRow): Promise<Outcome> {
    const s = await this.d.settings(row.account_id);
    if (!s?.webhook_url || !s.webhook_secret) return failed('gone: the webhook was removed');
    const target = s.webhook_url;
    const headers = {
      [SIGNATURE_HEADER]: signatureHeader(
        s.webhook_secret,
        row.payload,
        Math.floor(this.d.clock.now() / 1000),
      ),
      [EVENT_ID_HEADER]: row.event_id,
    };
    try {
      const { status } = await this.d.poster.post(
        target,
        row.payload,
        headers,
        WEBHOOK_TIMEOUT_MS,
        this.stopping.signal,
      );
      const ok = status >= 200 && status < 300;
      const error = ok
        ? null
        : status >= 300 && status < 400
          ? `answered ${status} (redirects are not followed)`
          : `answered ${status}`;
      return { delivered: ok, target, status, error };
    } catch (err) {
      const error =
        err instanceof SsrfRefusal ? `refused by the SSRF guard: ${err.reason}` : (err as Error).message;
      return { delivered: false, target, status: null, error };
    }
  }

  private async email(row: DeliveryRow): Promise<Outcome> {
    const s = await this.d.settings(row.account_id);
    if (!this.d.mail) return failed('gone: e-mail is off on this gateway');
    if (!s || s.emails.length === 0) return failed('gone: no e-mail address is set');
    const target = s.emails.join(', ');
    const { subject, text } = describe(JSON.parse(row.payload) as AlertEvent, this.d.dashboardUrl());
    try {
      await this.d.mail.sender.send({ from: this.d.mail.from(), to: s.emails, subject, text });
      return { delivered: true, target, status: 250, error: null };
    } catch (err) {
      const code = (err as { responseCode?: number }).responseCode ?? null;
      return { delivered: false, target, status: code, error: (err as Error).message.slice(0, 300) };
    }
  }
}
