import type { Request, Response, Router } from 'express';
import { toGatewayError } from '../errors.js';
import { type AlertsView, alertsBody } from './alerts-view.js';
import { messagePage } from './pages.js';
import type { SignedInContext } from './route-context.js';

// The alerts page's routes (/account/alerts): save where and when alerts go, rotate the webhook's signing secret,
// send a test alert, and the delivery log. A refused value is a 400 naming its field, with what was typed kept.

const FLASH: Record<string, string> = {
  saved: 'Your alert settings were saved.',
  test_sent: 'A test alert is on its way: it appears in the delivery log below.',
};

type Context = Pick<SignedInContext, 'd' | 'form' | 'signedIn' | 'session' | 'send' | 'go' | 'csrf'>;

export function alertRoutes(r: Router, c: Context): void {
  const { d, form, signedIn, session, send, go } = c;

  async function page(
    req: Request,
    res: Response,
    status = 200,
    extra: Partial<Pick<AlertsView, 'secret' | 'error' | 'form'>> = {},
  ): Promise<void> {
    const alerts = d.alerts;
    if (!alerts) return send(res, 404, messagePage('No alerts', 'Alerts are not available here.'));
    const s = session(res);
    const done = typeof req.query.done === 'string' ? FLASH[req.query.done] : undefined;
    const view: AlertsView = {
      csrf: c.csrf(s),
      settings: await alerts.settings(s.accountId),
      emailEnabled: alerts.emailEnabled,
      deliveries: await alerts.deliveries(s.accountId, 50),
      now: d.clock.now(),
      flash: done,
      ...extra,
    };
    send(res, status, {
      title: 'Alerts',
      body: alertsBody(view),
      account: { id: s.accountId, signOut: { action: '/account/signout', csrf: view.csrf } },
    });
  }

  r.get('/account/alerts', signedIn, (req, res) => page(req, res));

  r.post('/account/alerts', form, signedIn, async (req, res) => {
    const alerts = d.alerts;
    if (!alerts) return page(req, res, 404);
    const body = req.body as Record<string, unknown>;
    try {
      const { secret } = await alerts.save(session(res).accountId, body);
      if (secret) return page(req, res, 201, { secret });
      go(res, '/account/alerts?done=saved');
    } catch (e) {
      const err = toGatewayError(e);
      const issues = err.details?.issues as Array<{ path?: string }> | undefined;
      const events = body.events;
      await page(req, res, err.status, {
        error: { field: issues?.[0]?.path, message: err.message },
        form: {
          webhook_url: String(body.webhook_url ?? ''),
          emails: String(body.emails ?? ''),
          balance_threshold_usd: String(body.balance_threshold_usd ?? ''),
          events: (Array.isArray(events) ? events : events === undefined ? [] : [events]).map(String),
        },
      });
    }
  });

  r.post('/account/alerts/rotate', form, signedIn, async (req, res) => {
    const secret = await d.alerts?.rotateSecret(session(res).accountId);
    if (!secret) {
      return page(req, res, 404, {
        error: { field: 'webhook_url', message: 'No webhook is set: save one first.' },
      });
    }
    await page(req, res, 200, { secret });
  });

  r.post('/account/alerts/test', form, signedIn, async (req, res) => {
    if (!(await d.alerts?.sendTest(session(res).accountId))) {
      return page(req, res, 404, {
        error: { field: undefined, message: 'Set a webhook or an e-mail address first.' },
      });
    }
    go(res, '/account/alerts?done=test_sent#deliveries');
  });
}
