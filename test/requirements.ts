// The spec as a requirements list. Tests cite the rule they verify (by putting its id in the test name or a
// comment); test/contract/requirements.test.ts fails if a rule here is cited by no test.

export const REQUIREMENTS = {
  // billing
  'billing:charge-only-on-success':
    'A call is charged only when it succeeds; any failure charges nothing (spec §1.3, §7).',
  'billing:price-known-before': 'Every call has a fixed price known before it runs (spec §1.2).',
  'billing:max-cost-guard':
    'max_cost_cents is a ceiling accepted on every action; a higher price is refused, not charged (§2.2).',
  'billing:recorded-to-the-cent': 'Each call is recorded in the transaction history (§1.4).',
  'billing:no-overdraft':
    'Concurrent calls never take an account below zero; exactly the affordable ones run.',
  'billing:hold-resolves-once': 'A hold is posted or voided exactly once, never more than its amount.',
  'billing:crash-recovery': 'A process killed between hold and capture leaves no charge after restart.',
  'billing:idempotent-replay': 'Same Idempotency-Key and body replays the result with no new charge.',
  'billing:idempotency-mismatch': 'Same key with a different body is refused with 422.',
  'billing:idempotency-in-flight': 'Same key while the first call runs is refused with 409.',
  'billing:double-entry': 'Ledger entries are append-only and sum to zero.',
  // http shim
  'http:envelope': 'Success is HTTP 200 with { ok, data, charged_cents, transaction_id } (§2.1).',
  'http:descriptor': 'GET /api/run/{service}/{action} is a free descriptor; GET /api/run the catalog (§4).',
  'http:openapi': 'GET /openapi.json is an OpenAPI 3.1.0 document with info.version 1.0.0 (§9).',
  'http:unpaid-402': 'A paid call without credentials gets 402 naming the ways to pay (§5, §7).',
  'http:strict-rejects-unknown': 'Strict actions reject unknown fields; others pass them through (§4).',
  'http:hostile-input':
    'Malformed JSON, wrong content type, oversized or deeply nested bodies get a clear 4xx.',
  'http:not-configured': 'An action whose vendor is not configured answers 503 not_configured, uncharged.',
  // auth
  'auth:api-key': 'One API key (prefix ending _sk_) covers every catalog operation (§5).',
  'auth:revocation': 'A revoked key stops working at once.',
  // catalog
  'catalog:constraints': 'Each action enforces the lengths, enums, ranges and counts of spec §2-§4.',
  'catalog:prices': 'Prices match the spec §4.1 price list.',
  // operations
  'ops:graceful-shutdown': 'Shutdown finishes in-flight calls and resolves their holds.',
  'ops:config-errors': 'A bad configuration value stops start-up with every problem listed.',
} as const;

export type Requirement = keyof typeof REQUIREMENTS;
