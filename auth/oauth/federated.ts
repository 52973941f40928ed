import type { AdapterPayload } from 'oidc-provider';
import type * as oidc from 'openid-client';
import type { Logger } from 'pino';
import type { OidcUpstreamConfig } from '../../src/config/index.js';
import type { LedgerRecords } from '../../src/ledger/types.js';
import type { OAuthStore } from './store.js';

// "Sign in with <upstream>": the user authenticates at an OpenID Connect provider (authorization code + PKCE,
// state and nonce), and we keep only its `sub`: the first sign-in creates a tollgate account (empty: its welcome
// credit line comes with a card on file), later ones find it. The upstream's tokens are dropped on the spot: nothing is ever passed through to
// the upstream or to an MCP host (no token passthrough).

/** Where the upstream sends the browser back; register `<public URL>` + this at the upstream. */
export const FEDERATED_CALLBACK_PATH = '/oauth/federated/callback';

/**
 * A sign-in started outside an OAuth interaction (the account dashboard) names its flow with this prefix, so the
 * one callback registered at the upstream serves both; interaction uids never contain a colon.
 */
export const OTHER_FLOW_PREFIX = 'other:';

type Oidc = typeof oidc;

const STATE_MODEL = 'FederatedLogin';
const STATE_TTL_SECONDS = 600;

interface PendingLogin {
  uid: string;
  codeVerifier: string;
  nonce: string;
}

/** A sign-in that did not complete; `uid` names its interaction when known, so the user can retry there. */
export class FederationError extends Error {
  override name = 'FederationError';
  constructor(
    message: string,
    readonly uid?: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface FederatedDeps {
  upstream: OidcUpstreamConfig;
  store: OAuthStore;
  ledger: LedgerRecords;
  /** Runs once per account this sign-in created. */
  onAccountCreated?: ((accountId: string) => Promise<void>) | undefined;
  log: Logger;
}

export class FederatedLogin {
  private config: Promise<{ oidc: Oidc; config: oidc.Configuration }> | undefined;
  private readonly creating = new Map<string, Promise<{ accountId: string; created: boolean }>>();

  constructor(private readonly deps: FederatedDeps) {}

  get name(): string {
    return this.deps.upstream.name;
  }

  /** Starts an upstream sign-in for interaction `uid`; returns where to send the browser and the state. */
  async start(uid: string, redirectUri: string): Promise<{ url: string; state: string }> {
    const { oidc, config } = await this.configuration();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const pending: PendingLogin = { uid, codeVerifier, nonce };
    await this.deps.store.upsert(STATE_MODEL, state, pending as unknown as AdapterPayload, STATE_TTL_SECONDS);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url: url.href, state };
  }

  /**
   * Completes the sign-in the callback URL reports: the state is single-use, the code is exchanged with PKCE and
   * the ID token checked (issuer, audience, nonce, signature). Returns the interaction and the account.
   */
  async finish(
    callbackUrl: URL,
    state: string,
  ): Promise<{ uid: string; accountId: string; created: boolean }> {
    const pending = (await this.deps.store.find(STATE_MODEL, state)) as unknown as PendingLogin | undefined;
    if (!pending) throw new FederationError('unknown or expired sign-in state');
    await this.deps.store.destroy(STATE_MODEL, state);
    let claims: oidc.IDToken | undefined;
    try {
      const { oidc, config } = await this.configuration();
      const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      claims = tokens.claims();
    } catch (cause) {
      // The upstream refused (its error response), or the code or ID token did not verify.
      throw new FederationError('the upstream sign-in did not verify', pending.uid, { cause });
    }
    if (!claims?.sub) throw new FederationError('the upstream returned no subject', pending.uid);
    const label = typeof claims.email === 'string' ? claims.email : `${this.name}:${claims.sub}`;
    const { accountId, created } = await this.accountFor(claims.sub, label);
    return { uid: pending.uid, accountId, created };
  }

  /** The account of an upstream subject, created on its first sign-in (once, even under concurrent sign-ins). */
  private async accountFor(subject: string, label: string): Promise<{ accountId: string; created: boolean }> {
    const { store, upstream } = this.deps;
    const known = await store.accountForIdentity(upstream.issuer, subject);
    if (known) return { accountId: known, created: false };
    const key = `${upstream.issuer}\u0000${subject}`;
    let creating = this.creating.get(key);
    if (!creating) {
      creating = this.createAccount(subject, label).finally(() => this.creating.delete(key));
      this.creating.set(key, creating);
    }
    return creating;
  }

  private async createAccount(
    subject: string,
    label: string,
  ): Promise<{ accountId: string; created: boolean }> {
    const { store, ledger, upstream, onAccountCreated, log } = this.deps;
    const account = await ledger.createAccount({ name: label });
    if (!(await store.linkIdentity(upstream.issuer, subject, account.id))) {
      // Another process linked it first (several gateways on one database): use theirs; ours stays empty.
      return {
        accountId: (await store.accountForIdentity(upstream.issuer, subject)) as string,
        created: false,
      };
    }
    await onAccountCreated?.(account.id);
    log.info({ account: account.id, upstream: upstream.issuer }, 'account created by federated sign-in');
    return { accountId: account.id, created: true };
  }

  /**
   * Upstream discovery, once; a failure is not cached, so a provider that was down is retried next time. The
   * client library is loaded here, on the first upstream sign-in, not at start.
   */
  private configuration(): Promise<{ oidc: Oidc; config: oidc.Configuration }> {
    if (!this.config) {
      const { issuer, clientId, clientSecret } = this.deps.upstream;
      const url = new URL(issuer);
      this.config = import('openid-client')
        .then(async (oidc) => {
          // Config validation allows plain http only for a loopback issuer.
          const execute = url.protocol === 'http:' ? [oidc.allowInsecureRequests] : [];
          const auth = clientSecret ? undefined : oidc.None();
          return { oidc, config: await oidc.discovery(url, clientId, clientSecret, auth, { execute }) };
        })
        .catch((e: unknown) => {
          this.config = undefined;
          throw e;
        });
    }
    return this.config;
  }
}
