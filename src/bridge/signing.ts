/**
 * JWT signing keys and tokens (SPEC §7), with jose. RS256 (RSA ≥ 2048 bits; 3072 when generated) by
 * default, ES256 (P-256) selectable. The key id is the RFC 7638 JWK thumbprint (SHA-256, base64url).
 * The header is exactly `{"alg","kid","typ":"JWT"}`; the claims are what `decideToken` produced.
 * SPEC §1.1: an ES256 key may sit on a PKCS#11 token (keys-external.ts); its Signer makes the
 * signature (r ‖ s, low S, verified before use) over the same JWS signing input jose would sign.
 */
import { createPrivateKey, createPublicKey, generateKeyPair as generateKeyPairCb } from 'node:crypto';
import type { JsonWebKey, KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { SignJWT, calculateJwkThumbprint, importPKCS8 } from 'jose';
import type { CryptoKey } from 'jose';
import { BridgeConfigError } from './errors.ts';
import type { TokenClaims } from './decide.ts';
import { encodeBase64url } from '../encoding/base64.ts';
import type { Signer } from '../keys/signer.ts';

export const SIGNING_ALGS = ['RS256', 'ES256'] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];
export const GENERATED_RSA_BITS = 3072;
export const MIN_RSA_BITS = 2048;

export interface PublicJwk {
  kty: 'RSA' | 'EC';
  alg: SigningAlg;
  use: 'sig';
  kid: string;
  n?: string;
  e?: string;
  crv?: 'P-256';
  x?: string;
  y?: string;
}

export interface SigningKey {
  readonly kid: string;
  readonly alg: SigningAlg;
  /**
   * A key in the process (a `<kid>.pem`), a Signer for a key on a token (SPEC §1.1; ES256), or null
   * for a token key that does not sign in this process (a `next` or `retired` one: published only).
   */
  readonly privateKey: CryptoKey | Signer | null;
  readonly jwk: PublicJwk;
}

const isSigner = (k: CryptoKey | Signer): k is Signer => 'sign' in k && typeof k.sign === 'function';
const utf8 = new TextEncoder();

const generateKeyPairAsync = promisify(generateKeyPairCb);

export function isSigningAlg(text: string): text is SigningAlg {
  return (SIGNING_ALGS as readonly string[]).includes(text);
}

/** A new signing key as PKCS#8 PEM: RSA 3072 for RS256, P-256 for ES256 (off the event loop). */
export async function generateSigningKeyPem(alg: SigningAlg = 'RS256'): Promise<string> {
  const { privateKey } =
    alg === 'RS256'
      ? await generateKeyPairAsync('rsa', { modulusLength: GENERATED_RSA_BITS, publicExponent: 0x10001 })
      : await generateKeyPairAsync('ec', { namedCurve: 'prime256v1' });
  return privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
}

function algOf(key: KeyObject): SigningAlg {
  if (key.asymmetricKeyType === 'rsa') {
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < MIN_RSA_BITS)
      throw new BridgeConfigError('key_unreadable', `RSA signing key has ${bits} bits; at least ${MIN_RSA_BITS} are required`);
    return 'RS256';
  }
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
  throw new BridgeConfigError(
    'key_unreadable',
    `signing keys must be RSA (RS256) or P-256 (ES256), got ${key.asymmetricKeyType ?? 'unknown'}`,
  );
}

/** The public JWK (kty, alg, use, kid and the key members) and its RFC 7638 thumbprint. */
export async function publicJwkOf(privateKey: KeyObject): Promise<PublicJwk> {
  const alg = algOf(privateKey);
  const raw: JsonWebKey = createPublicKey(privateKey).export({ format: 'jwk' });
  const kid = await calculateJwkThumbprint(raw, 'sha256');
  if (alg === 'RS256') return { kty: 'RSA', alg, use: 'sig', kid, n: raw.n!, e: raw.e! };
  return { kty: 'EC', alg, use: 'sig', kid, crv: 'P-256', x: raw.x!, y: raw.y! };
}

const PEM_RE = /^-----BEGIN PRIVATE KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PRIVATE KEY-----$/;

/** Load a PKCS#8 PEM signing key (RSA ≥ 2048 or P-256). Throws BridgeConfigError `key_unreadable`. */
export async function loadSigningKey(pem: string): Promise<SigningKey> {
  const text = pem.trim();
  if (!PEM_RE.test(text))
    throw new BridgeConfigError('key_unreadable', 'expected one unencrypted PKCS#8 PEM block (-----BEGIN PRIVATE KEY-----)');
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: text, format: 'pem' });
  } catch (e) {
    throw new BridgeConfigError('key_unreadable', `unreadable PKCS#8 key: ${(e as Error).message}`);
  }
  const jwk = await publicJwkOf(key);
  const privateKey = await importPKCS8(text, jwk.alg);
  return { kid: jwk.kid, alg: jwk.alg, privateKey, jwk };
}

/** Sign `claims` as a compact JWT with header {alg, kid, typ: "JWT"}. */
export async function signToken(key: SigningKey, claims: TokenClaims): Promise<string> {
  const header = { alg: key.alg, kid: key.kid, typ: 'JWT' as const };
  if (key.privateKey === null) throw new Error(`signing key ${key.kid} does not sign in this process (not the active key)`);
  if (!isSigner(key.privateKey)) return new SignJWT({ ...claims }).setProtectedHeader(header).sign(key.privateKey);
  // A token key: JWS signing input as jose builds it; a SignerError (503 signer_unavailable) propagates.
  const input = `${encodeBase64url(utf8.encode(JSON.stringify(header)))}.${encodeBase64url(utf8.encode(JSON.stringify({ ...claims })))}`;
  const signature = await key.privateKey.sign(utf8.encode(input));
  return `${input}.${encodeBase64url(signature)}`;
}
