import type { Request, Response } from 'express';
import { type InteractionDeps, SIGN_IN } from './context.js';
import { FEDERATED_CALLBACK_PATH, FederationError, OTHER_FLOW_PREFIX } from './federated.js';
import { readCookie, setCookie } from './guard.js';
import { messagePage, sendPage } from './pages.js';
import { INTERACTION_PATH } from './provider.js';

// The two ends of "Sign in with <upstream>" in the browser: off to the upstream with a state bound to this
// browser by a cookie, and back through the callback, which resumes the interaction as the signed-in account.

const FED_COOKIE = 'tg_oauth_fed';

/** Sends the browser to the upstream; false when the upstream cannot be reached (nothing was sent). */
export async function startFederated(d: InteractionDeps, res: Response, uid: string): Promise<boolean> {
  if (!d.federated) return false;
  try {
    const { url, state } = await d.federated.start(uid, `${d.publicUrl()}${FEDERATED_CALLBACK_PATH}`);
    // Binds the callback to this browser: only it holds the state it is sent back with.
    setCookie(res, d.cookies, FED_COOKIE, state, FEDERATED_CALLBACK_PATH, 600);
    res.redirect(303, url);
    return true;
  } catch (err) {
    d.log.warn({ reason: describeError(err) }, 'upstream sign-in could not start');
    return false;
  }
}

/** The upstream's redirect back: finish its sign-in, then resume the interaction as that account. */
export function federatedCallback(d: InteractionDeps) {
  return async (req: Request, res: Response) => {
    const state = typeof req.query.state === 'string' ? req.query.state : '';
    const fail = (status: number, message: string) =>
      sendPage(res, status, messagePage('Sign-in did not complete', message));
    if (!d.federated) return fail(404, 'Upstream sign-in is not configured on this server.');
    if (!state || readCookie(req, FED_COOKIE) !== state) {
      return fail(403, 'This sign-in was started in another browser, or it expired. Connect again.');
    }
    setCookie(res, d.cookies, FED_COOKIE, '', FEDERATED_CALLBACK_PATH, 0);
    const query = new URL(req.originalUrl, 'http://x').search;
    try {
      const { uid, accountId, created } = await d.federated.finish(
        new URL(`${d.publicUrl()}${FEDERATED_CALLBACK_PATH}${query}`),
        state,
      );
      if (uid.startsWith(OTHER_FLOW_PREFIX)) {
        if (!d.otherSignIn) return fail(400, 'This sign-in cannot continue here.');
        return await d.otherSignIn(req, res, { flow: uid, accountId, created });
      }
      const interaction = await d.provider().Interaction.find(uid);
      if (!interaction) return fail(400, 'The sign-in took too long and expired. Connect again.');
      interaction.result = { login: { accountId, amr: ['federated'] }, [SIGN_IN]: { keyId: null } };
      await interaction.save(interaction.exp - Math.floor(Date.now() / 1000));
      res.redirect(303, interaction.returnTo);
    } catch (err) {
      d.log.warn({ reason: describeError((err as Error).cause ?? err) }, 'upstream sign-in failed');
      // Back to the sign-in page of the same interaction, so the user can retry or use an API key.
      if (err instanceof FederationError && err.uid && !err.uid.startsWith(OTHER_FLOW_PREFIX)) {
        return res.redirect(303, `${d.publicUrl()}${INTERACTION_PATH}/${err.uid}?error=upstream`);
      }
      fail(400, 'The sign-in could not be verified. Connect again.');
    }
  };
}

/**
 * What to log of an upstream failure: its name, message and OAuth error code only. Library errors can carry the
 * response or the ID token's claims as properties, and those stay out of the logs.
 */
function describeError(e: unknown): Record<string, unknown> {
  if (!(e instanceof Error)) return { message: String(e) };
  const { error, code } = e as { error?: unknown; code?: unknown };
  return { name: e.name, message: e.message, error, code };
}
