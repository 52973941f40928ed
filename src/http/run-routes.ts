import type { IncomingMessage, ServerResponse } from 'node:http';
import { Router } from 'express';
import type { Logger } from 'pino';
import type { Authenticator } from '../../auth/authenticator.js';
import { ANONYMOUS, type Principal } from '../../auth/principal.js';
import { actions } from '../../catalog/index.js';
import { GatewayError, toGatewayError } from '../errors.js';
import { unknownName } from '../lib/did-you-mean.js';
import { type JsonBodyOptions, readJsonBody } from '../lib/json-body.js';
import { DEFAULT_JSON_LIMITS } from '../lib/json-limits.js';
import { trackRequest } from '../lib/request-log.js';
import { stages } from '../lib/stage-timing.js';
import { availability, type UnavailableListing } from '../run/availability.js';
import { execute, type RunDeps } from '../run/execute.js';
import { mppCredentialOf } from '../run/rails.js';
import { RECEIPT_HEADER } from '../run/receipts.js';
import { encodeChallenge, encodeReceipt } from '../run/x402/codec.js';
import { catalogListing, descriptorOf } from './catalog-docs.js';
import { paymentDocs } from './payment-docs.js';
import { MALFORMED_PATH, sendError, sendJson } from './respond.js';

// The HTTP shim: POST /api/run/{service}/{action} runs an action through src/run; GET describes it for free.
// This door only translates HTTP to `execute` and back. The POST is the hot path: served from node:http
// directly (src/http/server.ts), with the one body reader, no express routing or middleware.

export interface RunRoutesDeps {
  run: RunDeps;
  auth: Authenticator;
  log: Logger;
  maxBodyBytes: number;
  publicUrl: string;
  /** Actions this gateway cannot run: left out of GET /api/run (hide, the default) or listed and marked. */
  unavailable?: UnavailableListing | undefined;
}

export interface RunRoutes {
  /** The free routes (catalog, descriptors, OpenAPI) and the 405s, on express. */
  router: Router;
  /**
   * `POST /api/run/{service}/{action}`, served straight from node:http without express (the hot path: nothing
   * runs per call that the call does not need). Returns false for any other request.
   */
  hot(req: IncomingMessage, res: ServerResponse): boolean;
}

const RUN_PREFIX = '/api/run/';

export function runRoutes(deps: RunRoutesDeps): RunRoutes {
  const r = Router();
  const bodyOpts: JsonBodyOptions = {
    maxBytes: deps.maxBodyBytes,
    limits: DEFAULT_JSON_LIMITS,
    empty: 'object',
  };

  // The catalog's descriptions with each paid action's payment terms (the rails' and the API key's).
  const docs = paymentDocs(deps.run.rails, () => deps.run.services.publicUrl);

  r.get('/api/run', (_req, res) => {
    res.json(docs.listing(catalogListing(availability(deps.run.services), deps.unavailable ?? 'hide')));
  });
  r.get('/openapi.json', (_req, res) => {
    res.json(docs.openapi(availability(deps.run.services), deps.unavailable ?? 'hide'));
  });

  r.get('/api/run/:service/:action', (req, res) => {
    const base = descriptorOf(`${req.params.service}/${req.params.action}`, availability(deps.run.services));
    const d = base && docs.descriptor(base);
    if (!d) return sendError(res, unknownAction(`${req.params.service}/${req.params.action}`));
    res.json(d);
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

  async function call(req: IncomingMessage, res: ServerResponse, actionId: string): Promise<void> {
    const timer = stages();
    if (timer) {
      timer.start();
      res.once('finish', () => timer.finish('response write'));
    }
    const requestId = trackRequest(deps.log, req, res, req.url ?? '');
    let principal: Principal;
    let input: unknown;
    // MPP: `Authorization: Payment <credential>` pays for the call (src/run/rails.ts); it names no account.
    const { authorization } = req.headers;
    const paid = mppCredentialOf(authorization);
    const pa = req.headers['payment-authorization'];
    const credential = paid ?? mppCredentialOf(typeof pa === 'string' ? pa : undefined);
    try {
      principal = paid ? ANONYMOUS : await deps.auth.fromAuthorization(authorization);
      timer?.mark('HTTP in, auth');
      input = await readJsonBody(req, bodyOpts);
      timer?.mark('body');
    } catch (e) {
      return sendError(res, toGatewayError(e));
    }
    // A client that hangs up cancels its call: the upstream is aborted and the hold voided.
    const cancel = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) cancel.abort();
    });
    const key = req.headers['idempotency-key'];
    const outcome = await execute(deps.run, actionId, input, principal, {
      idempotencyKey: typeof key === 'string' ? key : undefined,
      controller: cancel,
      requestId,
      transport: 'http',
      trace: req.headers,
      payment: req.headers['payment-signature'],
      credential,
    });
    timer?.mark('receipt, back to the door');
    if (res.destroyed) return;
    const parts = outcome.parts;
    if (parts) {
      res.setHeader(
        'Access-Control-Expose-Headers',
        `PAYMENT-REQUIRED, PAYMENT-RESPONSE, WWW-Authenticate, Payment-Receipt, ${RECEIPT_HEADER}`,
      );
      // MPP: its challenges (WWW-Authenticate: Payment …) beside x402's, or its Payment-Receipt.
      for (const [k, v] of Object.entries(parts.headers ?? {})) res.setHeader(k, v);
      // x402 v2 over HTTP: the settlement receipt in PAYMENT-RESPONSE, the challenge in PAYMENT-REQUIRED (the 402
      // body mirrors it, docs/spec.md §7).
      if (parts.paymentResponse) res.setHeader('PAYMENT-RESPONSE', encodeReceipt(parts.paymentResponse));
      if (parts.paymentRequired) {
        res.setHeader('PAYMENT-REQUIRED', encodeChallenge(parts.paymentRequired));
        res.setHeader('Cache-Control', 'no-store');
        return sendJson(res, 402, parts.paymentRequired);
      }
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
    if (outcome.warnings) body.warnings = outcome.warnings;
    sendJson(res, 200, body);
  }

  function hot(req: IncomingMessage, res: ServerResponse): boolean {
    const url = req.url;
    if (req.method !== 'POST' || url === undefined || !url.startsWith(RUN_PREFIX)) return false;
    const q = url.indexOf('?');
    const path = q < 0 ? url.slice(RUN_PREFIX.length) : url.slice(RUN_PREFIX.length, q);
    const slash = path.indexOf('/');
    if (slash <= 0 || slash === path.length - 1 || path.indexOf('/', slash + 1) >= 0) return false;
    let actionId: string;
    try {
      actionId = `${decodeURIComponent(path.slice(0, slash))}/${decodeURIComponent(path.slice(slash + 1))}`;
    } catch {
      trackRequest(deps.log, req, res, url);
      req.resume();
      sendError(res, MALFORMED_PATH);
      return true;
    }
    call(req, res, actionId).catch((err: unknown) => {
      // A database that does not answer (an x402 payment's look-up) is the outage's 503, logged once by the
      // gateway's health; anything else is a bug.
      const e = toGatewayError(err);
      deps.run.health?.report(err);
      if (e.code === 'internal') deps.log.error({ err }, 'unhandled error');
      if (!res.headersSent) sendError(res, e);
    });
    return true;
  }

  return { router: r, hot };
}

function unknownAction(actionId: string): GatewayError {
  const ids = actions.map((a) => a.id);
  return new GatewayError(
    'not_found',
    unknownName('action', actionId, ids, 'GET /api/run lists the catalog'),
  );
}
