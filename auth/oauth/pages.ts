import { createHash } from 'node:crypto';
import type { Response } from 'express';

// The sign-in, consent and error pages: server-rendered HTML with no script and no external asset (one inline
// style, allowed by its hash), so they work offline and give an attacker nothing to inject into. Landmarks,
// labels, hints tied to inputs and an alert region for errors keep them usable with a screen reader or keyboard.

const STYLE = `
:root{color-scheme:light dark;--fg:#1b1f24;--muted:#4a525c;--bg:#fff;--card:#f5f6f8;--accent:#0b57d0;--err:#b3261e}
@media (prefers-color-scheme:dark){:root{--fg:#e8eaed;--muted:#bdc1c6;--bg:#15171a;--card:#202327;--accent:#8ab4f8;--err:#f2b8b5}}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header.top{max-width:34rem;margin:0 auto;padding:1rem 1.5rem 0}
header.top .brand{font-weight:700;font-size:1.2rem}
main{max-width:34rem;margin:1rem auto 2rem;padding:1.5rem;background:var(--card);border-radius:12px}
.actions{display:flex;gap:.75rem;flex-wrap:wrap;align-items:center;margin-top:.75rem}
.actions form{margin:0}
.actions button{margin-top:0;min-width:7rem}
@media (max-width:40rem){main{margin:.5rem .5rem 1.5rem;padding:1rem}header.top{padding:.75rem 1rem 0}}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 1rem}
h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
p,ul,dl{margin:0 0 1rem}
.hint{color:var(--muted);font-size:.9rem;margin:.25rem 0 .5rem}
label,legend{font-weight:600}
input[type=password],input[type=text]{width:100%;padding:.6rem;font:inherit;color:inherit;background:var(--bg);border:2px solid var(--muted);border-radius:6px}
fieldset{border:0;padding:0;margin:0 0 1rem}
.choice{display:flex;gap:.5rem;align-items:center;margin:.35rem 0}
.choice input{width:1.2rem;height:1.2rem}
button{font:inherit;font-weight:600;margin-top:.75rem;padding:.6rem 1.2rem;border-radius:6px;border:2px solid var(--accent);cursor:pointer;background:var(--accent);color:var(--bg)}
button.secondary{background:transparent;color:var(--accent)}
.row{display:flex;gap:.75rem;flex-wrap:wrap;align-items:center}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.alert{border-left:4px solid var(--err);padding:.5rem .75rem;margin:0 0 1rem;background:var(--bg)}
.alert strong{color:var(--err)}
dt{font-weight:600}dd{margin:0 0 .5rem}
code{font-size:.9em;word-break:break-all}
.or{text-align:center;color:var(--muted);margin:1rem 0}
`;

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/**
 * Headers for every page: nothing loads but the inline style, nothing frames the page (a consent page in a
 * hidden frame is clickjacking), nothing is cached, and no Referer carries the interaction URL to another site.
 * No form-action directive: browsers apply it to the redirect that ends the flow at the client's redirect URI.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; frame-ancestors 'none'; base-uri 'none'`,
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
};

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} · tollgate</title>
<style>${STYLE}</style>
</head>
<body>
<header class="top"><span class="brand">tollgate</span></header>
<main>
${body}
</main>
</body>
</html>`;
}

type Page = { title: string; body: string };

export function sendPage(res: Response, status: number, page: Page): void {
  res.status(status).set(PAGE_HEADERS).type('html').send(layout(page.title, page.body));
}

function alert(error: string | undefined): string {
  return error
    ? `<div class="alert" role="alert" id="form-error"><strong>Error:</strong> ${escapeHtml(error)}</div>`
    : '';
}

const csrfField = (csrf: string) => `<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">`;

export interface LoginView {
  action: string;
  federatedAction: string | undefined;
  federatedName: string | undefined;
  abortAction: string;
  csrf: string;
  clientName: string;
  /** Set for a client identified by a metadata document: the host it was fetched from (checked, unlike the name). */
  clientHost?: string | undefined;
  error?: string;
}

export function loginPage(v: LoginView): Page {
  const client = escapeHtml(v.clientName);
  const invalid = v.error ? ' aria-invalid="true"' : '';
  const described = v.error ? 'api_key_hint form-error' : 'api_key_hint';
  const federated = v.federatedAction
    ? `<p class="or">or</p>
<form method="post" action="${escapeHtml(v.federatedAction)}">${csrfField(v.csrf)}
<button type="submit" class="secondary">Sign in with ${escapeHtml(v.federatedName ?? 'your identity provider')}</button>
</form>`
    : '';
  return {
    title: 'Sign in',
    body: `<h1>Sign in to connect ${client}</h1>
<p>${client}${fromHost(v.clientHost)} wants to use your tollgate account. Sign in first; next you choose what it may do and spend.</p>
${alert(v.error)}
<form method="post" action="${escapeHtml(v.action)}">${csrfField(v.csrf)}
<label for="api_key">API key</label>
<p class="hint" id="api_key_hint">It starts with tg_sk_. tollgate checks it; ${client} never sees it.</p>
<input id="api_key" name="api_key" type="password" autocomplete="off" spellcheck="false" required aria-describedby="${described}"${invalid}>
<button type="submit">Sign in with API key</button>
</form>
${federated}
<form method="post" action="${escapeHtml(v.abortAction)}">${csrfField(v.csrf)}
<button type="submit" class="secondary">Cancel</button>
</form>`,
  };
}

export interface ConsentView {
  action: string;
  abortAction: string;
  csrf: string;
  clientName: string;
  clientHost?: string | undefined;
  clientId: string;
  redirectOrigin: string;
  accountId: string;
  available: string;
  scopes: ReadonlyArray<{ name: string; description: string }>;
  limitChoices: ReadonlyArray<{ value: string; label: string }>;
  selectedLimit: string;
  customLimit?: string;
  error?: string;
}

export function consentPage(v: ConsentView): Page {
  const client = escapeHtml(v.clientName);
  const scopes = v.scopes
    .map((s) => `<li><strong>${escapeHtml(s.name)}</strong>: ${escapeHtml(s.description)}</li>`)
    .join('\n');
  const choices = v.limitChoices
    .map((c, i) => {
      const checked = c.value === v.selectedLimit ? ' checked' : '';
      return `<div class="choice"><input type="radio" id="limit_${i}" name="daily_limit" value="${escapeHtml(c.value)}"${checked}>
<label for="limit_${i}">${escapeHtml(c.label)}</label></div>`;
    })
    .join('\n');
  const customChecked = v.selectedLimit === 'custom' ? ' checked' : '';
  const invalid = v.error ? ' aria-invalid="true"' : '';
  return {
    title: 'Allow access',
    body: `<h1>Allow ${client} to use your tollgate account?</h1>
${alert(v.error)}
<dl>
<dt>Application</dt><dd>${client} <span class="hint">(client id <code>${escapeHtml(v.clientId)}</code>)</span></dd>
${v.clientHost ? `<dt>Published by</dt><dd><strong>${escapeHtml(v.clientHost)}</strong> <span class="hint">(the site that describes this application; its name is its own claim)</span></dd>` : ''}
<dt>Returns you to</dt><dd><code>${escapeHtml(v.redirectOrigin)}</code></dd>
<dt>Your account</dt><dd><code>${escapeHtml(v.accountId)}</code>, ${escapeHtml(v.available)} available</dd>
</dl>
<h2>It will be able to</h2>
<ul>
${scopes}
</ul>
<form method="post" action="${escapeHtml(v.action)}" id="allow-form">${csrfField(v.csrf)}
<fieldset aria-describedby="limit_hint">
<legend>What ${client} may spend</legend>
<p class="hint" id="limit_hint">Each paid tool call is charged to your balance. Past the daily limit its calls are refused until 00:00 UTC.</p>
${choices}
<div class="choice"><input type="radio" id="limit_custom" name="daily_limit" value="custom"${customChecked}>
<label for="limit_custom">Another daily limit (USD)</label></div>
<label for="custom_limit_usd" class="hint">Amount in USD per day, e.g. 2.50</label>
<input type="text" id="custom_limit_usd" name="custom_limit_usd" inputmode="decimal" autocomplete="off" value="${escapeHtml(v.customLimit ?? '')}"${invalid}>
</fieldset>
</form>
<div class="actions">
<button type="submit" form="allow-form">Allow</button>
<form method="post" action="${escapeHtml(v.abortAction)}">${csrfField(v.csrf)}<button type="submit" class="secondary">Deny</button></form>
</div>`,
  };
}

/** " (from example.com)" after a metadata-document client's name: the name is self-asserted, the host is not. */
function fromHost(host: string | undefined): string {
  return host ? ` (from <strong>${escapeHtml(host)}</strong>)` : '';
}

export function messagePage(heading: string, message: string): Page {
  return { title: heading, body: `<h1>${escapeHtml(heading)}</h1>\n<p>${escapeHtml(message)}</p>` };
}

/** The page oidc-provider renders for errors it cannot send back to a client (e.g. an unregistered redirect URI). */
export function errorHtml(error: string, description: string | undefined): string {
  // An outage (auth/oauth/outage.ts) passes: the request itself is fine and can be sent again.
  const advice =
    error === 'temporarily_unavailable'
      ? 'Reload this page in a few seconds, or go back to the application and connect again.'
      : 'Go back to the application and connect again. If this keeps happening, its registration with tollgate is broken.';
  const body = `<h1>This sign-in request cannot continue</h1>
<div class="alert" role="alert"><strong>${escapeHtml(error)}</strong>${description ? `: ${escapeHtml(description)}` : ''}</div>
<p>${advice}</p>`;
  return layout('Error', body);
}
