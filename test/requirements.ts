// The spec (docs/spec.md; the § numbers below are its sections) as a requirements list. Tests cite the rule they
// verify (by putting its id in the test name or a comment); test/contract/requirements.test.ts fails if a rule here
// is cited by no test.

export const REQUIREMENTS = {
  // billing
  'billing:charge-only-on-success':
    'A call is charged only when it succeeds; any failure charges nothing (docs/spec.md §1.3, §7).',
  'billing:price-known-before': 'Every call has a fixed price known before it runs (docs/spec.md §1.2).',
  'billing:max-cost-guard':
    'max_cost_cents is a ceiling accepted on every action; a higher price is refused, not charged (§2.2).',
  'billing:recorded-to-the-cent': 'Each call is recorded in the transaction history (§1.4).',
  'billing:no-overdraft':
    'Concurrent calls never take an account below zero; exactly the affordable ones run.',
  'billing:hold-resolves-once': 'A hold is posted or voided exactly once, never more than its amount.',
  'billing:crash-recovery': 'A process killed between hold and capture leaves no charge after restart.',
  'billing:unknown-hold':
    'A capture or void of a hold the ledger never recorded (lost in a database crash) is refused as unknown and moves nothing.',
  'billing:idempotent-replay': 'Same Idempotency-Key and body replays the result with no new charge.',
  'billing:idempotency-mismatch': 'Same key with a different body is refused with 422.',
  'billing:idempotency-in-flight': 'Same key while the first call runs is refused with 409.',
  'billing:failed-job-refunded':
    'A job charged at its start (render, crawl, extraction) that fails is refunded once.',
  'billing:double-entry': 'Ledger entries are append-only and sum to zero.',
  // limits per API key (issue 22; docs/decisions.md "Limits per API key")
  'keys:limits-stored':
    'A key carries a maximum per call, a daily and a monthly cap (UTC windows) and allowed services or actions; a change sets, keeps or removes (none) each, and a cap set mid-window counts what the key already spent in it.',
  'keys:limits-enforced':
    'Every cap on a hold (the key day and month, an OAuth app day, the router day) is checked and reserved with the hold; capture gives back the unused part, void all of it.',
  'keys:cap-refusal':
    'A call past a daily or monthly cap is a 429 with Retry-After naming the limit and when it resets (ISO time), nothing charged.',
  'keys:max-call':
    "A call above the key's maximum per call is a 403 before the hold; a metered call's worst case counts (lower max_tokens).",
  'keys:actions':
    'A key limited to services or actions gets a 403 for any other, before anything runs (llm: the model router).',
  'keys:mcp': 'Over MCP a limit refusal is a tool error with the same code and message, nothing charged.',
  'keys:race':
    '1,000 parallel calls against a daily, a monthly cap or a maximum per call never pass it by a cent: on SQLite in one process, across two replicas on PostgreSQL.',
  'keys:refund-uncounts':
    'A refund comes off the cap counters the call counted against, in the window it was charged in.',
  'keys:usage-read':
    'keyUsage(account): every key with its limits and what it spent today and this month (UTC), net of refunds.',
  'keys:limit-change-cache':
    'A limit change applies at once in the process that made it, within TOLLGATE_KEY_CACHE_SECONDS elsewhere.',
  'keys:cli':
    'tollgate keys create <account> --max-call-usd --daily-limit-usd --monthly-limit-usd --actions; keys limit <key_id> (none removes one); keys list --json shows limits and spend.',
  'keys:dashboard':
    "The dashboard shows each key's limits with what it spent today and this month, and edits them (CSRF forms); an owner's key with limits cannot sign in.",
  'keys:teams-owners-set':
    "Only owners set or change a key's limits (any key of the account), recorded on the event log (dashboard and CLI); members and billing see their own keys' limits and spend, read only.",
  'keys:teams-inherit':
    'A key a member or billing member makes has the limits of the key its session signed in with; limits in its form are refused; an owner may make a key with limits for any member.',
  'keys:teams-signin':
    "A limited key signs in to the dashboard unless its member is an owner; an owner's session ends when its key gains limits, a member's does not.",
  'keys:raise-limit-fix':
    "With card payments on, a refusal by a key's or an OAuth app's own limit carries details.fix raise_limit with the page that raises it (owners change it there, others are told an owner must), and the MCP door asks the host to open it as for a top-up.",
  // the operator's refunds and adjustments (docs/decisions.md "Refunds and adjustments by the operator")
  'billing:refund-within-charge':
    'An operator refund (CLI refund, POST /api/operator/refund) gives back all or part of a charge, never more than the call was charged in total, also when refunds run at once in several processes or replicas; a partly refunded call stays succeeded.',
  'billing:refund-idempotent':
    'A refund moves money once per request: the same command retried (same call, amount and reason, or the same idempotency key) refunds once; different partial refunds all go through.',
  'billing:refund-linked':
    'Each operator refund is its own call_refund row in tx, the dashboard and platform/transactions, naming the call it gave back; the rows add up to what moved.',
  'billing:refund-accountless-refused':
    'A call paid without an account (x402, MPP) is not refunded into the ledger: refused, saying where its money went.',
  'billing:adjust-within-holds':
    'A negative adjustment never takes what pending holds need (balance − held + usable line ≥ 0), also by the CLI beside a running SQLite gateway (it goes through the gateway, which sees its holds).',
  'billing:adjust-audited':
    'An adjustment (CLI adjust, POST /api/operator/adjust) is an audited ledger movement: signed amount, the reason, who and when, double entry, in the history; --reason is required.',
  'ops:operator-endpoints':
    'The operator endpoints take only the operator token (401 without or with a wrong one, 403 for an account API key, 503 when none is configured); a bad request is a 4xx naming the field.',
  'billing:operator-moves-elsewhere':
    "An operator refund comes off the cap counters the call counted against; a refund or adjustment is reported to the account's alerts and recorded on its event log as the operator's; a team member's history shows the refunds of its own keys' calls only.",
  'auth:key-cache':
    'API keys are cached for TOLLGATE_KEY_CACHE_SECONDS: a revocation is immediate in the process that revokes, within that bound elsewhere; unknown keys are never cached.',
  'db:unavailable-503':
    'A database that does not answer (PostgreSQL down or restarting, a SQLite disk full or read-only) is a retryable 503 with Retry-After that says nothing was charged, on every door; never a 500.',
  'db:outage-once':
    'An outage is logged once with its cause (not per request); calls are refused at admission and /readyz is unready until the database answers again.',
  'db:decided-without':
    "While the database does not answer, the gateway still answers what it can decide without it (an API key seen within TOLLGATE_KEY_CACHE_SECONDS, MCP initialize and tools/list, the x402 challenge, OAuth discovery, the sign-in and sign-up forms) and refuses the rest with the outage's 503.",
  'db:error-pages':
    'During an outage a person sees a readable HTML 503 page (dashboard, sign-in, sign-up, the OAuth pages) and a program a JSON 503 (OAuth token and registration: temporarily_unavailable), each with Retry-After; never a 500 or a stack trace.',
  'db:holds-resolved':
    'A capture or void that could not be written while the database was away is resolved, idempotently, to what the caller was told, as soon as it answers again.',
  'db:ids-vouched':
    'Every transaction id a caller receives exists in the ledger with the status and amount it was told (a result the ledger could not record goes out uncharged, without an id or receipt).',
  'storage:unavailable-503':
    'The object store going away gives a retryable 503, uncharged, for file actions (no link into a store known to fail), /readyz unready, and nothing else breaks; links are issued again once it answers.',
  'billing:one-durable-commit':
    "A paid call is one durable commit (SQLite: the hold is an in-process reservation, the capture is fsync'd before it is acknowledged, off the event loop); an acknowledged charge survives kill -9.",
  // scale-out (docs/operator.md "Scale out"; docs/decisions.md "PostgreSQL, replicas and all cores")
  'scale:two-replicas':
    "Two replicas on one PostgreSQL and one bucket behave as one gateway: k of N, one charge per key, one settlement per payment, files, OAuth and caps across both, a dead replica's holds voided within its lease.",
  'scale:workers':
    'serve --workers N runs N replicas behind one port on PostgreSQL; refused above 1 on SQLite.',
  'scale:migrations': 'Versioned migrations run exactly once when replicas start together.',
  'scale:one-schema':
    'One migration list gives SQLite and PostgreSQL the same store tables and columns, and upgrades a database made by an earlier release without loss.',
  'billing:one-lifecycle':
    'Every money movement (hold, capture, void, refund, credit) goes through one lifecycle module in src/run.',
  // credit lines and card money (§5, §8: "a welcome credit line of 2 USD once a card is on file; the card
  // settles only actual usage"; docs/decisions.md "Card payments and the credit line")
  'billing:credit-line':
    'Usage beyond the prepaid balance draws on the credit line, never past it; balance − held + line ≥ 0.',
  'billing:credit-line-once': 'A credit line is granted once per account and once per card fingerprint.',
  'billing:line-frozen':
    'A frozen line takes no new hold (402 saying why and where to fix it); prepaid money still pays.',
  'billing:settle-actual-usage':
    'A settlement charges exactly what was drawn (whole cents), one at a time per account; success restores the line.',
  'billing:declined-freezes-line': 'A declined settlement freezes the line until a charge succeeds.',
  'billing:topup-once': 'A top-up is credited exactly once, however often its confirmation arrives.',
  'billing:refund-dispute-debit':
    'Refunds and disputes of card payments debit the account (never through the line) and show in its history.',
  'billing:refund-failed-given-back':
    'A refund Stripe reports failed or cancelled gives its debit back exactly once, whatever order its events arrive in.',
  'billing:dispute-inquiry':
    'A dispute inquiry (warning_*) moves no money and leaves the line usable; a refund during it debits once in all.',
  'billing:dispute-chargeback':
    'A chargeback debits once and freezes the line; funds Stripe reinstates (won, partly won) are given back once.',
  'billing:settlement-off-session':
    'A settlement is an off-session card PaymentIntent Stripe accepts; an idempotency conflict is an unknown outcome, never a decline.',
  'billing:history-complete':
    'Credits, top-ups, line grants and settlements are in the transaction history with the calls.',
  'billing:webhook-verified':
    'Stripe webhooks are verified by signature and timestamp; forged, altered, stale or replayed ones change nothing.',
  'billing:usage-by-day':
    'Spend per UTC day and service is read from the ledger (calls that succeeded, net of refunds).',
  // the pages people use (docs/decisions.md "Sign-up, sign-in and the account dashboard")
  'account:landing':
    '/ says what the gateway is and links to the dashboard, the catalog, /openapi.json and the MCP URL.',
  'account:signup':
    'A person creates an account and sees its API key once; local sign-up is closed unless TOLLGATE_SIGNUP=open.',
  'account:federated-signup':
    'Through the upstream OIDC provider the first sign-in creates the account and shows its first key once.',
  'account:sign-in': 'An API key signs in to the dashboard; a wrong one does not; attempts are rate limited.',
  'account:sign-in-returns':
    'A dashboard page opened signed out goes through sign-in and straight back to it; the return path is only ever a dashboard path, never another site (no open redirect).',
  'account:fix-pages':
    '/account/top-up and /account/card name the signed-in account and its available money and offer the top-up and card forms; their URLs carry no credential.',
  'account:session-cookies': 'Dashboard sessions are HttpOnly, SameSite=Lax cookies, Secure behind TLS.',
  'account:csrf': 'Every form of the pages refuses a POST without the CSRF token bound to the browser.',
  'account:signup-rate-limit': 'Sign-ups are rate limited per client IP (429 with Retry-After).',
  'account:keys':
    'Keys are created on the dashboard (shown once) and revoked; revoking the signed-in key ends the session.',
  'account:apps':
    'OAuth-connected apps are listed with their daily limits, which can be changed; apps can be revoked.',
  'account:csv': 'The transaction history exports as CSV with the filters, spreadsheet formulas defused.',
  'account:dashboard-in-browser':
    'Sign-up, card, line, paid calls, usage, top-up, keys and apps work in a real browser (headless Chromium).',
  'account:chart-matches-ledger': "The usage chart and tables show the ledger's numbers, by day and service.",
  // team accounts (docs/decisions.md "Team accounts")
  'team:roles':
    'An account has members with roles (owner, billing, member); its first owner is the member its own credentials act as.',
  'team:invite-once':
    'A member joins by a one-time link (unguessable, stored hashed, expires in 7 days, single use) and gets a key of its own.',
  'team:authz':
    'Every dashboard route checks the role: a member manages only its own keys and sees only its own calls; billing makes no keys for others; other accounts are refused.',
  'team:last-owner':
    'An account always keeps at least one owner, also when owners act at once on two replicas.',
  'team:remove-stops-keys':
    "Removing a member revokes its keys and ends its sessions at once (other replicas' key caches within TOLLGATE_KEY_CACHE_SECONDS).",
  'team:founder-removed':
    "Removing the first owner lets go of the account's upstream identity and the OAuth grants it made without a key.",
  'team:keys-own':
    'Each key belongs to a member (keys made by the operator: to the first owner); owners see and manage all keys.',
  'team:spend-per-key':
    "Spend per member and per key is read from the ledger's calls (their principal is the key id), on the dashboard and as CSV.",
  'team:member-own-usage': "A member's usage chart, history and CSV are its own keys' calls.",
  'team:audit':
    'Who invited, joined, removed, changed a role or a limit, made or revoked a key is recorded and shown.',
  'team:in-browser':
    'Invite, accept in a second browser, sign in, make a key and a paid call, see spend per member and key, CSV, removal and the log, in Chromium.',
  // http shim
  'http:envelope': 'Success is HTTP 200 with { ok, data, charged_cents, transaction_id } (§2.1).',
  'http:descriptor': 'GET /api/run/{service}/{action} is a free descriptor; GET /api/run the catalog (§4).',
  'http:openapi': 'GET /openapi.json is an OpenAPI 3.1.0 document with info.version 1.0.0 (§9).',
  'http:unpaid-402': 'A paid call without credentials gets 402 naming the ways to pay (§5, §7).',
  'http:passthrough-warnings':
    "Extra fields on non-strict actions are passed through and named in the answer's warnings (typos too).",
  'http:strict-rejects-unknown': 'Strict actions reject unknown fields; others pass them through (§4).',
  'http:hostile-input':
    'Malformed JSON, wrong content type, oversized or deeply nested bodies get a clear 4xx.',
  'http:required-fields': 'A missing field is reported as "<field> is required", for every kind of schema.',
  'http:malformed-path':
    'A malformed percent-escape in any request path is a 400 invalid_input, never a 500 or an error log.',
  'http:rate-limit': 'Each account has a call rate limit; beyond it 429 with Retry-After, uncharged.',
  'http:not-configured': 'An action whose vendor is not configured answers 503 not_configured, uncharged.',
  // auth
  'auth:api-key': 'One API key (prefix ending _sk_) covers every catalog operation (§5).',
  'auth:revocation': 'A revoked key stops working at once.',
  'auth:one-bearer-parser':
    'Every door reads Authorization with one parser (RFC 9110 credentials): what one accepts, none refuses.',
  // OAuth for MCP hosts (§5 "OAuth … on MCP"; the grant details are ours: docs/decisions.md "OAuth")
  'oauth:operator-revoke':
    'The operator can list and revoke the apps connected to an account; revocation is immediate.',
  'oauth:discovery':
    'RFC 8414 and OIDC discovery at the root well-known paths: S256 only, iss parameter, registration, revocation.',
  'oauth:prm-names-as':
    'Protected-resource metadata and the 401 challenge name the authorization server and scope.',
  'oauth:dcr':
    'Dynamic client registration (RFC 7591) for public native clients, without registration tokens.',
  'oauth:cimd-advertised':
    'Client ID metadata documents are supported; an unfetchable client id URL is refused.',
  'oauth:cimd':
    'A host identifying itself by a client ID metadata document (https client_id) connects without registering; the document gives the redirect URIs and the name shown with its host; public clients only.',
  'oauth:cimd-refusals':
    'A document is refused (error page, never a redirect) when its client_id differs from its URL, it is unreachable, not a 200, redirected, over 5 KiB, not a JSON object, or not a public client; a redirect URI it does not list is refused.',
  'oauth:cimd-ssrf':
    'Documents are fetched over https only, through the SSRF guard (TOLLGATE_FETCH_ALLOW), verified TLS, within 5 KiB and 2.5 s, and within the per-IP registration budget.',
  'oauth:cimd-cache':
    'A fetched document is reused for the freshness its cache headers give (30 s to 24 h); a failure is never remembered.',
  'oauth:dcr-application-type':
    'Dynamic registration still serves hosts without documents and accepts application_type native or web (SEP-837) with the redirect URI rules of each.',
  'oauth:redirect-uri-exact':
    'Redirect URIs match exactly (loopback ports included); a mismatch is never redirected to.',
  'oauth:redirect-uri-https': 'Registered redirect URIs are https, or plain http only on a loopback address.',
  'oauth:pkce-s256-only': 'PKCE is required of every client and only S256 is accepted.',
  'oauth:resource-indicator':
    'Tokens are only issued for the /mcp resource (RFC 8707); another resource is refused.',
  'oauth:iss-in-response': 'The authorization response carries iss (RFC 9207).',
  'oauth:short-lived-tokens': 'Access tokens are short-lived (TOLLGATE_OAUTH_ACCESS_TOKEN_TTL_SECONDS).',
  'oauth:code-single-use':
    'An authorization code works once; a replay is refused and revokes what it issued.',
  'oauth:refresh-rotation': 'Refresh tokens rotate on use; reusing an old one revokes the grant.',
  'oauth:revocation': 'Revoking a token (RFC 7009) stops the grant at /mcp on the next request.',
  'oauth:state-persists':
    'Clients, grants, sessions, tokens and keys live in the database: a restart logs nobody out.',
  'oauth:wrong-audience-refused': 'A token issued for another resource is refused at /mcp.',
  'oauth:expired-token-refused': 'An expired access token is refused at /mcp.',
  'oauth:insufficient-scope-403':
    'A token without the mcp scope gets 403 insufficient_scope naming the scope.',
  'oauth:token-only-for-mcp':
    'OAuth access tokens are accepted on /mcp only (their audience), not on other doors.',
  'oauth:same-account':
    'An OAuth caller pays from the signed-in account like an API key: same balance, ledger, prices.',
  'oauth:sdk-clients': 'The v2 and v1 MCP SDK clients complete the whole flow knowing only the /mcp URL.',
  'oauth:api-key-sign-in': 'The sign-in page accepts an existing API key; a wrong one signs nobody in.',
  'oauth:federated-sign-in':
    'Sign-in through an upstream OpenID Connect provider; the first creates the account (its line comes with a card).',
  'oauth:federated-state-bound':
    'The upstream callback needs the state bound to the browser that started it, once.',
  'oauth:no-token-passthrough': 'Upstream tokens are never stored, logged, forwarded, or accepted at /mcp.',
  'oauth:consent-shows-client-scopes-spend':
    'Consent names the client, the scopes, the balance and the daily limit.',
  'oauth:daily-limit': "The daily spend limit chosen at consent caps that client's paid calls per UTC day.",
  'oauth:csrf': 'Sign-in and consent forms refuse a POST without the CSRF token bound to the browser.',
  'oauth:secure-cookies': 'Behind TLS every sign-in cookie is Secure, HttpOnly and SameSite=Lax.',
  'oauth:sign-in-rate-limit': 'Sign-in attempts are rate limited per client IP (429 with Retry-After).',
  'oauth:tokens-hashed-at-rest': 'Tokens and codes are stored only as hashes.',
  'oauth:no-secrets-logged': 'No token, code, API key or cookie reaches the logs.',
  'oauth:pages-accessible': 'Pages are accessible server-rendered HTML with no script or external asset.',
  'oauth:pages-in-browser': 'The sign-in and consent pages work in a real browser (headless Chromium).',
  // catalog
  'catalog:constraints': 'Each action enforces the lengths, enums, ranges and counts of docs/spec.md §2-§4.',
  'catalog:prices': 'Prices match the docs/spec.md §4.1 price list.',
  // propstats (docs/spec.md §4.5) and propdata (docs/spec.md §4.6)
  'propstats:location-required':
    'properties, sale-listings and rental-listings need address, zipCode, city+state or latitude+longitude+radius.',
  'propstats:estimate-subject': 'value-estimate and rent-estimate need address or latitude+longitude (§4.5).',
  'propstats:radius-with-coordinates':
    'radius (> 0, at most 100 miles) goes with latitude and longitude (§4.5, §8).',
  'propstats:range-syntax': "Filters take ranges like '2-4'; they reach the vendor in its own syntax (§4.5).",
  'propstats:no-results-uncharged':
    'A property search or lookup that matches nothing is an upstream 404: 404 resource_not_found, not charged.',
  'propstats:passthrough': 'Additional properties are accepted and forwarded to the vendor (§4.5).',
  'propdata:identification-required':
    'property-detail, avm and parcel need a complete identification (id, address, parts, apn+fips, …) (§4.6).',
  'propdata:avm-404-unmatched':
    'propdata/avm answers 404 when the address cannot be confidently matched, and charges nothing (§4.6, §7).',
  'propdata:avm-numbers': 'avm, avmMin, avmMax and confidence (0-100) are returned as numbers (§4.6).',
  'propdata:skiptrace-rules':
    'skiptrace needs address with city+state or zip, or first+last name with a location, or phone, or email.',
  'propdata:parcel-polygon':
    'parcel polygon: at least 3 points, each exactly { latitude, longitude } (§4.6).',
  'propdata:parcel-geojson': 'parcel returns the boundary as GeoJSON (§4.6).',
  'propdata:passthrough': 'Additional properties are accepted and forwarded to the vendor (§4.6).',
  // mcp (docs/spec.md §1.5, §5; docs/decisions.md "MCP")
  'mcp:fast-path':
    'A plain tools/call is served without the SDK machinery and answers exactly as the SDK path would.',
  'mcp:both-eras':
    'One /mcp endpoint serves 2026-07-28 clients and 2025-era clients (initialize, stateless).',
  'mcp:tools-from-catalog':
    'Every catalog action is a tool service_action in catalog order: title, priced description, input schema, four annotations, _meta price.',
  'mcp:no-output-schema':
    'Tools advertise no outputSchema, so error results reach every client (decisions.md).',
  'mcp:paid-call-charged':
    'tools/call runs src/run/execute: success returns data + charged_cents + transaction_id and is in the ledger.',
  'mcp:invalid-args-iserror': 'Invalid arguments are an isError result with our message and field paths.',
  'mcp:iserror-ours':
    'Failures are isError results in our words: never vendor text, an SDK message or a stack.',
  'mcp:not-configured': 'not_configured names what the operator must set, as an isError result.',
  'mcp:insufficient-credit':
    'Insufficient credit is an isError result saying how to top up; nothing is charged.',
  'mcp:top-up-url-elicitation':
    'A paid call the balance or credit line cannot cover asks a client that declared URL elicitation to open the dashboard page that fixes it (2026-07-28: input_required; 2025 era: -32042); once the person has paid the call runs once, charged once (decisions.md "Top up without leaving the host").',
  'mcp:top-up-url-in-words':
    'A client that declared no URL elicitation gets the refusal as a tool error naming the same URL in words and saying nothing was charged.',
  'mcp:idempotency-meta': '_meta["tollgate/idempotency-key"] replays a finished call without a new charge.',
  'mcp:max-cost': 'max_cost_cents is accepted on every tool and refuses a higher price uncharged.',
  'mcp:no-key-401': 'No or a bad bearer token → 401 with WWW-Authenticate pointing at RFC 9728 metadata.',
  'mcp:protected-resource-metadata':
    'RFC 9728 metadata is served at /.well-known/oauth-protected-resource/mcp.',
  'mcp:dns-rebinding': 'Host and Origin are validated against configurable allowlists (403 otherwise).',
  'mcp:transport-edges':
    'Stateless transport edges: 405 for GET/DELETE, JSON-RPC errors for bad bodies and tools.',
  'mcp:progress': 'A blocking call sends notifications/progress when the client sent a progressToken.',
  'mcp:cancel-uncharged': 'Cancelling a call (either era) aborts the upstream and voids the hold.',
  'mcp:handles-bound-to-account':
    'Start + poll tools use server-minted handles bound to the account; another account’s handle is not found.',
  'mcp:resources':
    'Resources tollgate://catalog (price list) and tollgate://account (caller’s balance, recent calls).',
  'mcp:server-card':
    'The MCP server card (SEP-2127, experimental) is served at /mcp/server-card and /.well-known/mcp/server-card.json: identity, remotes and protocol versions consistent with the live server, CORS, cache headers and ETag.',
  'mcp:registry-server-json':
    "server.json in the MCP registry's format (schema 2025-12-11) is generated from the catalog and config; the committed copy is current.",
  // files (docs/spec.md §2.3, §4.4, §8)
  'files:upload-put-get':
    'files/upload returns file_id, put_url, get_url; PUT of exactly size_bytes then GET returns the bytes.',
  'files:size-limit':
    'size_bytes and fetched files are at most 104857600 bytes; larger is a clear 4xx, uncharged.',
  'files:signed-links':
    'put_url/get_url are signed and expire: a tampered, expired or wrong-method link is refused (403).',
  'files:put-exact-size': 'A PUT whose length is not the declared size_bytes is refused and stores nothing.',
  'files:owner-scoped': 'Files belong to the caller’s account; another account’s file_id is not found.',
  'files:persist': 'Stored files (and their links) survive a gateway restart (§4.4 "files persist").',
  'files:list':
    'files/list lists the caller’s own files (free, needs a key) so agents check before re-uploading.',
  'files:upload-from-url':
    'files/upload_from_url fetches server-side through the SSRF guard; private addresses are refused uncharged.',
  'files:stream-memory':
    'A 100 MB upload_from_url is streamed into the store (local or S3): the gateway’s memory stays flat.',
  'files:s3-presigned':
    'With S3 storage, put_url/get_url are presigned bucket URLs (size signed into the PUT); a direct PUT becomes stored on the next read.',
  'files:s3-wrong-size':
    'An object of another size than declared never becomes the file (S3 refuses it; else deleted).',
  'files:s3-unavailable': 'A failing bucket is a 503, uncharged, with no storage text shown.',
  'files:local-shared-dir':
    'Processes sharing one data dir share its files safely: one signing secret, each object written once.',
  'files:shared-storage':
    'Gateways sharing one bucket (and metadata store) serve each other’s files and honour each other’s links.',
  // mediastage (docs/spec.md §2.4, §4.2)
  'mediastage:upload':
    'mediastage/upload returns { upload_url, file_url } from fal storage; PUT then GET works.',
  'mediastage:vendor-failure-uncharged': 'A fal storage 4xx/5xx charges nothing and shows no vendor text.',
  // videoasm (docs/spec.md §2.5, §2.6, §4.2, §7)
  'videoasm:flow':
    'upload → create_project → validate → put_composition → render → result, each charged once.',
  'videoasm:upload-content-types': 'videoasm/upload accepts only the spec’s video, audio and image types.',
  'videoasm:composition-schema':
    'Compositions follow §2.5: v 1, format enums, track kinds, clip fields, four source kinds, volume 0-4.',
  'videoasm:composition-wrapper': 'put_composition and validate accept a nested composition wrapper (§4.2).',
  'videoasm:zoom-above-1-invalid': 'A reframe zoom above 1.0 fails validation (§2.5).',
  'videoasm:validate-result':
    'validate returns { valid, errors[{code, stage, category, retryable, message, fix?}] }; valid:false is charged.',
  'videoasm:render-interactive-403':
    'render with priority interactive → 403 forbidden, before any hold (§7).',
  'videoasm:render-job-handle':
    'render returns a job_id bound to the caller; result polls it; another account’s job_id is not found.',
  'videoasm:ids-bound-to-account':
    'Project and media ids are bound to the caller’s account; another account’s ids are not found.',
  'videoasm:vendor-failure-uncharged':
    'A CueFrame error envelope or 4xx/5xx charges nothing and shows no vendor text.',
  'supersearch:cites-transaction': 'platform/supersearch evidence items each cite a transaction id (§4.3).',
  'supersearch:intent-routing':
    'With only a query, an intent classifier picks the facets, recency and social platform (§4.3).',
  'supersearch:facet-sources':
    'Each facet asks its own kind of source (news vertical with recency, research and code engines, …).',
  'supersearch:budget':
    'budgetCents caps the internal source calls; facets that do not fit are skipped and said.',
  'supersearch:merge':
    'Results are merged across facets, deduplicated, and name every facet that found them.',
  'supersearch:scrape-hard': 'Hard pages (urls, scrape-hard) go through the browser or the residential path.',
  // agents (issue 13): consult, discover, descriptions, availability, compact MCP, polls, the render guard
  'consult:validated-calls':
    'Every call platform/consult returns is validated against its schema; what the goal lacks is listed.',
  'consult:values-from-goal':
    'Consult fills values from the goal: addresses whole and split, city/state, zip, coordinates, URLs, ids, counts.',
  'consult:workflows': 'Multi-step goals become ordered steps whose inputs name earlier outputs.',
  'consult:ids-from-catalog':
    'Ids in a goal reach the field whose example shows their kind (crawl, render, file, project, media, record ids).',
  'consult:quoted-and-units':
    'Quoted text is said exactly; numbers keep their units (ms or seconds, miles, bytes, months, days) and ranges.',
  'consult:start-where-goal-starts':
    'A plan starts where the goal starts: the step producing an id the goal lacks comes first; then-clauses chain.',
  'consult:second-reading':
    'When a goal reads two ways, the likelier plan is calls and the other is in other_plans.',
  'consult:free-actions':
    'Free actions (balance, transactions, files list, polls) are suggested where they answer.',
  'consult:plan-price': 'total_price_cents is the cost of running the plan once; alternatives are not added.',
  'consult:no-plan-uncharged': 'A goal nothing fits is refused (404), not charged.',
  'consult:model-refinement':
    'With the model router, the cheap tier may refine the first call; invalid refinements keep the rules plan.',
  'agents:evaluation':
    'Discover and consult meet their thresholds on the kept plain-English goals (tuning and held-out).',
  'catalog:descriptions-actionable':
    'Every description says what, when to use it rather than its siblings, what it returns and its price; no vendor names.',
  'catalog:availability':
    'Listings (tools/list, GET /api/run, discover, consult) leave out or mark actions this gateway cannot run.',
  'mcp:tool-names-in-descriptions': 'On /mcp, descriptions name other tools by their MCP names.',
  'mcp:portable-schemas':
    'Tool input schemas pass MCP Inspector --strict, OpenAI strict function calling and Gemini’s Schema subset; ' +
    'a strict host’s nulls and JSON text are read back as the zod body.',
  'mcp:compact-tools':
    '/mcp?tools=compact lists discover, describe_action and run_action; every action stays reachable and priced.',
  'polls:free-unpriced':
    'Polls the spec does not price are free and never charged; priced polls stay priced.',
  'polls:finished': 'A poll says whether the job is finished, and while it runs when to poll again.',
  'polls:x402-bearer':
    'An accountless (x402) payer polls its job anonymously with the handle; account handles need the account.',
  'videoasm:validate-before-render':
    'render of a project whose stored composition has not passed validate is refused, uncharged, saying what to run.',
  // operations
  'ops:graceful-shutdown': 'Shutdown finishes in-flight calls and resolves their holds.',
  'ops:failed-start-closes':
    'A start that fails half way closes what it had opened (the data dir lock, the database), so the next start can run.',
  'ops:config-errors':
    'A bad configuration stops start-up with every problem listed at once: bad values, unknown names, sections.',
  'ops:env-file':
    '.env of the working directory is read at start (Node loader); the environment wins over it.',
  'ops:first-start-key':
    'The operator account and key of a first start are created only once the port is bound, so the key is shown.',
  'ops:startup-errors':
    'A busy port or a data directory in use stops start-up with one line, not a stack trace.',
  'build:npm-ci': 'A clean clone installs with npm ci as well as npm install: the lock is complete.',
  // deploying it like a product (docs/operator.md "Install and run", "Container", "Compose", "systemd")
  'deploy:fresh-clone':
    "A fresh clone runs the Dockerfile's commands: npm ci, build, npm ci --omit=dev, node bin/tollgate.js serve, a paid call.",
  'deploy:npm-start-sigterm': 'npm start builds when needed and hands SIGTERM to the gateway itself.',
  'deploy:env-accepted':
    'Every TOLLGATE_* variable the Dockerfile, compose.yaml and the systemd unit set is accepted, with their values.',
  'deploy:entry-point':
    'The container runs node bin/tollgate.js serve as a non-root user; docs and messages never say npx tollgate.',
  'ops:key-not-logged':
    "The first start's operator key reaches the terminal or a 0600 file in the data dir, never the log stream.",
  'ops:json-logs': 'serve writes JSON lines only, each with its pid (and worker id in serve --workers).',
  'ops:bind-warning':
    "A bind beyond loopback without TOLLGATE_PUBLIC_URL is warned about; /mcp accepts the machine's own addresses.",
  'ops:database-down': 'A database that does not answer at start is one line naming TOLLGATE_DATABASE_URL.',
  'ops:readyz':
    '/readyz is 503 while the database or storage does not answer or the gateway drains; /healthz is liveness.',
  'cli:which-database':
    'The CLI says which database it used and refuses to guess when the data dir and TOLLGATE_DATABASE_URL disagree.',
  'ops:export-import':
    'tollgate export / import carry the whole state between SQLite and PostgreSQL, both ways: every balance, history sum, key, OAuth grant and carried row arrives, checked to the micro-dollar; a gateway on the imported database serves the old keys and tokens.',
  'ops:export-refusals':
    'Export refuses while a gateway serves, calls are in flight or the ledger does not add up; import refuses a target with data or a gateway, and a damaged or cut file, importing nothing.',
  'ops:transfer-classified':
    'Every table of both databases (and every column of the ledger) is carried by export or skipped with a reason; an unclassified one fails a contract test.',
  'cli:names': 'Every command takes an account by id or by name.',
  'cli:tables': 'Listings have a header row and aligned columns; keys list shows key names.',
  'cli:usage-errors': 'A usage error prints the one usage line that applies, not the whole help.',
  'cli:did-you-mean': 'Mistyped commands, accounts, actions and tools get the nearest known name suggested.',
  'catalog:one-listing-rule':
    'GET /api/run, tools/list, /openapi.json, the server card, tollgate catalog and server-json hide or mark alike.',
  'http:refusals-say-not-charged': 'Every refusal over the HTTP shim says in words that nothing was charged.',
  'mcp:refusals-say-not-charged': 'Every refusal over MCP says in words that nothing was charged.',
  'ssrf:names-fetch-allow': 'The refusal of a private or loopback URL names TOLLGATE_FETCH_ALLOW.',
  'pages:any-width':
    'Every page works at 390 px: no sideways scroll, transactions as short cards with the amount visible, a readable chart.',
  'pages:consent-layout': 'The consent page has the site header, and Allow beside Deny at any width.',
  'cli:json-errors':
    'With --json, a failing command prints one JSON error object on stdout and exits non-zero.',
  'cli:data-dir':
    'Operator commands other than serve and accounts create never create a database; they name the one they miss.',
  'ops:storage-url':
    'TOLLGATE_STORAGE_URL is checked at start-up (clear problems, never echoing secrets); AWS credentials are never logged.',
  // model router (docs/spec.md §4.9, §7, §8)
  'llm:openai-compatible':
    'POST /api/llm/v1/chat/completions speaks the OpenAI wire format, streaming and not; the openai client works unmodified.',
  'llm:api-key-auth': 'The router takes the same API keys as the catalog (§5).',
  'llm:openai-errors': 'Errors on the router are OpenAI-style bodies { error: { message, type, code } }.',
  'llm:pricing-free':
    'GET /api/llm/v1/pricing is free, needs no key, and lists each tier and per-model USD per million tokens (§4.9).',
  'llm:models': 'GET /api/llm/v1/models lists the tiers and servable models.',
  'llm:exact-slug': 'An exact upstream model slug passes through unchanged (§4.9 rule 1).',
  'llm:unknown-price-refused': 'A model with no known price is refused rather than billed at a guess.',
  'llm:prices-refreshed':
    'Prices come from the upstream listing, cached and refreshed; a failed refresh keeps them.',
  'llm:price-override': 'An operator price override bills tokens × the configured prices.',
  'llm:tier-fallback':
    'A tier falls back in order when a model fails before the first byte (5xx, 429, timeout, unavailable) (§4.9 rule 4).',
  'llm:fallback-within-ceiling': "A tier never falls back to a model above the tier's price ceiling.",
  'llm:served-model': "The response's model names the model actually served.",
  'llm:max-tokens': 'max_tokens defaults to 4096 and is capped at 16384 (§4.9 rule 3, §8).',
  'llm:no-media-generation':
    'Image, audio and video generation requests are refused with a 400 (§4.9 rule 6).',
  'llm:hold-worst-case': 'Before the upstream call, the worst case (prompt estimate + max_tokens) is held.',
  'llm:capture-actual':
    "The capture is the upstream's usage cost (else tokens × price), rounded up per call, never above the hold.",
  'llm:void-no-output': 'A call that produced no tokens is voided: nothing charged.',
  'llm:itemized':
    'Each router call is itemized in the transactions: model, tokens, cost in micro-USD (§4.9 rule 5).',
  'llm:stream-passthrough': 'SSE chunks pass through as they arrive, never buffered.',
  'llm:stream-usage': 'Streams ask the upstream for usage in the final chunk and are billed from it.',
  'llm:mid-stream-failure':
    'A failure after streaming began ends the stream with an error event and is not charged.',
  'llm:disconnect-policy':
    'A client leaving mid-stream aborts the upstream and is charged per the documented policy.',
  'llm:daily-cap-429':
    'Beyond the per-account daily inference cap: 429 with Retry-After until the next UTC midnight (§7, §8).',
  'llm:daily-cap-concurrency': 'Parallel requests near the cap never overshoot it (checked with the hold).',
  'llm:upstream-429-not-ours': "The upstream's own 429 is never passed off as the caller's 429.",
  'llm:internal-service':
    "The internal LlmService uses the same tiers and fallback; its cost is the gateway's own (no ledger).",
  // x402 (docs/spec.md §5, §7; docs/decisions.md "x402")
  'x402:mcp-pays-through-meta':
    'Over MCP, an unpaid call gets the challenge as an isError result; _meta["x402/payment"] pays it (§5).',
  'x402:unpaid-call-gets-402':
    'A paid call without credentials gets 402 with an x402 v2 PaymentRequired in PAYMENT-REQUIRED, mirrored as the body (after input validation).',
  'x402:api-keys-only-without-pay-to':
    'Without TOLLGATE_X402_PAY_TO the 402 says only API keys are accepted.',
  'x402:official-client-pays':
    'The official x402 client pays an HTTP action: exactly the price moves on chain, the ledger records payer, network, amount and tx hash.',
  'x402:consult-without-key': 'platform/consult is callable with x402 and no key (§5).',
  'x402:nonce-per-chain':
    "The built-in facilitator takes its nonces from the chain it sends to, never from another chain's memory.",
  'x402:accounts-pay-from-balance':
    'A caller with an API key pays from its balance; a payment sent along is ignored.',
  'x402:no-settle-on-failure': 'A failed action settles nothing and is recorded as uncharged.',
  'x402:recovery-spares-live-calls':
    "Recovering x402 payments left mid-call (at start, or a dead replica's) never touches a payment whose call is running.",
  'x402:replay-runs-once':
    'One signed payment runs the action at most once and moves money once, sequentially or concurrently.',
  'x402:invalid-payment-402':
    'Wrong amount, payTo, network, window or signature, or a malformed payment: 402 with the reason, nothing runs.',
  'x402:settle-failure-withholds':
    'A settlement that fails after the action withholds the result and charges nothing.',
  'x402:settlement-unknown-503':
    'An unknown settlement outcome answers 503 with Retry-After; the same payment resumes it, never a second payment.',
  'x402:settle-first': 'Actions priced at or above TOLLGATE_X402_SETTLE_FIRST_CENTS settle before running.',
  'x402:parallel-settlements': 'Parallel settlements from one facilitator key all succeed (nonce manager).',
  'x402:remote-facilitator': 'A remote facilitator (URL and auth header) verifies and settles.',
  'x402:facilitator-outcomes':
    'Facilitator answers are sorted into definite and unknown outcomes; an unreachable facilitator leaves the payment unused.',
  'x402:ledger-double-entry':
    'x402 money flows through a per-payer account in double entry; failures reverse the provisional funding.',
  'x402:config':
    'x402 configuration: defaults per network, one fully specified facilitator, secrets never echoed.',
  'x402:declared':
    'Every paid operation declares x402 (exact, fixed price: amount, asset, network) beside the API key in its descriptor, the catalog, /openapi.json and the MCP tool list (§5).',
  'x402:bazaar':
    'The challenge carries the bazaar discovery extension (input and output schemas; the tool name over MCP), valid per the official validator, within a header budget.',
  'x402:payment-identifier':
    'A retried payment with the same payment-identifier id gets the first call again (no second charge); another body is refused.',
  'x402:upto-metered':
    'The model router accepts accountless calls paid with x402 upto: the worst case is authorized, the actual cost settled after the call (streams included), never more, nothing on failure.',
  // MPP, the Machine Payments Protocol (issue 23; docs/decisions.md "MPP")
  'mpp:challenge-beside-x402':
    "With TOLLGATE_MPP_METHODS set, an unpaid paid call's 402 carries a WWW-Authenticate: Payment challenge per method beside PAYMENT-REQUIRED, priced as the x402 offer (stripe only from Stripe's $0.50 minimum).",
  'mpp:evm-pays':
    "mppx's client pays with the evm method: one EIP-3009 settlement on chain after the call succeeded, a Payment-Receipt, the charge in the ledger.",
  'mpp:stripe-pays':
    "mppx's client pays with a Stripe shared payment token: the price is held on the card before the call and captured once after it succeeded.",
  'mpp:replay-pays-once':
    'A replayed MPP credential never pays twice: the same call gets its stored result, another call is refused.',
  'mpp:refuses-foreign-challenges':
    'A credential that does not echo a challenge this gateway issued for this action at this price is refused with a fresh challenge; nothing is paid.',
  'mpp:mcp-pays-through-meta':
    'Over MCP (/mcp/x402) the MPP challenges ride in _meta["org.paymentauth/payment-required"] beside the x402 challenge; mppx\'s MCP client pays with _meta["org.paymentauth/credential"] and gets _meta["org.paymentauth/receipt"].',
  'mpp:declared':
    'With MPP on, descriptors, the catalog, /openapi.json (a Payment security scheme), the MCP tool list and the server card declare it beside x402 and the API key.',
  'mpp:race-pays-once':
    'One MPP credential presented at once to two replicas on one PostgreSQL runs the call once and pays once (one transfer or one capture).',
  'mpp:settlement-unknown-resumes':
    'A capture (or settlement) whose outcome is unknown answers 503; the same credential resumes it: captured at most once, the stored result delivered, the charge recorded once.',
  'mpp:config':
    'TOLLGATE_MPP_* is off by default; a method without what it settles with (x402 for evm, the Stripe key and a network id for stripe) or without the secret stops start-up with the problem named.',
  'mpp:no-charge-on-failure':
    'A failed or refused MPP call moves no money: no settlement, the card hold cancelled.',
  // x402 sessions: the batch-settlement scheme (issue 23; docs/decisions.md "x402 sessions")
  'x402:session-offered':
    "With TOLLGATE_X402_SESSIONS=on, every paid action's challenge offers batch-settlement beside exact, at the same price, with the receiver authorizer and withdrawal delay.",
  'x402:session-pays':
    'The official client opens a channel with one deposit (made only once its first call succeeded), pays later calls with vouchers (no transaction), and the gateway claims them in one batch and sweeps them once.',
  'x402:session-no-charge-on-failure':
    'A failed call commits nothing to the channel: the next call is paid by the same cumulative amount.',
  'x402:session-replay-pays-once':
    'A voucher presented again pays nothing more: it is refused with the corrective challenge (the channel state).',
  'x402:session-mcp':
    'Over MCP a session voucher in _meta["x402/payment"] pays a tool; the channel state comes back in _meta["x402/payment-response"].',
  'x402:session-declared':
    'With sessions on, descriptors and the server card declare the batch-settlement terms beside exact.',
  'x402:session-race-pays-once':
    'One session voucher presented at once to two replicas on one PostgreSQL runs the call once and is charged once.',
  'x402:session-survives-replica-death':
    'Vouchers served by a replica that is gone are claimed by a surviving replica, exactly once.',
  'x402:session-refund':
    "A payer's cooperative refund (the batch-settlement client's refund) returns what is left in its channel on chain, after its charged vouchers are claimed; no action runs, nothing is charged.",
  'x402:session-config':
    "TOLLGATE_X402_SESSIONS is off by default, needs x402, and keeps the withdrawal delay within the contract's range.",
  'x402:session-survives-restart':
    'Channel state lives in the database: calls go on after a restart and what was charged before it is claimed exactly once.',
  // receipts (docs/decisions.md "Receipts")
  'receipt:signed':
    'Every paid response carries a receipt (header / MCP _meta) signed by the gateway: transaction, action, amount, time, method, and for x402 the settlement hash.',
  'receipt:x402-offer-receipt':
    "x402 payments (exact and sessions) carry the offer-and-receipt extension's JWS receipt in PAYMENT-RESPONSE, verifiable with the published key; MPP payments carry it in Payment-Receipt (`jws`).",
  'receipt:verifiable':
    'A receipt verifies with only the public key published at /.well-known/tollgate-receipts.json; a tampered one does not.',
  'receipt:key':
    'The receipt key comes from TOLLGATE_RECEIPT_SIGNING_KEY or is generated once and kept in the database, the same for every replica.',
  // web engine, scrapers and the SSRF guard (docs/spec.md §4.7, §3; docs/decisions.md "Web engine")
  'ssrf:refuse-private':
    'A caller URL naming loopback, private, link-local, CGNAT, multicast, reserved, ULA or IPv4-mapped addresses (in any spelling), or a non-http(s) scheme, is refused with a 4xx and nothing charged.',
  'ssrf:redirect-hops':
    'Every redirect hop is checked; a redirect to a refused address fails the fetch, uncharged.',
  'ssrf:dns-rebinding':
    'Names are checked by the address actually connected (resolution inside the socket lookup).',
  'ssrf:browser-guarded':
    "The headless browser's requests go through the same guard; refused ones never leave.",
  'ssrf:fetch-allow': 'TOLLGATE_FETCH_ALLOW lets listed hosts and CIDRs through.',
  'web:scrape-formats':
    'Built-in scrape returns markdown (main content when asked), html, rawHtml, plainText and links, with metadata.',
  'web:fetch-limits':
    'Redirects, charset decoding, a size limit, a time limit and non-HTML content are handled with clear 4xx/5xx, uncharged.',
  'web:js-render':
    'JavaScript pages render in headless Chromium: renderJs true/null (auto-detect), waitFor, wait_for_selector, js_snippet, block_resource, cookies, return_page_source, screenshot.',
  'web:no-browser-not-configured':
    'Without a browser, a request that needs one answers 503 not_configured, uncharged.',
  'web:map': 'map lists same-site URLs from sitemaps (and indexes) and page links, deduplicated and bounded.',
  'web:vendor-only-not-configured':
    'Web search, residential proxies, proxy countries and stealth answer not_configured without their vendor.',
  'web:llm-formats':
    'summary, json/jsonSchema and extract go through the internal LLM with output validated; without it not_configured.',
  'web:engine-choice':
    'TOLLGATE_<GROUP>_ENGINE picks vendor or built-in per group (auto: vendor when keyed).',
  'web:markdown-conversion':
    'HTML converts to faithful Markdown in one pass (headings, lists, tables, links, code).',
  'crawl:async-lifecycle':
    'A crawl returns an id at once, reports scraping → completed with completed/total counters and pages in data; one charge on acceptance, polls at their own price.',
  'crawl:bounds-robots':
    'Crawls stay on the site, breadth-first within maxDepth and maxPages, respecting robots.txt.',
  'crawl:restart-not-stuck':
    'A gateway restart never leaves a crawl or job stuck running: crawls resume, jobs fail.',
  'crawl:owner-bound': "Crawl and extraction ids are server-minted handles; another account's poll is 404.",
  'crawl:start-failure-uncharged': 'A crawl whose start page cannot be fetched is refused, uncharged.',
  'extract:inline-or-async':
    'scraperB/extract answers inline results or { id, status: processing } polled with extract_status.',
  'vendor:wire-format':
    'scraperA/B/C adapters speak Firecrawl v1, fastCRW and ScrapingAnt v2 exactly, against fakes of each.',
  'vendor:failure-uncharged':
    'Vendor 4xx/5xx, success:false bodies and target error statuses are failures, charged nothing, vendor text withheld.',
  'vendor:rate-limit':
    "A vendor's 429 becomes 503 upstream_busy with Retry-After; an exhausted vendor account a 503.",
  // alerts (docs/operator.md "Alerts"; docs/decisions.md "Alerts")
  'alerts:balance-once':
    "An account's available balance falling below its threshold fires one alert (webhook and e-mail), however many calls cross it at once; going back above (a top-up) re-arms it.",
  'alerts:key-caps':
    "An API key's daily and monthly caps alert at 80 % and 100 % once per window (UTC day, month), and a call the key's cap refuses is the cap reached.",
  'alerts:cap-crossing':
    'A key or OAuth app at 80 % and at 100 % of a spending cap (100 %: spent in full, or a call refused by the cap) fires once per window each; the next window fires again.',
  'alerts:billing-events':
    'A credit line frozen or restored, a top-up or a settlement that succeeded or failed fires one alert each, however often Stripe reports it.',
  'alerts:signed':
    'Webhook deliveries are signed like Stripe\'s (Tollgate-Signature: t=<unix>,v1=HMAC-SHA256(secret, "<t>.<body>")); the event has a stable id, type, created, account and data; a receiver can verify it.',
  'alerts:email':
    'Alert e-mail goes out over SMTP (TOLLGATE_SMTP_URL) to the addresses the account holder set.',
  'alerts:webhook-ssrf':
    'A webhook URL passes the SSRF guard when saved (a 400 naming webhook_url) and at each delivery (a name rebinding to an internal address is refused); redirects are not followed.',
  'alerts:retry-backoff':
    'A failed delivery is retried with exponential backoff, on the gateway clock, up to a bound, with the same event and body.',
  'alerts:outbox':
    'Alerts wait in a durable outbox: exactly one replica makes each attempt, only it records the outcome, and one left by a dead replica or a restart is made again.',
  'alerts:once-per-crossing':
    'The state of each threshold is kept in the database and changed with its alert in one transaction: concurrent evaluations, replicas and restarts never fire a crossing twice.',
  'alerts:replicas':
    'Calls crossing a threshold on two replicas on PostgreSQL at once fire one alert, delivered once.',
  'alerts:dashboard-in-browser':
    'In a browser, the alerts page saves the webhook (its secret shown once), refuses an internal URL naming the field, and shows the delivery log.',
  // monitoring (docs/operator.md "Monitoring"; docs/decisions.md "Monitoring")
  'ops:metrics':
    'GET /metrics exposes calls by action, door, payment method and outcome, latencies, ledger, upstream, model router and process metrics.',
  'ops:metrics-auth':
    '/metrics needs TOLLGATE_METRICS_TOKEN as a bearer token on the public port, or is served on the admin port; off otherwise.',
  'ops:metrics-no-secrets':
    'No metric label carries an account id, a key, a transaction id or a caller-chosen string.',
  'ops:money-metrics':
    'Money metrics come from the lifecycle: charged, voided, refunded, credited, refused holds (daily caps by scope), pending holds.',
  'ops:upstream-metrics':
    'Vendor calls, the model router upstream and x402 facilitator answers are counted by outcome and timed.',
  'ops:traces':
    'Each call is a span with validate, hold, upstream, capture/void children; vendor calls nest under upstream.',
  'ops:trace-context':
    "A caller's W3C traceparent is continued, from HTTP headers and from MCP _meta (SEP-414).",
  'ops:tracing-off': 'Without OTEL_* variables no tracing SDK is loaded and no span is created.',
  'ops:soak-disconnects':
    'A client that disconnects at any moment never ends the gateway process (no unhandled rejection); its hold is voided.',
  'ops:lazy-modules':
    'Optional modules load only when configured or first used: MCP SDK (first /mcp request), x402/viem, oidc-provider and openid-client (first OAuth use), S3, Stripe, OpenTelemetry, prom-client, nodemailer (TOLLGATE_SMTP_URL), playwright-core (first render).',
  'bench:summary-from-sections':
    "docs/benchmarks.md's summary is built by npm run bench from the target rows each section stores; a section not re-run keeps its own.",
  'ops:request-log':
    'Every request is logged as one JSON line (id, method, path, status, ms) at info, at a measured cost per call.',
  'ops:upstream-pool':
    'The web fetcher keeps TOLLGATE_FETCH_CONNECTIONS_PER_HOST connections per upstream host, enough for the calls in flight: calls wait on the upstream, not in the gateway.',
} as const;

export type Requirement = keyof typeof REQUIREMENTS;
