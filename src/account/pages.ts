import type { Frame } from './html.js';
import { alert, escapeHtml, notice, postForm, secretBox, usd } from './html.js';

// The public pages: what the gateway is (/), sign-in, sign-up, the page that shows a new API key once, and the
// page a browser returns to from the payment processor.

export interface LandingView {
  publicUrl: string;
  version: string;
  signup: boolean;
  welcomeLine: number | undefined;
  /** Accountless x402 payments are on (the wallet MCP endpoint exists). */
  x402: boolean;
  /** The price list, by the one listing rule (src/cli/catalog.ts `priceList`). */
  prices: readonly PriceRow[];
}

export interface PriceRow {
  id: string;
  title: string;
  price_cents: number;
  available: boolean;
  availability_note?: string;
}

function priceList(rows: readonly PriceRow[]): string {
  if (rows.length === 0) return '';
  const body = rows
    .map((r) => {
      const price = r.price_cents === 0 ? 'free' : `$${(r.price_cents / 100).toFixed(2)}`;
      const note = r.available
        ? r.availability_note
          ? ` <span class="hint">(${escapeHtml(r.availability_note)})</span>`
          : ''
        : ` <span class="hint">(unavailable here: ${escapeHtml(r.availability_note ?? 'not configured')})</span>`;
      return `<tr><td class="lead"><code>${escapeHtml(r.id)}</code></td><td class="num price" data-cents="${r.price_cents}">${price}</td><td class="wide">${escapeHtml(r.title)}${note}</td></tr>`;
    })
    .join('');
  return `<section aria-labelledby="prices-h" id="prices">
<h2 id="prices-h">Price list</h2>
<p>Each call costs its price, charged only when it succeeds. Per-token prices of the model router are at <a href="/api/llm/v1/pricing">/api/llm/v1/pricing</a>.</p>
<div class="scroll"><table id="price-table" class="cards"><caption>${rows.length} actions; the same list as JSON at <a href="/api/run">/api/run</a></caption>
<thead><tr><th scope="col">Action</th><th scope="col" class="num">Price</th><th scope="col">What it does</th></tr></thead>
<tbody>${body}</tbody></table></div>
</section>`;
}

export function landingPage(v: LandingView): Frame {
  const url = escapeHtml(v.publicUrl);
  const line = v.welcomeLine
    ? ` New accounts get a ${usd(v.welcomeLine)} credit line once a card is on file; the card settles only what you use.`
    : '';
  return {
    title: 'Pay-per-call services for AI agents',
    body: `<h1>tollgate: pay-per-call services for AI agents</h1>
<section aria-labelledby="what-h">
<h2 id="what-h">What this is</h2>
<p>One catalog of priced actions (web scraping and search, property data, files, media staging, video assembly, and an
OpenAI-compatible model router), each call charged only when it succeeds, from one balance.${line}</p>
<p>Pay with an API key (prepaid credit) or connect an MCP host over OAuth${v.x402 ? ', or pay per call in USDC with x402, no account needed' : ''}.</p>
</section>
<section aria-labelledby="links-h">
<h2 id="links-h">Start here</h2>
<ul>
<li><a href="/account">Your account</a>: balance, usage, keys, connected apps, card and top-ups${v.signup ? ` (<a href="/account/signup">create one</a>)` : ''}</li>
<li><a href="#prices">The price list</a> below (as JSON: <a href="/api/run">/api/run</a>; <code>GET /api/run/{service}/{action}</code> describes one)</li>
<li><a href="/openapi.json">/openapi.json</a>: the HTTP API as OpenAPI 3.1</li>
<li>MCP server: <code>${url}/mcp</code> (API key or OAuth)${v.x402 ? `; accountless x402 wallets: <code>${url}/mcp/x402</code>` : ''}</li>
<li>Model router: <code>${url}/api/llm/v1</code> (OpenAI-compatible; <a href="/api/llm/v1/pricing">prices</a>)</li>
</ul>
</section>
${priceList(v.prices)}
<p class="hint">tollgate ${escapeHtml(v.version)}</p>`,
  };
}

export interface SignInView {
  csrf: string;
  upstreamName: string | undefined;
  signupOpen: boolean;
  error?: string | undefined;
  flash?: string | undefined;
  /** The dashboard page to return to once signed in (src/account/next.ts). */
  next?: string | undefined;
}

/** The hidden field that carries where to return after signing in. */
const nextField = (next: string | undefined) =>
  next ? `<input type="hidden" name="next" value="${escapeHtml(next)}">` : '';

function upstreamButton(csrf: string, name: string, verb: string, next?: string): string {
  return postForm(
    '/account/federated',
    csrf,
    `${nextField(next)}<button type="submit" class="secondary">${verb} with ${escapeHtml(name)}</button>`,
  );
}

export function signInPage(v: SignInView): Frame {
  const invalid = v.error ? ' aria-invalid="true"' : '';
  const described = v.error ? 'api_key_hint form-error' : 'api_key_hint';
  const upstream = v.upstreamName
    ? `<p class="hint">or</p>${upstreamButton(v.csrf, v.upstreamName, 'Sign in', v.next)}`
    : '';
  const signup =
    v.signupOpen || v.upstreamName ? `<p>New here? <a href="/account/signup">Create an account</a>.</p>` : '';
  return {
    title: 'Sign in',
    narrow: true,
    body: `<h1>Sign in to your account</h1>
${alert(v.error)}${notice(v.flash)}
<section>
${postForm(
  '/account/signin',
  v.csrf,
  `${nextField(v.next)}<label for="api_key">API key</label>
<p class="hint" id="api_key_hint">It starts with tg_sk_.</p>
<input class="wide" id="api_key" name="api_key" type="password" autocomplete="off" spellcheck="false" required aria-describedby="${described}"${invalid}>
<p><button type="submit">Sign in with API key</button></p>`,
)}
${upstream}
</section>
${signup}`,
  };
}

export interface SignUpView {
  csrf: string;
  upstreamName: string | undefined;
  open: boolean;
  welcomeLine: number | undefined;
  error?: string | undefined;
}

export function signUpPage(v: SignUpView): Frame {
  const line = v.welcomeLine
    ? `<p>Add a card afterwards to get a ${usd(v.welcomeLine)} credit line: the card is charged only for what you use beyond your prepaid balance.</p>`
    : '';
  const local = v.open
    ? postForm(
        '/account/signup',
        v.csrf,
        `<label for="name">Name of the account <span class="hint">(optional; only you and the operator see it)</span></label>
<input class="wide" id="name" name="name" type="text" maxlength="60" autocomplete="nickname">
<p><button type="submit">Create my account</button></p>`,
      )
    : '';
  const upstream = v.upstreamName
    ? `${v.open ? '<p class="hint">or</p>' : ''}${upstreamButton(v.csrf, v.upstreamName, 'Sign up')}`
    : '';
  const closed =
    !v.open && !v.upstreamName
      ? '<p>Sign-up is closed on this gateway. Ask its operator for an account (<code>tollgate accounts create</code>).</p>'
      : '';
  return {
    title: 'Create an account',
    narrow: true,
    body: `<h1>Create an account</h1>
${alert(v.error)}
<section>
<p>You get an API key for every action, the model router and MCP, and a dashboard for your balance and usage.</p>
${line}${local}${upstream}${closed}
</section>
<p>Already have one? <a href="/account/signin">Sign in</a>.</p>`,
  };
}

export function keyOncePage(v: { key: string; accountId: string; welcome: boolean }): Frame {
  return {
    title: 'Your API key',
    narrow: true,
    body: `<h1>${v.welcome ? 'Your account is ready' : 'Your API key'}</h1>
<section>
<p>Account <code>${escapeHtml(v.accountId)}</code>. This is its API key. <strong>It is shown only this once</strong>: store it
now (a password manager, your agent's secret store). tollgate keeps only a hash of it.</p>
<label for="api-key">API key</label>
${secretBox('api-key', v.key, 'Copy the API key')}
<p class="hint">Use it as <code>Authorization: Bearer &lt;key&gt;</code>. You can make more keys, and revoke them, on your dashboard.</p>
<p><a class="button" href="/account">I stored it: go to my dashboard</a></p>
</section>`,
  };
}

export function checkoutReturnPage(v: {
  purpose: 'card' | 'topup';
  status: 'open' | 'complete' | 'failed';
  amount: number | null;
}): Frame {
  const what = v.purpose === 'card' ? 'Your card' : `Your top-up of ${usd(v.amount ?? 0)}`;
  if (v.status === 'complete') {
    return {
      title: v.purpose === 'card' ? 'Card saved' : 'Top-up received',
      narrow: true,
      body: `<h1>${v.purpose === 'card' ? 'Card saved' : 'Top-up received'}</h1>
<section><p role="status">${what} is confirmed.</p><p>If an agent was waiting for this, go back to it: its call goes on (or call again).</p><p><a class="button" href="/account">Back to your dashboard</a></p></section>`,
    };
  }
  if (v.status === 'failed') {
    return {
      title: 'Payment not completed',
      narrow: true,
      body: `<h1>Payment not completed</h1>
<section><p role="alert">${what} was not completed. Nothing was charged.</p><p><a class="button" href="/account">Back to your dashboard</a></p></section>`,
    };
  }
  return {
    title: 'Confirming',
    narrow: true,
    refreshSeconds: 2,
    body: `<h1>Confirming with the payment processor…</h1>
<section><p role="status">${what} is being confirmed. This page reloads itself; it usually takes a few seconds.</p>
<p><a href="/account">Back to your dashboard</a></p></section>`,
  };
}

export function messagePage(heading: string, message: string): Frame {
  return {
    title: heading,
    narrow: true,
    body: `<h1>${escapeHtml(heading)}</h1>\n<section><p>${escapeHtml(message)}</p></section>`,
  };
}
