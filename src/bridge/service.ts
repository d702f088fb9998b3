/**
 * The token exchange below HTTP: the pure decision (`decideToken`), then the nonce read (a replayed
 * proof fails here, before any signature), the JWT signature, and the atomic insert of the nonce
 * (only a valid, signed-for proof consumes it; the insert decides races). HTTP-free so the
 * benchmark and other front ends can drive it directly.
 */
import { randomUUID } from 'node:crypto';
import { BridgeError } from './errors.ts';
import { decideToken } from './decide.ts';
import type { BridgePolicy, Grant } from './decide.ts';
import { MemoryNonceStore } from './nonces.ts';
import type { ConsumeResult, NonceStore, PeekResult } from './nonces.ts';
import { POP_MAX_SKEW_SECONDS } from './pop.ts';
import { signToken } from './signing.ts';
import type { SigningKey } from './signing.ts';
import type { TrustedRoots } from './trusted-roots.ts';
import type { KelRootSnapshot } from './roots-kel.ts';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  subject: string;
}

export interface TokenServiceOptions {
  policy: BridgePolicy;
  /** The current trusted roots snapshot (one per request), or undefined when none are configured. */
  trustedRoots: () => TrustedRoots | undefined;
  /** With `--kel-source` (SPEC §7.1): the KEL roots' snapshot (one per request). */
  kelRoots?: () => KelRootSnapshot | undefined;
  /** The key that signs now. */
  signingKey: () => SigningKey;
  /** Default: an in-memory store (then `policy.startedAt` should be set: the restart rule). */
  nonces?: NonceStore;
  /** unix ms */
  now?: () => number;
  jti?: () => string;
}

export interface Issued {
  response: TokenResponse;
  grant: Grant;
  kid: string;
}

/** Throws the refusal a nonce store's answer means, if any. */
function refuseNonce(r: ConsumeResult | PeekResult, iat: number): void {
  if (r === 'replayed')
    throw new BridgeError('pop_replayed', 'this proof nonce was already used with this leaf key; make a new proof with a fresh nonce');
  if (r === 'stale')
    throw new BridgeError(
      'pop_stale',
      `proof iat ${iat} is more than ${POP_MAX_SKEW_SECONDS} s from the nonce store's clock (with --store postgres://…, the database server's clock); check this host's clock (NTP)`,
    );
  if (r === 'full') throw new BridgeError('overloaded', 'the proof-of-possession nonce store is full; retry shortly');
}

export class TokenService {
  readonly policy: BridgePolicy;
  readonly nonces: NonceStore;
  private readonly opts: TokenServiceOptions;
  private readonly now: () => number;
  private readonly jti: () => string;

  constructor(opts: TokenServiceOptions) {
    this.opts = opts;
    this.policy = opts.policy;
    this.nonces = opts.nonces ?? new MemoryNonceStore();
    this.now = opts.now ?? Date.now;
    this.jti = opts.jti ?? randomUUID;
  }

  /** Exchange a parsed `/token` body for a JWT. Throws BridgeError on refusal. */
  async exchange(body: unknown): Promise<Issued> {
    const now = this.now();
    const decision = decideToken(body, this.policy, this.opts.trustedRoots(), now, this.jti(), this.opts.kelRoots?.());
    if (!decision.ok) throw decision.error;
    const { grant } = decision;
    const nonce = grant.nonceKey === null || grant.proofIat === null ? null : { key: grant.nonceKey, iat: grant.proofIat };
    // SPEC §7 check order: a read first, so a replayed proof fails before the gate and the signature.
    if (nonce !== null) refuseNonce(await this.nonces.peek(nonce.key, nonce.iat, now), nonce.iat);
    // (the §7.2 finalized-anchor gate belongs here)
    const key = this.opts.signingKey();
    const token = await signToken(key, grant.claims);
    // The atomic insert decides; durable stores answer once it is committed: no token before that.
    if (nonce !== null) refuseNonce(await this.nonces.consume(nonce.key, nonce.iat, now), nonce.iat);
    return {
      response: { access_token: token, token_type: 'Bearer', expires_in: grant.expiresIn, subject: grant.claims.sub },
      grant,
      kid: key.kid,
    };
  }
}
