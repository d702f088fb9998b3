/**
 * The `/token` decision (SPEC §7) as a pure function of (request, policy, trusted roots, now, jti):
 * the JWT claims to sign or the first failure, in the SPEC's check order (parse, audience and TTL,
 * proof freshness, chain, root binding and subject, capabilities, proof signature; docs/bridge.md).
 * The nonce check is stateful, so it is the caller's last step: the decision returns the
 * (leaf key, nonce) to consume, and only a valid proof reaches it.
 */
import { verifyEd25519 } from '../crypto/ed25519.ts';
import { decodeHex, encodeHex } from '../encoding/hex.ts';
import { BridgeError, malformed } from './errors.ts';
import { checkNarrowing, earliestExpiry, grantCapabilities, instantFromMillis, verifyChain } from './chain.ts';
import { bindRootState, DID_KERI } from './root.ts';
import { stsSubjectProblem } from './sts-subject.ts';
import type { KeriState, RootBinding } from './root.ts';
import type { KelRootSnapshot } from './roots-kel.ts';
import { NONCE_MIN_RETENTION_SECONDS, NONCE_RE, POP_MAX_SKEW_SECONDS, popMessage, requestDigest } from './pop.ts';
import { decodeTokenRequest } from './request.ts';
import type { TokenRequest } from './request.ts';
import type { TrustedRoots } from './trusted-roots.ts';

export const DEFAULT_AUDIENCE = 'sts.amazonaws.com';
export const DEFAULT_TTL_SECONDS = 900;
export const MAX_TTL_LIMIT_SECONDS = 3600;
/** `nbf` = `iat` − 60: relying parties with a clock slightly behind still accept a fresh token. */
export const NBF_BACKDATE_SECONDS = 60;
export const AWS_TAGS_CLAIM = 'https://aws.amazon.com/tags';
/**
 * AWS session tag values are at most 256 characters (STS API reference, `Tag`). AWS does not say
 * how it counts; a value is kept within 256 both in code points and in UTF-16 units.
 */
const AWS_TAG_VALUE_MAX = 256;

export interface BridgePolicy {
  /** The issuer URL, byte for byte as it appears in `iss` and in proofs. */
  readonly issuer: string;
  /** Allowed audiences (non-empty); the first is used when a request without PoP names none. */
  readonly audiences: readonly string[];
  readonly defaultTtl: number;
  readonly maxTtl: number;
  readonly proofOfPossession: boolean;
  readonly awsSessionTags: boolean;
  /**
   * Unix ms when the process started, set only when the nonce store is in memory (it forgot every
   * nonce at the restart): the `pop_stale` rule after a restart. null with a durable nonce store.
   */
  readonly startedAt: number | null;
}

export interface AwsSessionTags {
  principal_tags: { auths_leaf: [string]; auths_caps: [string] };
}

export interface TokenClaims {
  iss: string;
  sub: string;
  aud: string;
  iat: number;
  nbf: number;
  exp: number;
  jti: string;
  capabilities: string[];
  keri_prefix?: string;
  /** SPEC §7.1: the accepted KEL state of a KEL root the token was minted on. */
  keri_state?: KeriState;
  /** SPEC §7.2: the finalized anchor the token was minted on (with `--require-finalized-anchor`). */
  auths_anchor?: { ws: string; seed: string; idx: number; ts: number; k: number; n: number };
  pop?: false;
  [AWS_TAGS_CLAIM]?: AwsSessionTags;
}

export interface Grant {
  claims: TokenClaims;
  /** `exp` − `iat` */
  expiresIn: number;
  /** The leaf device key (hex) and the proof's nonce key `<leaf hex>:<nonce>`, or null without PoP. */
  leafKey: string;
  nonceKey: string | null;
  /** The proof's `iat` (how long its nonce must be remembered), or null without PoP. */
  proofIat: number | null;
  binding: RootBinding;
  links: number;
  /** The decoded request (the freshness gate reads its chain and `finalized_anchor`). */
  request: TokenRequest;
}

export type Decision = { readonly ok: true; readonly grant: Grant } | { readonly ok: false; readonly error: BridgeError };

/**
 * AWS session tag values allow letters, spaces, digits and `_ . : / = + - @`; anything else becomes
 * `_`. Cut on whole code points (never half a surrogate pair) so the UTF-16 length, and so the
 * code point count, stays within AWS_TAG_VALUE_MAX.
 */
function tagValue(text: string): string {
  let out = '';
  for (const ch of text.replace(/[^\p{L}\p{Z}\p{N}_.:/=+\-@]/gu, '_')) {
    if (out.length + ch.length > AWS_TAG_VALUE_MAX) break;
    out += ch;
  }
  return out;
}

/** Space-joined capabilities, whole entries only, within AWS's 256-character tag value limit. */
function capsTagValue(caps: readonly string[]): string {
  let out = '';
  for (const c of caps) {
    const next = out === '' ? c : `${out} ${c}`;
    if (next.length > AWS_TAG_VALUE_MAX) break;
    out = next;
  }
  return out;
}

function checkProofFreshness(req: TokenRequest, policy: BridgePolicy, nowSec: number, now: number): void {
  if (!policy.proofOfPossession) return;
  if (req.proof === undefined) {
    throw new BridgeError(
      'pop_required',
      'proof of possession is required: add "proof" {iat, nonce, signature} signed by the leaf device key',
    );
  }
  const { iat } = req.proof;
  if (Math.abs(iat - nowSec) > POP_MAX_SKEW_SECONDS) {
    throw new BridgeError('pop_stale', `proof iat ${iat} is more than ${POP_MAX_SKEW_SECONDS} s from the bridge clock (${nowSec})`);
  }
  // In-memory nonce store: a proof used before the restart had iat ≤ (its use second) + 60 ≤ start
  // second + 60, and stays acceptable until iat + 60 ≤ start second + 120: refuse all such proofs.
  if (policy.startedAt !== null) {
    const startSec = Math.floor(policy.startedAt / 1000);
    if (now < policy.startedAt + NONCE_MIN_RETENTION_SECONDS * 1000 && iat <= startSec + POP_MAX_SKEW_SECONDS) {
      throw new BridgeError(
        'pop_stale',
        `proof iat ${iat} may have been used before this bridge restarted at ${startSec}, and its in-memory nonce store forgot those nonces: proofs with iat ≤ ${startSec + POP_MAX_SKEW_SECONDS} are refused for ${NONCE_MIN_RETENTION_SECONDS} s after the start`,
      );
    }
  }
}

function checkProofSignature(req: TokenRequest, policy: BridgePolicy, audience: string, leafKey: Uint8Array): string {
  const proof = req.proof!;
  if (!NONCE_RE.test(proof.nonce)) throw new BridgeError('pop_invalid', 'proof nonce must match ^[A-Za-z0-9_-]{16,64}$');
  let signature: Uint8Array;
  try {
    signature = decodeHex(proof.signature, 64);
  } catch {
    throw new BridgeError('pop_invalid', 'proof signature must be 64 bytes of hex');
  }
  const msg = popMessage({ iss: policy.issuer, aud: audience, iat: proof.iat, nonce: proof.nonce, req: requestDigest(req.raw) });
  if (!verifyEd25519(leafKey, msg, signature)) {
    throw new BridgeError(
      'pop_invalid',
      `proof signature does not verify under the leaf device key (link ${req.chain.length - 1}) for issuer ${JSON.stringify(policy.issuer)} and audience ${JSON.stringify(audience)}`,
    );
  }
  return `${encodeHex(leafKey)}:${proof.nonce}`;
}

/**
 * The JSON pointer of the first string (member name or value) that is not well-formed UTF-16 (a
 * lone surrogate), or null. Such strings have no canonical JSON form (RFC 8785), so the signed
 * bytes of the chain and of the proof could not be built; the HTTP parser refuses them already,
 * this keeps direct callers of decideToken on the same rule.
 */
function loneSurrogateAt(v: unknown, at = ''): string | null {
  if (typeof v === 'string') return v.isWellFormed() ? null : at;
  if (typeof v !== 'object' || v === null) return null;
  for (const [k, x] of Object.entries(v)) {
    const here = `${at}/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    if (!k.isWellFormed()) return here;
    const found = loneSurrogateAt(x, here);
    if (found !== null) return found;
  }
  return null;
}

function decide(
  doc: unknown,
  policy: BridgePolicy,
  roots: TrustedRoots | undefined,
  now: number,
  jti: string,
  kel: KelRootSnapshot | undefined,
): Grant {
  // 1. parse and schema
  const lone = loneSurrogateAt(doc);
  if (lone !== null) throw malformed(lone, 'lone surrogate in a string');
  const req = decodeTokenRequest(doc);
  if (policy.proofOfPossession && req.audience === undefined) throw malformed('/audience', 'required when proof of possession is on');
  const audience = req.audience ?? policy.audiences[0]!;
  // 2. audience and TTL
  if (!policy.audiences.includes(audience)) {
    throw new BridgeError(
      'audience_not_allowed',
      `audience ${JSON.stringify(audience)} is not allowed here (allowed: ${policy.audiences.map((a) => JSON.stringify(a)).join(', ')})`,
    );
  }
  const ttl = req.ttlSecs ?? policy.defaultTtl;
  if (ttl > policy.maxTtl) throw new BridgeError('ttl_too_large', `ttl_secs ${ttl} exceeds the maximum of ${policy.maxTtl}`);
  // 3. proof present and fresh
  const nowSec = Math.floor(now / 1000);
  checkProofFreshness(req, policy, nowSec, now);
  // 4. the chain
  const instant = instantFromMillis(now);
  verifyChain(req.chain, req.rootPublicKey, instant, roots);
  // 5. root binding
  const root = req.chain[0]!;
  const leaf = req.chain[req.chain.length - 1]!;
  const { binding, keriState } = bindRootState(root.issuer, req.rootPublicKey, roots, kel);
  const subProblem = stsSubjectProblem(root.issuer);
  if (subProblem !== null)
    throw new BridgeError('subject_unsupported', `chain[0].issuer (the sub) ${subProblem}; no token is issued for it`);
  // 6. capabilities
  checkNarrowing(req.chain);
  const capabilities = grantCapabilities(leaf.capabilities, req.requestedCapabilities);
  // 7. proof signature
  const nonceKey = policy.proofOfPossession ? checkProofSignature(req, policy, audience, leaf.devicePublicKey) : null;
  // the claims
  const expiry = earliestExpiry(req.chain);
  const exp = expiry === null ? nowSec + ttl : Math.min(nowSec + ttl, expiry.seconds);
  const sub = root.issuer;
  const claims: TokenClaims = {
    iss: policy.issuer,
    sub,
    aud: audience,
    iat: nowSec,
    nbf: nowSec - NBF_BACKDATE_SECONDS,
    exp,
    jti,
    capabilities,
  };
  if (sub.startsWith(DID_KERI)) claims.keri_prefix = sub.slice(DID_KERI.length);
  if (keriState !== null) claims.keri_state = keriState;
  if (!policy.proofOfPossession) claims.pop = false;
  if (policy.awsSessionTags) {
    claims[AWS_TAGS_CLAIM] = { principal_tags: { auths_leaf: [tagValue(leaf.subject)], auths_caps: [capsTagValue(capabilities)] } };
  }
  return {
    claims,
    expiresIn: exp - nowSec,
    leafKey: encodeHex(leaf.devicePublicKey),
    nonceKey,
    proofIat: nonceKey === null ? null : req.proof!.iat,
    binding,
    links: req.chain.length,
    request: req,
  };
}

/**
 * Decide a `/token` request. `doc` is the parsed JSON body; `now` is unix ms; `jti` the token id to
 * use. Never throws a BridgeError (it is returned); other exceptions are faults.
 */
export function decideToken(
  doc: unknown,
  policy: BridgePolicy,
  roots: TrustedRoots | undefined,
  now: number,
  jti: string,
  kel?: KelRootSnapshot,
): Decision {
  try {
    return { ok: true, grant: decide(doc, policy, roots, now, jti, kel) };
  } catch (e) {
    if (e instanceof BridgeError) return { ok: false, error: e };
    throw e;
  }
}
