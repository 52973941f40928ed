import { type Request, type Response, Router } from 'express';
import type { Authenticator } from '../../auth/authenticator.js';
import type { Principal } from '../../auth/principal.js';
import { GatewayError, toGatewayError } from '../errors.js';
import { execute, type RunDeps } from '../run/execute.js';
import { catalogListing, descriptorOf, openApiDocument } from './catalog-docs.js';
import { jsonBody } from './json-body.js';
import { sendError } from './respond.js';

// The HTTP shim: POST /api/run/{service}/{action} runs an action through src/run; GET describes it for free.
// This door only translates HTTP to `execute` and back.

export interface RunRoutesDeps {
  run: RunDeps;
  auth: Authenticator;
  maxBodyBytes: number;
  publicUrl: string;
}

export function runRoutes(deps: RunRoutesDeps): Router {
  const r = Router();

  r.get('/api/run', (_req, res) => {
    res.json(catalogListing());
  });
  r.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument(deps.publicUrl));
  });

  r.get('/api/run/:service/:action', (req, res) => {
    const d = descriptorOf(`${req.params.service}/${req.params.action}`);
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
    const outcome = await execute(
      deps.run,
      `${req.params.service}/${req.params.action}`,
      req.body,
      principal,
      {
        idempotencyKey: typeof key === 'string' ? key : undefined,
        signal: cancel.signal,
        requestId: req.id,
      },
    );
    if (res.destroyed) return;
    if (!outcome.ok) return sendError(res, outcome.error);
    if (outcome.replayed) res.setHeader('Idempotent-Replayed', 'true');
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
