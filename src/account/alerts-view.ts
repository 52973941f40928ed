import { ALERT_EVENT_TYPES, type AlertSettings, type DeliveryRow, EVENT_LABELS } from '../alerts/index.js';
import { alert, escapeHtml, isoMinute, notice, postForm, secretBox } from './html.js';

// The alerts page (/account/alerts): where alerts go (a webhook, e-mail addresses), when (a balance threshold,
// which events), the webhook's signing secret (shown once, rotatable), a test event, and the delivery log.

export interface AlertsView {
  csrf: string;
  settings: AlertSettings | undefined;
  /** What the form showed when it was refused (so nothing typed is lost). */
  form?: { webhook_url: string; emails: string; balance_threshold_usd: string; events: string[] } | undefined;
  emailEnabled: boolean;
  deliveries: DeliveryRow[];
  now: number;
  secret?: string | undefined;
  flash?: string | undefined;
  error?: { field: string | undefined; message: string } | undefined;
}

const usdField = (micros: number | null) =>
  micros === null ? '' : (micros / 1_000_000).toFixed(micros % 10_000 === 0 ? 2 : 6);

function formValues(v: AlertsView) {
  if (v.form) return v.form;
  const s = v.settings;
  return {
    webhook_url: s?.webhook_url ?? '',
    emails: s?.emails.join(', ') ?? '',
    balance_threshold_usd: usdField(s?.balance_threshold_micros ?? null),
    // A first visit offers every event.
    events: s ? s.events : [...ALERT_EVENT_TYPES],
  };
}

function settingsSection(v: AlertsView): string {
  const f = formValues(v);
  const invalid = (field: string) =>
    v.error?.field === field ? ' aria-invalid="true" aria-describedby="form-error"' : '';
  const email = v.emailEnabled
    ? `<div><label for="alert-emails">E-mail addresses</label><input type="text" id="alert-emails" name="emails" class="wide" value="${escapeHtml(f.emails)}" autocomplete="email"${invalid('emails')}>
<p class="hint">Up to 5, separated by commas.</p></div>`
    : '<p class="hint" id="alert-emails-off">E-mail alerts are not enabled on this gateway (its operator sets TOLLGATE_SMTP_URL); alerts go to the webhook.</p>';
  const boxes = ALERT_EVENT_TYPES.map(
    (t, i) =>
      `<div><input type="checkbox" id="ev-${i}" name="events" value="${t}"${f.events.includes(t) ? ' checked' : ''}> <label for="ev-${i}">${escapeHtml(EVENT_LABELS[t])}</label> <code class="hint">${t}</code></div>`,
  ).join('\n');
  return `<section aria-labelledby="alert-settings-h" id="alert-settings">
<h2 id="alert-settings-h">Where and when</h2>
${postForm(
  '/account/alerts',
  v.csrf,
  `<div><label for="alert-webhook">Webhook URL</label><input type="text" id="alert-webhook" name="webhook_url" class="wide" inputmode="url" value="${escapeHtml(f.webhook_url)}" placeholder="https://example.com/tollgate-alerts"${invalid('webhook_url')}>
<p class="hint">Each alert is POSTed as JSON, signed in the <code>Tollgate-Signature</code> header; retried with backoff until your server answers 2xx. Leave empty for none.</p></div>
${email}
<div class="row"><div><label for="alert-threshold">Balance threshold (USD)</label><input type="text" id="alert-threshold" name="balance_threshold_usd" inputmode="decimal" size="8" value="${escapeHtml(f.balance_threshold_usd)}"${invalid('balance_threshold_usd')}></div></div>
<p class="hint">Alert once when what you can spend falls below it; again only after it is back above (a top-up). Empty: none.</p>
<fieldset${invalid('events')}><legend>Events</legend>
${boxes}
</fieldset>
<p><button type="submit">Save alert settings</button></p>`,
)}
</section>`;
}

function webhookSection(v: AlertsView): string {
  const s = v.settings;
  const shown = v.secret
    ? `<div class="notice" role="status"><p><strong>Your webhook signing secret.</strong> It is shown only this once: store it where your receiver checks signatures.</p>
${secretBox('webhook-secret', v.secret, 'Copy the signing secret')}</div>`
    : '';
  const secretState = s?.webhook_url
    ? `<p id="secret-state">A signing secret is set for <code>${escapeHtml(s.webhook_url)}</code>.</p>`
    : '<p id="secret-state">No webhook is set: a signing secret is made (and shown once) when you save one.</p>';
  const rotate = s?.webhook_url
    ? postForm(
        '/account/alerts/rotate',
        v.csrf,
        '<button type="submit" class="secondary">Rotate the signing secret</button>',
      )
    : '';
  const test =
    s && (s.webhook_url || (v.emailEnabled && s.emails.length > 0))
      ? postForm(
          '/account/alerts/test',
          v.csrf,
          '<button type="submit" class="secondary">Send a test alert</button>',
        )
      : '';
  return `<section aria-labelledby="alert-secret-h" id="alert-secret">
<h2 id="alert-secret-h">Webhook signature</h2>
${shown}${secretState}
<div class="row">${rotate}${test}</div>
</section>`;
}

function deliverySection(v: AlertsView): string {
  const rows = v.deliveries
    .map((r) => {
      const next =
        r.status === 'pending' ? (r.next_attempt_at <= v.now ? 'now' : isoMinute(r.next_attempt_at)) : '';
      const error = r.last_error ? `<br><span class="hint">${escapeHtml(r.last_error)}</span>` : '';
      return `<tr data-event="${escapeHtml(r.event_id)}" data-channel="${r.channel}" data-status="${r.status}" data-attempts="${r.attempts}"><td class="meta">${isoMinute(r.created_at)}</td><td class="lead">${escapeHtml(r.type)}<br><code class="hint">${escapeHtml(r.event_id)}</code></td><td class="meta">${r.channel}</td><td class="meta">${escapeHtml(r.status)}${error}</td><td class="num">${r.attempts}</td><td class="meta" data-response="${r.last_status ?? ''}">${r.last_status === null ? '' : `${r.channel === 'email' ? 'SMTP' : 'HTTP'} ${r.last_status}`}</td><td class="meta">${next}</td><td class="wide"><code>${escapeHtml(r.target ?? '')}</code></td></tr>`;
    })
    .join('');
  return `<section aria-labelledby="deliveries-h" id="deliveries">
<h2 id="deliveries-h">Delivery log</h2>
<div class="scroll"><table id="deliveries-table" class="cards"><caption>Recent alerts, newest first, up to 50</caption>
<thead><tr><th scope="col">When (UTC)</th><th scope="col">Event</th><th scope="col">Channel</th><th scope="col">Status</th><th scope="col" class="num">Attempts</th><th scope="col" class="num">Response</th><th scope="col">Next attempt (UTC)</th><th scope="col">To</th></tr></thead>
<tbody>${rows || '<tr><td colspan="8">No alerts sent yet.</td></tr>'}</tbody></table></div>
</section>`;
}

export function alertsBody(v: AlertsView): string {
  return `<h1>Alerts</h1>
<nav class="inline" aria-label="Sections"><a href="/account">Back to your account</a><a href="#alert-settings">Where and when</a><a href="#alert-secret">Webhook signature</a><a href="#deliveries">Delivery log</a></nav>
${alert(v.error?.message)}${notice(v.flash)}
${settingsSection(v)}
${webhookSection(v)}
${deliverySection(v)}`;
}
