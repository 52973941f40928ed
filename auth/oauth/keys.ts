import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { JWK } from 'oidc-provider';
import type { OAuthStore } from './store.js';

// Keys the authorization server signs with, generated on first start and kept in the database: ID tokens and
// cookies issued before a restart stay valid after it.

export interface OAuthSecrets {
  /** Private JWKS: RS256 (the default ID-token algorithm; registration fails without it) and ES256. */
  jwks: { keys: JWK[] };
  /** Keygrip keys for the library's signed cookies, newest first. */
  cookieKeys: string[];
  /** HMAC key for our own forms' CSRF tokens and state cookies. */
  formKey: Buffer;
}

export async function loadSecrets(
  store: OAuthStore,
  cookieSecret: string | undefined,
): Promise<OAuthSecrets> {
  const jwks = JSON.parse(await store.secret('jwks', () => JSON.stringify(generateJwks()))) as {
    keys: JWK[];
  };
  // An operator-supplied secret (several hosts sharing one database, or rotation) goes first: it signs new
  // cookies, and the generated one still verifies cookies issued before it was set.
  const random = () => randomBytes(32).toString('base64url');
  const generated = await store.secret('cookie_key', random);
  const cookieKeys = cookieSecret ? [cookieSecret, generated] : [generated];
  const formKey = Buffer.from(await store.secret('form_key', random), 'base64url');
  return { jwks, cookieKeys, formKey };
}

function generateJwks(): { keys: JWK[] } {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  const kid = () => randomBytes(12).toString('base64url');
  return {
    keys: [
      { ...rsa, kid: kid(), alg: 'RS256', use: 'sig' } as JWK,
      { ...ec, kid: kid(), alg: 'ES256', use: 'sig' } as JWK,
    ],
  };
}
