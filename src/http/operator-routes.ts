import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Request, type Response, Router } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import { GatewayError, invalidInput, toGatewayError } from '../errors.js';
import { readJsonBody } from '../lib/json-body.js';
import { DEFAULT_JSON_LIMITS } from '../lib/json-limits.js';
import {
  adjust,
  checkKey,
  checkReason,
  type OperatorDeps,
  parseUsdField,
  refund,
  resolveAccount,
} from '../run/operator-money.js';
import { zodIssues } from '../run/zod-issues.js';
import { sendJson } from './respond.js';

// The operator's endpoints: POST /api/operator/refund and POST /api/operator/adjust, the CLI's `refund` and
// `adjust` over HTTP (docs/operator.md "Refunds and adjustments"). Not a paid path and not for accounts: a bearer
// token of the operator's (TOLLGATE_ADMIN_TOKEN, or the per-start token a SQLite gateway keeps in its data dir
// for the CLI beside it), compared in constant time; an account's API key is refused with 403. Refusals are the
// closed error union with our words (what did not move), without the paid paths' `charged_cents`.

export const OPERATOR_PATHS = { refund: '/api/operator/refund', adjust: '/api/operator/adjust' } as const;
const BODY_MAX = 16 * 1024;
const REALM = 'Bearer realm="tollgate-operator"';

export interface OperatorRoutesDeps extends OperatorDeps {
  /** Bearer tokens that may use the endpoints; none: they answer 503 not_configured. */
  tokens: string[];
  log: Logger;
}

const usd = z.union([z.string(), z.number()]);
const operator = z.string().min(1).max(100).optional().describe('who asks, for the record');
const refundBody = z.strictObject({
  transaction_id: z.string().min(1).max(100),
  usd: usd.optional(),
  reason: z.string(),
  operator,
});
const adjustBody = z.strictObject({ account: z.string().min(1).max(200), usd, reason: z.string(), operator });

function sendOperatorError(res: ServerResponse, e: GatewayError): void {
  const error = {
    code: e.code,
    message: e.message,
    retryable: e.retryable,
    ...(e.details && { details: e.details }),
  };
  sendJson(res, e.status, { ok: false, error });
}

export function operatorRoutes(deps: OperatorRoutesDeps): Router {
  const digests = deps.tokens.map((t) => createHash('sha256').update(t).digest());
  const r = Router();

  const handle =
    (work: (body: unknown, req: Request) => Promise<Record<string, unknown>>) =>
    async (req: Request, res: Response): Promise<void> => {
      try {
        authorize(req, digests);
        const body = await readJsonBody(req, {
          maxBytes: BODY_MAX,
          limits: DEFAULT_JSON_LIMITS,
          empty: 'refuse',
        });
        res.setHeader('Cache-Control', 'no-store');
        sendJson(res, 200, { ok: true, ...(await work(body, req)) });
      } catch (err) {
        const e = toGatewayError(err);
        if (e.code === 'internal') deps.log.error({ err, path: req.path }, 'operator endpoint failed');
        if (e.code === 'unauthorized') res.setHeader('WWW-Authenticate', REALM);
        if (!req.complete) {
          res.setHeader('Connection', 'close');
          req.resume();
        }
        sendOperatorError(res, e);
      }
    };

  r.post(
    OPERATOR_PATHS.refund,
    handle(async (raw, req) => {
      const b = parse(refundBody, raw);
      return refund(deps, {
        transactionId: b.transaction_id,
        micros: b.usd === undefined ? undefined : parseUsdField(b.usd, 'usd', false),
        reason: checkReason(b.reason),
        key: checkKey(idempotencyKey(req)),
        by: b.operator ?? 'http',
      });
    }),
  );
  r.post(
    OPERATOR_PATHS.adjust,
    handle(async (raw, req) => {
      const b = parse(adjustBody, raw);
      const micros = parseUsdField(b.usd, 'usd', true);
      const reason = checkReason(b.reason);
      const key = checkKey(idempotencyKey(req));
      const account = await resolveAccount(deps.ledger, b.account);
      return adjust(deps, { accountId: account.id, micros, reason, key, by: b.operator ?? 'http' });
    }),
  );
  for (const path of Object.values(OPERATOR_PATHS)) {
    r.all(path, (req, res) => {
      req.resume();
      res.setHeader('Allow', 'POST');
      sendOperatorError(res, new GatewayError('method_not_allowed', `Use POST ${path}.`));
    });
  }
  return r;
}

function authorize(req: IncomingMessage, digests: Buffer[]): void {
  if (digests.length === 0) {
    throw new GatewayError(
      'not_configured',
      'The operator endpoints are off on this gateway: set TOLLGATE_ADMIN_TOKEN (32+ characters) to use them.',
      { details: { env: ['TOLLGATE_ADMIN_TOKEN'] } },
    );
  }
  const header = req.headers.authorization;
  const token = header === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
  if (token === undefined) {
    throw new GatewayError(
      'unauthorized',
      'The operator endpoints need "Authorization: Bearer <TOLLGATE_ADMIN_TOKEN>".',
    );
  }
  const presented = createHash('sha256').update(token).digest();
  // Every digest is compared, so the time taken says nothing about which one (or none) matched.
  let ok = false;
  for (const d of digests) ok = timingSafeEqual(presented, d) || ok;
  if (ok) return;
  if (token.startsWith('tg_sk_')) {
    throw new GatewayError(
      'forbidden',
      "An account's API key cannot use the operator endpoints (not even the operator account's): use TOLLGATE_ADMIN_TOKEN.",
    );
  }
  throw new GatewayError('unauthorized', "The bearer token is not this gateway's TOLLGATE_ADMIN_TOKEN.");
}

function idempotencyKey(req: Request): string | undefined {
  const v = req.headers['idempotency-key'];
  return Array.isArray(v) ? v[0] : v;
}

function parse<T>(schema: z.ZodType<T>, raw: unknown): T {
  const r = schema.safeParse(raw);
  if (!r.success) throw invalidInput(zodIssues(r.error, raw));
  return r.data;
}
