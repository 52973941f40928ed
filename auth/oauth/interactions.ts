import express, { type Request, type Response, Router } from 'express';
import type { Interaction } from 'oidc-provider';
import { isDatabaseUnavailable } from '../../src/errors.js';
import { formatUsd } from '../../src/lib/money.js';
import { verifyApiKey } from '../api-keys.js';
import { cimdHost } from './cimd.js';
import { type InteractionDeps, SIGN_IN } from './context.js';
import { startFederated } from './federated-routes.js';
import { clientIp } from './guard.js';
import { LIMIT_CHOICES, limitChoice, parseLimit } from './limits.js';
import { consentPage, loginPage, messagePage, sendPage } from './pages.js';
import { INTERACTION_PATH } from './provider.js';
import { describeScope } from './scopes.js';

// The pages between /oauth/authorize and the client's redirect: sign-in (API key, or the upstream provider) and
// consent (scopes and a daily spend limit). Every POST needs its CSRF token; sign-in attempts are rate limited.

const SIGN_IN_AGAIN = 'Sign in again to continue.';
const DECLINED = 'The user declined to connect the application.';
const AGENT_KEY =
  'That key has limits (an agent’s key), so it cannot connect apps: use an unrestricted key of the account.';

type Details = Interaction;

export function interactionRoutes(d: InteractionDeps): Router {
  const r = Router();
  const form = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 });
  const url = (uid: string, action = '') => `${d.publicUrl()}${INTERACTION_PATH}/${uid}${action}`;

  /** The interaction this browser is in; renders the "expired" page (and returns undefined) when there is none. */
  async function load(req: Request, res: Response): Promise<Details | undefined> {
    try {
      const details = await d.provider().interactionDetails(req, res);
      if (details.uid === req.params.uid) return details;
    } catch (e) {
      // A database that does not answer is the outage's 503 page (src/http/app.ts), not an expired sign-in.
      if (isDatabaseUnavailable(e)) throw e;
      // SessionNotFound: no interaction cookie (another browser, or expired).
    }
    const p = messagePage(
      'This sign-in has expired',
      'The link is no longer valid or was opened in another browser. Go back to the application and connect again.',
    );
    sendPage(res, 400, p);
    return undefined;
  }

  function csrfOk(req: Request, res: Response): boolean {
    if (d.csrf.verify(req, req.params.uid as string)) return true;
    const p = messagePage(
      'Request refused',
      'The form was missing its security token. Reload the page and try again.',
    );
    sendPage(res, 403, p);
    return false;
  }

  function rateLimited(req: Request, res: Response): boolean {
    const wait = d.limiter.take(`signin:${clientIp(req, d.secure())}`);
    if (wait === undefined) return false;
    res.setHeader('Retry-After', String(wait));
    const p = messagePage(
      'Too many attempts',
      `Too many sign-in attempts from your network. Wait ${wait} seconds.`,
    );
    sendPage(res, 429, p);
    return true;
  }

  /** The client's name, and for a metadata-document client the host its document came from. */
  async function clientOf(details: Details): Promise<{ clientName: string; clientHost: string | undefined }> {
    const id = String(details.params.client_id);
    const client = await d.provider().Client.find(id);
    return { clientName: client?.clientName ?? id, clientHost: cimdHost(client) };
  }

  async function renderLogin(req: Request, res: Response, details: Details, status = 200, error?: string) {
    const uid = details.uid;
    const p = loginPage({
      action: url(uid, '/login'),
      federatedAction: d.federated ? url(uid, '/federated') : undefined,
      federatedName: d.federated?.name,
      abortAction: url(uid, '/abort'),
      csrf: d.csrf.issue(req, res, uid),
      ...(await clientOf(details)),
      error,
    });
    sendPage(res, status, p);
  }

  async function renderConsent(req: Request, res: Response, details: Details, status = 200, error?: string) {
    const uid = details.uid;
    const accountId = details.session?.accountId as string;
    const clientId = String(details.params.client_id);
    const balance = await d.ledger.balance(accountId);
    const current = await d.store.dailyLimit(accountId, clientId);
    const body = req.body as Record<string, string> | undefined;
    const selected = body?.daily_limit ?? limitChoice(current);
    const p = consentPage({
      action: url(uid, '/consent'),
      abortAction: url(uid, '/abort'),
      csrf: d.csrf.issue(req, res, uid),
      ...(await clientOf(details)),
      clientId,
      redirectOrigin: originOf(String(details.params.redirect_uri)),
      accountId,
      available: formatUsd(balance.available_micros),
      scopes: requestedScopes(details).map((name) => ({ name, description: describeScope(name) })),
      limitChoices: LIMIT_CHOICES,
      selectedLimit: selected,
      customLimit:
        body?.custom_limit_usd ?? (selected === 'custom' && current ? formatUsd(current).slice(1) : ''),
      error,
    });
    sendPage(res, status, p);
  }

  r.get('/:uid', async (req, res) => {
    const details = await load(req, res);
    if (!details) return;
    if (details.prompt.name === 'login') {
      const failed = req.query.error === 'upstream';
      const error = failed ? `Sign-in with ${d.federated?.name} did not complete. Try again.` : undefined;
      return renderLogin(req, res, details, 200, error);
    }
    if (details.prompt.name === 'consent') {
      if ((await signInKey(d, details)) === undefined)
        return renderLogin(req, res, details, 200, SIGN_IN_AGAIN);
      return renderConsent(req, res, details);
    }
    const p = messagePage(
      'Unsupported request',
      'This authorization request needs a step tollgate does not offer.',
    );
    sendPage(res, 400, p);
  });

  r.post('/:uid/login', form, async (req, res) => {
    const details = await load(req, res);
    if (!details || !csrfOk(req, res) || rateLimited(req, res)) return;
    const key = typeof req.body.api_key === 'string' ? req.body.api_key.trim() : '';
    const check = await verifyApiKey(d.ledger, key);
    if (!check.ok) {
      // One message for every refusal: whether a key exists, or was revoked, is nobody's business here.
      return renderLogin(req, res, details, 401, 'That API key was not accepted. Check it and try again.');
    }
    if (check.principal.limits) {
      // A key with limits is an agent's: connecting an app with it would hand the app spending beyond them.
      return renderLogin(req, res, details, 403, AGENT_KEY);
    }
    await d.provider().interactionFinished(
      req,
      res,
      {
        login: { accountId: check.principal.accountId, amr: ['api_key'] },
        [SIGN_IN]: { keyId: check.principal.keyId },
      },
      { mergeWithLastSubmission: false },
    );
  });

  r.post('/:uid/consent', form, async (req, res) => {
    const details = await load(req, res);
    if (!details || !csrfOk(req, res)) return;
    const accountId = details.session?.accountId;
    const keyId = await signInKey(d, details);
    if (details.prompt.name !== 'consent' || !accountId || keyId === undefined) {
      return renderLogin(req, res, details, 200, SIGN_IN_AGAIN);
    }
    const limit = parseLimit(req.body as Record<string, unknown>);
    if (limit === 'invalid') {
      return renderConsent(req, res, details, 400, 'Enter a daily limit in USD, such as 2.50 (above 0).');
    }
    const provider = d.provider();
    const clientId = String(details.params.client_id);
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId, clientId });
    if (!grant) return renderLogin(req, res, details);
    const missing = details.prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    const grantId = await grant.save();
    await d.store.setDailyLimit(accountId, clientId, limit);
    await d.store.setGrantKey(grantId, keyId);
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  });

  r.post('/:uid/abort', form, async (req, res) => {
    const details = await load(req, res);
    if (!details || !csrfOk(req, res)) return;
    const denied = { error: 'access_denied', error_description: DECLINED };
    await d.provider().interactionFinished(req, res, denied, { mergeWithLastSubmission: false });
  });

  r.post('/:uid/federated', form, async (req, res) => {
    const details = await load(req, res);
    if (!details || !csrfOk(req, res) || rateLimited(req, res)) return;
    if (!d.federated) return renderLogin(req, res, details, 404, 'Upstream sign-in is not configured.');
    const started = await startFederated(d, res, details.uid);
    if (!started) {
      const name = d.federated.name;
      renderLogin(req, res, details, 502, `${name} cannot be reached right now. Use an API key, or retry.`);
    }
  });

  return r;
}

/**
 * The API key this browser signed in with (null: upstream sign-in), so the grant can be tied to it and revoking
 * the key cuts the grant off. Known from this flow's own sign-in (the login result travels to the consent step)
 * and remembered for the session; undefined when neither says, and then the user signs in again.
 */
async function signInKey(d: InteractionDeps, details: Details): Promise<string | null | undefined> {
  const uid = details.session?.uid;
  const marker = (details.lastSubmission as Record<string, { keyId?: string | null }> | undefined)?.[SIGN_IN];
  if (marker && marker.keyId !== undefined) {
    if (uid) await d.store.setSessionKey(uid, marker.keyId);
    return marker.keyId;
  }
  return uid ? await d.store.sessionKey(uid) : undefined;
}

function requestedScopes(details: Details): string[] {
  const scopes = new Set(
    String(details.params.scope ?? '')
      .split(' ')
      .filter(Boolean),
  );
  const missing = details.prompt.details as { missingResourceScopes?: Record<string, string[]> };
  for (const list of Object.values(missing.missingResourceScopes ?? {})) for (const s of list) scopes.add(s);
  return [...scopes];
}

function originOf(uri: string): string {
  try {
    const u = new URL(uri);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : `${u.protocol}//${u.host}`;
  } catch {
    return uri;
  }
}
