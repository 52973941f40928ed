import { type Request, type Response, Router } from 'express';
import type { Authenticator } from '../../auth/authenticator.js';
import type { Principal } from '../../auth/principal.js';
import { GatewayError, toGatewayError } from '../errors.js';
import type { RunDeps } from '../run/execute.js';
import { RECEIPT_HEADER } from '../run/receipts.js';
import { executeCall, type X402Deps } from '../run/x402/call.js';
import { encodeChallenge, encodeReceipt } from '../run/x402/codec.js';
import { jsonBody } from './json-body.js';
import { paymentDocs } from './payment-docs.js';
import { sendError } from './respond.js';

// The HTTP shim: POST /api/run/{service}/{action} runs an action through src/run; GET describes it for free.
// This door only translates HTTP to `execute` and back.

export interface RunRoutesDeps {
  run: RunDeps;
  auth: Authenticator;
  maxBodyBytes: number;
  publicUrl: string;
  /** x402 payments; undefined when not configured (then a 402 names API keys only). */
  x402?: X402Deps | undefined;
}

export function runRoutes(deps: RunRoutesDeps): Router {
  const r = Router();
  // The catalog's descriptions with each paid action's payment terms (x402 and the API key).
  const docs = paymentDocs(deps.x402?.config, () => deps.run.services.publicUrl);

  r.get('/api/run', (_req, res) => {
    res.json(docs.listing());
  });
  r.get('/openapi.json', (_req, res) => {
    res.json(docs.openapi());
  });

  r.get('/api/run/:service/:action', (req, res) => {
    const d = docs.descriptor(`${req.params.service}/${req.params.action}`);
    if (!d) return sendError(res, unknownAction(req));
    res.json(d);
  });

  r.post('/api/run/:service/:action', jsonBody(deps.maxBodyBytes), async (req: Request, res: Response) => {
    let principal: Principal;
    try {
      principal = await deps.auth.fromAuthorization(req.headers.authorization);
    } catch (e) {
      return sendError(res, toGatewayError(e));
    }
    // A client that hangs up cancels its call: the upstream is aborted and the hold voided.
    const cancel = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) cancel.abort();
    });
    const key = req.headers['idempotency-key'];
    const { outcome, paymentRequired, paymentResponse } = await executeCall(deps.run, deps.x402, {
      actionId: `${req.params.service}/${req.params.action}`,
      input: req.body,
      principal,
      payment: req.headers['payment-signature'],
      transport: 'http',
      opts: {
        idempotencyKey: typeof key === 'string' ? key : undefined,
        signal: cancel.signal,
        requestId: req.id,
      },
    });
    if (res.destroyed) return;
    // x402 v2 over HTTP: the challenge in PAYMENT-REQUIRED (the 402 body mirrors it, spec §7), the
    // settlement receipt in PAYMENT-RESPONSE.
    if (paymentRequired || paymentResponse) {
      res.setHeader('Access-Control-Expose-Headers', `PAYMENT-REQUIRED, PAYMENT-RESPONSE, ${RECEIPT_HEADER}`);
    }
    if (paymentResponse) res.setHeader('PAYMENT-RESPONSE', encodeReceipt(paymentResponse));
    if (paymentRequired) {
      res.setHeader('PAYMENT-REQUIRED', encodeChallenge(paymentRequired));
      res.setHeader('Cache-Control', 'no-store');
      return res.status(402).json(paymentRequired);
    }
    if (!outcome.ok) return sendError(res, outcome.error);
    if (outcome.replayed) res.setHeader('Idempotent-Replayed', 'true');
    // The signed receipt of a paid call (src/run/receipts.ts).
    if (outcome.receipt) res.setHeader(RECEIPT_HEADER, outcome.receipt);
    const body: Record<string, unknown> = {
      ok: true,
      data: outcome.data,
      charged_cents: outcome.chargedCents,
    };
    if (outcome.transactionId) body.transaction_id = outcome.transactionId;
    res.json(body);
  });

  r.all('/api/run/:service/:action', (req, res) => {
    res.setHeader('Allow', 'GET, POST');
    sendError(
      res,
      new GatewayError(
        'method_not_allowed',
        `Use POST to run ${req.params.service}/${req.params.action}, GET to describe it.`,
      ),
    );
  });

  return r;
}

function unknownAction(req: Request): GatewayError {
  return new GatewayError(
    'not_found',
    `Unknown action "${req.params.service}/${req.params.action}". GET /api/run lists the catalog.`,
  );
}
