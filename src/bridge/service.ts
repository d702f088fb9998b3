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
import { checkFreshness, decodeBundleShape, verifyAnchorBundle, type GatePolicy } from './freshness-gate.ts';
import { isJsonObject } from '../encoding/json.ts';
import { malformed } from './errors.ts';

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
  /** SPEC §7.2 `--require-finalized-anchor`: the pinned witness sets, freshness and scope. */
  gate?: GatePolicy;
  /** Default: an in-memory store (then `policy.startedAt` should be set: the restart rule). */
  nonces?: NonceStore;
  /** unix ms */
  now?: () => number;
  jti?: () => string;
  /** Told each time the nonce store answered a consume: a committed write, so the store is up. */
  committed?: () => void;
}

export interface Issued {
  response: TokenResponse;
  grant: Grant;
  kid: string;
  /** With the gate: the anchor's age at minting (the log line's `anchor_age_s`). */
  anchorAgeSeconds?: number;
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
  refuseFloor(r);
}

function refuseFloor(r: string): void {
  if (r === 'superseded')
    throw new BridgeError('anchor_superseded', "the seed's floor moved past this anchor with another head while it was checked");
  if (r === 'floor_full') throw new BridgeError('anchor_floor_full', 'the anchor floor table is full (--anchor-floor-max-seeds)');
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

  /**
   * SPEC §7.2 `POST /anchor-floor` `{"root","agent"?,"bundle"}`: schema, G2, G3 (issuer := root),
   * G7, G8, then floor := max(floor, (index, head)). Idempotent. Throws BridgeError on refusal.
   */
  async anchorFloor(body: unknown): Promise<{ seed: string; index: number; floor: { index: number; head: string } }> {
    const gate = this.opts.gate;
    if (gate === undefined || this.nonces.raiseFloor === undefined) throw new BridgeError('not_found', 'no freshness gate on this bridge');
    if (!isJsonObject(body)) throw malformed('', 'request body must be a JSON object {root, agent?, bundle}');
    for (const k of Object.keys(body)) if (!['root', 'agent', 'bundle'].includes(k)) throw malformed(`/${k}`, 'unknown field');
    if (typeof body.root !== 'string' || !/^did:keri:[A-Za-z0-9_-]{1,256}$/.test(body.root))
      throw malformed('/root', 'must be did:keri:<prefix>');
    if (body.agent !== undefined && (typeof body.agent !== 'string' || !/^did:keri:[A-Za-z0-9_-]{1,256}$/.test(body.agent)))
      throw malformed('/agent', 'must be did:keri:<prefix>');
    const bundle = decodeBundleShape(body.bundle, '/bundle');
    const now = this.now();
    const r = await verifyAnchorBundle(
      bundle,
      body.root,
      body.agent,
      gate,
      this.opts.trustedRoots(),
      this.opts.kelRoots?.(),
      Math.floor(now / 1000),
      { skipTime: true },
    );
    const out = await this.nonces.raiseFloor(r.raise, now);
    refuseFloor(out.result);
    return { seed: r.raise.seed, index: r.raise.idx, floor: { index: out.floor.idx, head: out.floor.head } };
  }

  /** Exchange a parsed `/token` body for a JWT. Throws BridgeError on refusal. */
  async exchange(body: unknown): Promise<Issued> {
    const now = this.now();
    const roots = this.opts.trustedRoots();
    const kel = this.opts.kelRoots?.();
    const decision = decideToken(body, this.policy, roots, now, this.jti(), kel);
    if (!decision.ok) throw decision.error;
    const { grant } = decision;
    const nonce = grant.nonceKey === null || grant.proofIat === null ? null : { key: grant.nonceKey, iat: grant.proofIat };
    // SPEC §7 check order: a read first, so a replayed proof fails before the gate and the signature.
    // The store's clock: the database's for PostgreSQL (read by the same statement as the nonce, or
    // this process's clock plus the last measured skew without one), else this process's.
    let storeNow = now + (this.nonces.clockSkewMs ?? 0);
    if (nonce !== null) {
      if (this.nonces.peekAt !== undefined) {
        const read = await this.nonces.peekAt(nonce.key, nonce.iat, now);
        refuseNonce(read.result, nonce.iat);
        storeNow = read.nowMs;
      } else refuseNonce(await this.nonces.peek(nonce.key, nonce.iat, now), nonce.iat);
    }
    // SPEC §7.2: the finalized-anchor gate, after the nonce read; G4 on the store's clock
    let gate: Awaited<ReturnType<typeof checkFreshness>> | undefined;
    if (this.opts.gate !== undefined) {
      const floors = this.nonces;
      if (floors.floor === undefined) throw new BridgeError('store_unavailable', 'this nonce store keeps no anchor floors');
      gate = await checkFreshness(
        { request: grant.request.finalizedAnchor, chain: grant.request.chain, roots, kel, now: Math.floor(storeNow / 1000) },
        this.opts.gate,
        { floor: (seed) => floors.floor!(seed) },
      );
      grant.claims.auths_anchor = gate.claim;
    }
    const key = this.opts.signingKey();
    const token = await signToken(key, grant.claims);
    // The atomic insert decides (with the floor raise, SPEC §7.2); durable stores answer once it is committed: no token before that.
    if (nonce !== null) {
      const consumed = await this.nonces.consume(nonce.key, nonce.iat, now, gate?.raise);
      this.opts.committed?.();
      refuseNonce(consumed, nonce.iat);
    } else if (gate !== undefined) {
      const raised = await this.nonces.raiseFloor!(gate.raise, now);
      this.opts.committed?.();
      refuseFloor(raised.result);
    }
    return {
      response: { access_token: token, token_type: 'Bearer', expires_in: grant.expiresIn, subject: grant.claims.sub },
      grant,
      kid: key.kid,
      ...(gate === undefined ? {} : { anchorAgeSeconds: gate.ageSeconds }),
    };
  }
}
