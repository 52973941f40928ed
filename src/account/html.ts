import { createHash } from 'node:crypto';
import type { Response } from 'express';
import { escapeHtml } from '../../auth/oauth/pages.js';
import { formatUsd } from '../lib/money.js';

// The people-facing pages' frame: server-rendered HTML and no external asset (one stylesheet and one small script,
// each allowed by its hash; the chart is inline SVG styled by attributes), so there is no build step for the
// operator and nothing for an attacker to inject into. The script only copies a shown key to the clipboard; every
// page works without it. Landmarks, headings, labelled controls, table captions and an alert region keep it
// usable with a screen reader or a keyboard. Below 40rem (a phone) tables become one compact card per row and the
// usage chart is drawn at the phone's size (docs/decisions.md "Pages on a phone").

export { escapeHtml };

const STYLE = `
:root{color-scheme:light dark;--fg:#1b1f24;--muted:#4a525c;--bg:#fff;--card:#f5f6f8;--line:#d0d4da;--accent:#0b57d0;--err:#b3261e;--ok:#146c2e}
@media (prefers-color-scheme:dark){:root{--fg:#e8eaed;--muted:#bdc1c6;--bg:#15171a;--card:#202327;--line:#3c4043;--accent:#8ab4f8;--err:#f2b8b5;--ok:#6dd58c}}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header.top{display:flex;justify-content:space-between;align-items:center;gap:1rem;flex-wrap:wrap;max-width:72rem;margin:0 auto;padding:1rem 1.5rem}
header.top a.brand{font-weight:700;font-size:1.2rem;color:var(--fg);text-decoration:none}
main{max-width:72rem;margin:0 auto 3rem;padding:0 1.5rem}
main.narrow{max-width:36rem}
section{background:var(--card);border-radius:12px;padding:1.25rem 1.5rem;margin:0 0 1.25rem}
h1{font-size:1.6rem;line-height:1.25;margin:0 0 1rem}
h2{font-size:1.2rem;margin:0 0 .75rem}
p,ul,dl{margin:0 0 1rem}
a{color:var(--accent)}
.hint{color:var(--muted);font-size:.9rem;margin:.25rem 0 .5rem}
label,legend{font-weight:600}
input[type=password],input[type=text],input[type=date],input[type=number],select{padding:.5rem;font:inherit;color:inherit;background:var(--bg);border:2px solid var(--muted);border-radius:6px}
input.wide{width:100%}
fieldset{border:0;padding:0;margin:0}
button{font:inherit;font-weight:600;padding:.5rem 1rem;border-radius:6px;border:2px solid var(--accent);cursor:pointer;background:var(--accent);color:var(--bg)}
button.secondary,a.button.secondary{background:transparent;color:var(--accent)}
button.danger{background:transparent;color:var(--err);border-color:var(--err)}
a.button{display:inline-block;font-weight:600;padding:.5rem 1rem;border-radius:6px;border:2px solid var(--accent);background:var(--accent);color:var(--bg);text-decoration:none}
.row{display:flex;gap:.75rem;flex-wrap:wrap;align-items:flex-end}
.row>div{display:flex;flex-direction:column;gap:.25rem;max-width:100%}
select{max-width:100%}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.alert{border-left:4px solid var(--err);padding:.5rem .75rem;margin:0 0 1rem;background:var(--bg)}
.alert strong{color:var(--err)}
.notice{border-left:4px solid var(--ok);padding:.5rem .75rem;margin:0 0 1rem;background:var(--bg)}
.figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));gap:1rem;margin:0}
.figures div{background:var(--bg);border-radius:8px;padding:.75rem 1rem}
.figures dt{color:var(--muted);font-size:.9rem}
.figures dd{margin:0;font-size:1.5rem;font-weight:700;font-variant-numeric:tabular-nums}
table{width:100%;border-collapse:collapse;font-variant-numeric:tabular-nums}
caption{text-align:left;color:var(--muted);font-size:.9rem;padding:0 0 .5rem}
th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
td.num,th.num{text-align:right}
.scroll{overflow-x:auto}
code{font-size:.9em;word-break:break-all}
td.lead>code{word-break:normal;white-space:nowrap}
.secret-box{display:flex;gap:.5rem;align-items:stretch;margin:0 0 .5rem}
code.secret{display:block;flex:1 1 auto;min-width:0;padding:.75rem;background:var(--bg);border:2px dashed var(--accent);border-radius:6px;font-size:1rem;white-space:nowrap;overflow-x:auto;word-break:normal;user-select:all}
.chart svg{width:100%;height:auto;display:block}
.chart .narrow{display:none}
.legend{display:flex;flex-wrap:wrap;gap:.25rem 1rem;list-style:none;padding:0;margin:.5rem 0 0}
.legend svg{width:.9rem;height:.9rem;display:inline-block;vertical-align:-.1rem;margin-right:.3rem}
details summary{cursor:pointer;color:var(--accent)}
nav.inline{display:flex;gap:.5rem 1rem;flex-wrap:wrap}
.price{white-space:nowrap}
@media (max-width:40rem){
header.top{padding:.75rem}
main{padding:0 .75rem}
section{padding:1rem .75rem}
h1{font-size:1.35rem}
.chart .wide{display:none}
.chart .narrow{display:block}
code.secret{font-size:.85rem;padding:.6rem}
.figures{grid-template-columns:repeat(2,minmax(0,1fr));gap:.5rem}
.figures div{padding:.5rem .75rem}
.figures dd{font-size:1.25rem}
table.cards caption{display:block;padding-bottom:.25rem}
table.cards thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
table.cards,table.cards tbody{display:block;width:100%}
table.cards tr{display:flex;flex-wrap:wrap;align-items:baseline;gap:.15rem .6rem;padding:.55rem 0;border-bottom:1px solid var(--line)}
table.cards td{display:block;border:0;padding:0;min-width:0}
table.cards td.lead{order:0;flex:1 1 calc(100% - 9rem);font-weight:600;overflow-wrap:anywhere}
table.cards td.num{order:1;margin-left:auto;font-weight:700;text-align:right}
table.cards td.meta{order:2;color:var(--muted);font-size:.85rem}
table.cards td.meta~td.meta::before{content:"· "}
table.cards td.wide{order:3;flex:1 1 100%;font-size:.85rem}
table.cards td.wide code{display:block;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;word-break:normal}
table.cards td[colspan]{flex:1 1 100%;font-weight:400}
}
`;

/**
 * The pages' one script: a "Copy" button beside a key shown once (shown only where the script runs). Falls back to
 * selecting the key when the clipboard is not available.
 */
const SCRIPT = `for(const b of document.querySelectorAll('button[data-copy]')){b.hidden=false;b.addEventListener('click',()=>{const el=document.getElementById(b.dataset.copy);if(!el)return;const t=el.textContent.trim();const select=()=>{const r=document.createRange();r.selectNodeContents(el);const s=getSelection();s.removeAllRanges();s.addRange(r);b.textContent='Selected: copy it';};if(navigator.clipboard){navigator.clipboard.writeText(t).then(()=>{b.textContent='Copied';},select);}else select();});}`;

const SCRIPT_HASH = createHash('sha256').update(SCRIPT).digest('base64');

/** A key shown once, on one line (never broken mid-string), with a button that copies it. */
export function secretBox(id: string, value: string, label: string): string {
  return `<div class="secret-box"><code class="secret" id="${escapeHtml(id)}">${escapeHtml(value)}</code><button type="button" class="secondary" data-copy="${escapeHtml(id)}" aria-label="${escapeHtml(label)}" hidden>Copy</button></div>`;
}

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/**
 * Only our stylesheet and script, no frames, nothing cached, no Referer. No form-action: the card and top-up forms answer with a
 * redirect to the processor's hosted page, and browsers apply form-action to that redirect.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; script-src 'sha256-${SCRIPT_HASH}'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'`,
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
};

export interface Frame {
  title: string;
  body: string;
  /** The signed-in account's id, for the header; absent on public pages. */
  account?: { id: string; signOut: { action: string; csrf: string } } | undefined;
  narrow?: boolean;
  /** Seconds before the page reloads itself (a checkout waiting for its confirmation). */
  refreshSeconds?: number;
}

export function layout(f: Frame): string {
  const user = f.account
    ? `<form method="post" action="${escapeHtml(f.account.signOut.action)}" class="row">${csrfField(f.account.signOut.csrf)}
<span class="hint">Signed in: <code>${escapeHtml(f.account.id)}</code></span>
<button type="submit" class="secondary">Sign out</button></form>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
${f.refreshSeconds ? `<meta http-equiv="refresh" content="${f.refreshSeconds}">\n` : ''}<title>${escapeHtml(f.title)} · tollgate</title>
<style>${STYLE}</style>
</head>
<body>
<header class="top"><a class="brand" href="/">tollgate</a>${user}</header>
<main${f.narrow ? ' class="narrow"' : ''}>
${f.body}
</main>
<script>${SCRIPT}</script>
</body>
</html>`;
}

/**
 * Sends a page. `base` is the public URL's path (a gateway behind a proxy at /gw): the pages' own links and form
 * actions are root-relative, so they are prefixed with it (user text is escaped, so no `"/` of theirs matches).
 */
export function sendHtml(res: Response, status: number, f: Frame, base = ''): void {
  const html = base ? layout(f).replace(/(href|action)="\//g, `$1="${base}/`) : layout(f);
  res.status(status).set(PAGE_HEADERS).type('html').send(html);
}

/** A CSV download (the dashboard's history, the team's spend): never cached, never sniffed. */
export function sendCsv(res: Response, filename: string, csv: string): void {
  res
    .status(200)
    .set({
      'Content-Type': 'text/csv; charset=utf-8',
      'Content-Disposition': `attachment; filename="${filename}"`,
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
    })
    .send(csv);
}

export const csrfField = (csrf: string) => `<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">`;

export function alert(error: string | undefined): string {
  return error
    ? `<div class="alert" role="alert" id="form-error"><strong>Error:</strong> ${escapeHtml(error)}</div>`
    : '';
}

export function notice(text: string | undefined): string {
  return text ? `<div class="notice" role="status">${escapeHtml(text)}</div>` : '';
}

/** A POST form with its CSRF token; `inner` is trusted markup. */
export function postForm(action: string, csrf: string, inner: string, attrs = ''): string {
  return `<form method="post" action="${escapeHtml(action)}"${attrs}>${csrfField(csrf)}${inner}</form>`;
}

export const usd = (micros: number) => formatUsd(micros);

export function isoMinute(ms: number | string): string {
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
}
