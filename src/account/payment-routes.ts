import type { Request, Response, Router } from 'express';
import type { Billing } from '../billing/index.js';
import { GatewayError, toGatewayError } from '../errors.js';
import { parseUsdToMicros } from '../lib/money.js';
import { CSV_ROWS, filteredHistory, parseFilters, toCsv } from './dashboard.js';
import { sendCsv } from './html.js';
import { checkoutReturnPage } from './pages.js';
import type { SignedInContext } from './route-context.js';
import type { ErrorPage } from './routes.js';

// The dashboard's money routes: add or replace the card and top up (both through the processor's hosted
// Checkout page), pay what is drawn now, the page a browser returns to from Checkout (owners and billing), and the
// CSV export (the whole account's for owners and billing, a member's own calls for a member).

export interface PaymentRouteContext
  extends Pick<
    SignedInContext,
    'd' | 'form' | 'signedIn' | 'allow' | 'session' | 'dashboard' | 'send' | 'go'
  > {
  /** A team member's own keys, whose calls are all it may export; undefined: the whole account's history. */
  ownCalls: (res: Response) => Promise<readonly string[] | undefined>;
  /** A page of one message (./pages.ts `messagePage`). */
  say: ErrorPage;
}

const USD_FIELD = /^\$?(\d{1,6}(?:\.\d{1,2})?)$/;

export function paymentRoutes(r: Router, c: PaymentRouteContext): void {
  const { d, form, signedIn, allow, session, dashboard, send, say, go } = c;
  const paid = allow('payments');

  /** Card actions: off without card payments; a processor that cannot be reached is said plainly. */
  const paying =
    (f: (b: Billing, req: Request, res: Response) => Promise<void>) =>
    async (req: Request, res: Response) => {
      if (!d.billing)
        return dashboard(req, res, 404, { error: 'Card payments are not enabled on this gateway.' });
      try {
        await f(d.billing, req, res);
      } catch (e) {
        const err = toGatewayError(e);
        await dashboard(req, res, err.status, { error: err.message });
      }
    };

  r.post(
    '/account/card',
    form,
    signedIn,
    paid,
    paying(async (b, _req, res) => {
      res.redirect(303, await b.startCardSetup(session(res).accountId));
    }),
  );

  r.post(
    '/account/topup',
    form,
    signedIn,
    paid,
    paying(async (b, req, res) => {
      const m = USD_FIELD.exec(String(req.body.amount_usd ?? '').trim());
      if (!m) throw new GatewayError('invalid_input', 'Enter the top-up in USD, such as 20 or 12.50.');
      res.redirect(303, await b.startTopUp(session(res).accountId, parseUsdToMicros(m[1] as string)));
    }),
  );

  r.post(
    '/account/settle',
    form,
    signedIn,
    paid,
    paying(async (b, _req, res) => {
      const outcome = await b.settleNow(session(res).accountId);
      go(res, `/account?done=settle_${outcome}#money`);
    }),
  );

  r.get('/account/checkout/return', signedIn, paid, async (req, res) => {
    const row = await d.billing?.session(String(req.query.session_id ?? ''));
    if (!row || row.account_id !== session(res).accountId) {
      return say(res, 404, 'Unknown payment', 'This payment was not started from this account.');
    }
    send(
      res,
      200,
      checkoutReturnPage({ purpose: row.purpose, status: row.status, amount: row.amount_micros }),
    );
  });

  r.get('/account/transactions.csv', signedIn, async (req, res) => {
    const { filters } = parseFilters(req.query as Record<string, unknown>);
    const rows = await filteredHistory(
      d.ledger,
      session(res).accountId,
      filters,
      CSV_ROWS,
      await c.ownCalls(res),
    );
    sendCsv(res, `tollgate-${session(res).accountId}-transactions.csv`, toCsv(rows));
  });
}
