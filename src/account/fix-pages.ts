import type { Request, Response, Router } from 'express';
import { escapeHtml, postForm, usd } from './html.js';
import type { SignedInContext } from './route-context.js';

// The pages a refused call sends a person to (src/run/fixes.ts): /account/top-up (add credit; or a card) and
// /account/card (save or replace the card, which also unfreezes a frozen line; or top up). An agent host opens
// them from inside a call (URL elicitation, src/mcp/top-up.ts), and a refusal names them in words. Signed out,
// sign-in brings the person straight back (src/account/next.ts). Each says which account it acts on (the page
// acts only on the account signed in: a link opened by someone else tops up their own account, never another's),
// and that the call the agent is waiting on runs once the money is here. The forms are the dashboard's own.

export type FixPageContext = Pick<SignedInContext, 'd' | 'signedIn' | 'session' | 'send' | 'csrf'>;

type Lead = 'top_up' | 'add_card';

export function fixPages(r: Router, c: FixPageContext): void {
  const page = (lead: Lead) => async (_req: Request, res: Response) => {
    const s = c.session(res);
    const { d } = c;
    const [account, balance, line, card] = await Promise.all([
      d.ledger.getAccount(s.accountId),
      d.ledger.balance(s.accountId),
      d.ledger.creditLine(s.accountId),
      d.billing?.card(s.accountId),
    ]);
    const csrf = c.csrf(s);
    const who = `${account?.name ? `${escapeHtml(account.name)} ` : ''}<code>${escapeHtml(s.accountId)}</code>`;
    const frozen = line.frozen
      ? `<div class="alert" role="alert"><strong>Your credit line is frozen:</strong> ${escapeHtml(line.frozen.reason)}. A new card unfreezes it.</div>`
      : '';
    const status = `<p>Account ${who}: <strong id="available" data-micros="${balance.available_micros}">${usd(Math.max(0, balance.available_micros))}</strong> available now.</p>`;
    const after =
      '<p class="hint">Then go back to your agent: the call it is waiting on runs once the money is here. Nothing was charged for it.</p>';
    if (!d.billing) {
      return c.send(res, 200, {
        title: 'Add credit',
        narrow: true,
        account: { id: s.accountId, signOut: { action: '/account/signout', csrf } },
        body: `<h1>Add credit to continue</h1>
<section>${status}<p>Card payments are not enabled on this gateway: ask its operator to add credit to your account.</p></section>`,
      });
    }
    const { topUpMinMicros: min, topUpMaxMicros: max, welcomeLineMicros } = d.billing.limits;
    const topUp = `<section aria-labelledby="topup-h"><h2 id="topup-h">Top up</h2>
${postForm('/account/topup', csrf, `<div><label for="topup-amount">Amount (USD, ${usd(min)}–${usd(max)})</label><input type="text" id="topup-amount" name="amount_usd" inputmode="decimal" required size="8" value="${(min / 1_000_000).toFixed(2)}"></div><div><button type="submit">Top up by card</button></div>`, ' class="row"')}
</section>`;
    const lineNote =
      line.limit_micros === 0 && welcomeLineMicros > 0
        ? ` Saving one gives you a ${usd(welcomeLineMicros)} credit line: usage beyond your prepaid balance is charged to the card, only what you used.`
        : '';
    const cardText = card
      ? `Card on file: ${escapeHtml(card.brand)} ending ${escapeHtml(card.last4)}.${line.frozen ? ' Replace it to unfreeze your credit line.' : ''}`
      : `No card on file.${lineNote}`;
    const cardForm = `<section aria-labelledby="card-h"><h2 id="card-h">${card ? 'Your card' : 'Add a card'}</h2>
<p id="card-on-file">${cardText}</p>
${postForm('/account/card', csrf, `<button type="submit"${lead === 'top_up' ? ' class="secondary"' : ''}>${card ? 'Replace the card' : 'Add a card'}</button>`)}
</section>`;
    // What fixes it first: the card for a frozen line (or the card page), else the top-up.
    const cardFirst = lead === 'add_card' || line.frozen !== null;
    c.send(res, 200, {
      title: cardFirst ? 'Update your card' : 'Top up',
      narrow: true,
      account: { id: s.accountId, signOut: { action: '/account/signout', csrf } },
      body: `<h1>${cardFirst ? 'Update your card to continue' : 'Top up to continue'}</h1>
${frozen}<section>${status}${after}</section>
${cardFirst ? cardForm + topUp : topUp + cardForm}
<p><a href="/account">Your dashboard</a></p>`,
    });
  };
  r.get('/account/top-up', c.signedIn, page('top_up'));
  r.get('/account/card', c.signedIn, page('add_card'));
}
