import { GatewayError } from '../errors.js';
import { parseUsdToMicros } from '../lib/money.js';
import { ALERT_EVENT_TYPES } from './events.js';

// What an account holder may set (the dashboard's form, /account/alerts): every field checked, and a refusal is
// a 400 naming the field. The webhook URL's own check (the SSRF guard) is the caller's: it needs the network.

export interface SettingsForm {
  webhook_url?: unknown;
  emails?: unknown;
  balance_threshold_usd?: unknown;
  events?: unknown;
}

export interface ParsedSettings {
  webhookUrl: string | null;
  emails: string[];
  thresholdMicros: number | null;
  events: string[];
}

export const MAX_EMAILS = 5;
const EMAIL =
  /^[^\s@,;<>"()[\]\\]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)+$/;
const USD = /^\$?(\d{1,6}(?:\.\d{1,2})?)$/;

export function invalidField(field: string, message: string): GatewayError {
  return new GatewayError('invalid_input', `${field}: ${message}`, {
    details: { issues: [{ path: field, message }] },
  });
}

const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

export function parseSettings(form: SettingsForm, emailEnabled: boolean): ParsedSettings {
  const url = text(form.webhook_url);
  if (url.length > 2048) throw invalidField('webhook_url', 'longer than 2048 characters');

  const emails = [
    ...new Set(
      text(form.emails)
        .split(/[\s,;]+/)
        .filter(Boolean),
    ),
  ];
  if (emails.length > 0 && !emailEnabled) {
    throw invalidField(
      'emails',
      'e-mail alerts are not enabled on this gateway (its operator sets TOLLGATE_SMTP_URL)',
    );
  }
  if (emails.length > MAX_EMAILS) throw invalidField('emails', `at most ${MAX_EMAILS} addresses`);
  const bad = emails.find((e) => e.length > 254 || !EMAIL.test(e));
  if (bad) throw invalidField('emails', `${bad} is not an e-mail address`);

  const raw = text(form.balance_threshold_usd);
  let thresholdMicros: number | null = null;
  if (raw) {
    const m = USD.exec(raw);
    if (!m) throw invalidField('balance_threshold_usd', 'an amount in USD, such as 5 or 2.50');
    thresholdMicros = parseUsdToMicros(m[1] as string);
    if (thresholdMicros <= 0) throw invalidField('balance_threshold_usd', 'above 0 (or empty for none)');
  }

  const chosen = Array.isArray(form.events) ? form.events : form.events === undefined ? [] : [form.events];
  const events = chosen.map(String);
  const unknown = events.find((e) => !(ALERT_EVENT_TYPES as readonly string[]).includes(e));
  if (unknown) throw invalidField('events', `unknown event ${unknown.slice(0, 60)}`);
  return { webhookUrl: url || null, emails, thresholdMicros, events: [...new Set(events)] };
}
