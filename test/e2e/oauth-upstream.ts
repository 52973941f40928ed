import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type JWK } from 'oidc-provider';

// A real OpenID Connect provider for the federated sign-in tests: oidc-provider on 127.0.0.1, with one
// confidential client (the gateway) and a "sign-in page" that signs in whoever `user` names (or refuses).

export interface Upstream {
  issuer: string;
  /** Who the upstream signs in next. */
  user: string;
  /** When true, the upstream answers access_denied instead. */
  denies: boolean;
  /** Access tokens the upstream issued (to prove none of them leaks into tollgate). */
  issuedTokens: string[];
  /** Attaches the provider once the gateway's callback URL is known. */
  start(callbackUrl: string): void;
  close(): Promise<void>;
}

export const UPSTREAM_CLIENT = { id: 'tollgate', secret: 'upstream-client-secret', name: 'Example ID' };

/** Listens first (the gateway needs the issuer URL), serves once `start` gave it the gateway's callback. */
export async function listenUpstream(): Promise<Upstream> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  const server: Server = createServer((req, res) => handler(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const up: Upstream = {
    issuer,
    user: 'alice',
    denies: false,
    issuedTokens: [],
    start(callbackUrl) {
      const idp = buildProvider(issuer, callbackUrl);
      idp.on('access_token.saved', (token: { jti: string }) => up.issuedTokens.push(token.jti));
      const callback = idp.callback();
      handler = (req, res) => {
        if (!req.url?.startsWith('/login/')) return void callback(req, res);
        void signIn(idp, up, req, res);
      };
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  return up;
}

function buildProvider(issuer: string, callbackUrl: string): Provider {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  return new Provider(issuer, {
    clients: [
      {
        client_id: UPSTREAM_CLIENT.id,
        client_secret: UPSTREAM_CLIENT.secret,
        redirect_uris: [callbackUrl],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    jwks: { keys: [{ ...rsa, kid: 'k1', alg: 'RS256', use: 'sig' } as JWK] },
    scopes: ['openid', 'email'],
    claims: { email: ['email'] },
    findAccount: async (_ctx, sub) => ({
      accountId: sub,
      claims: () => ({ sub, email: `${sub}@example.test` }),
    }),
    features: { devInteractions: { enabled: false } },
    // Like most providers, put the email in the ID token itself.
    conformIdTokenClaims: false,
    interactions: { url: (_ctx, i) => `/login/${i.uid}` },
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      Grant: 600,
      IdToken: 600,
      Interaction: 600,
      Session: 600,
    },
  });
}

async function signIn(idp: Provider, up: Upstream, req: IncomingMessage, res: ServerResponse) {
  const details = await idp.interactionDetails(req, res);
  if (up.denies) {
    return idp.interactionFinished(req, res, { error: 'access_denied' }, { mergeWithLastSubmission: false });
  }
  if (details.prompt.name === 'login') {
    return idp.interactionFinished(
      req,
      res,
      { login: { accountId: up.user } },
      { mergeWithLastSubmission: false },
    );
  }
  const grant = new idp.Grant({
    accountId: details.session?.accountId as string,
    clientId: UPSTREAM_CLIENT.id,
  });
  grant.addOIDCScope(String(details.params.scope));
  const grantId = await grant.save();
  return idp.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

/** The gateway's environment for this upstream. */
export function upstreamEnv(up: Upstream): Record<string, string> {
  return {
    TOLLGATE_OIDC_ISSUER: up.issuer,
    TOLLGATE_OIDC_CLIENT_ID: UPSTREAM_CLIENT.id,
    TOLLGATE_OIDC_CLIENT_SECRET: UPSTREAM_CLIENT.secret,
    TOLLGATE_OIDC_NAME: UPSTREAM_CLIENT.name,
  };
}
