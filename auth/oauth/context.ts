import type { Request, Response } from 'express';
import type Provider from 'oidc-provider';
import type { Logger } from 'pino';
import type { LedgerRecords } from '../../src/ledger/types.js';
import type { FederatedLogin } from './federated.js';
import type { AttemptLimiter, CookiePolicy, Csrf } from './guard.js';
import type { OAuthStore } from './store.js';

// What the sign-in and consent routes share.

export interface InteractionDeps {
  provider: () => Provider;
  store: OAuthStore;
  ledger: LedgerRecords;
  csrf: Csrf;
  limiter: AttemptLimiter;
  federated: FederatedLogin | undefined;
  publicUrl: () => string;
  /** Read on use: the public URL's scheme and path. */
  cookies: CookiePolicy;
  secure: () => boolean;
  log: Logger;
  /** Finishes an upstream sign-in started outside an interaction (flow ids with OTHER_FLOW_PREFIX). */
  otherSignIn?: OtherSignIn | undefined;
}

/** What an upstream sign-in started elsewhere (the account dashboard) does once it verified. */
export type OtherSignIn = (
  req: Request,
  res: Response,
  result: { flow: string; accountId: string; created: boolean },
) => Promise<void>;

/** Our part of the login result: which API key signed in (the library keeps unknown result keys as they are). */
export const SIGN_IN = 'tollgate_sign_in';
