/**
 * C2SP tlog-witness sign-subtree below HTTP (SPEC §5.4; docs/cosign.md "sign-subtree"): a client
 * that holds a checkpoint this witness cosigned with ML-DSA-44 asks for a `subtree/v1` cosignature
 * of a subtree of that checkpoint's tree, proving the subtree's hash with a subtree consistency
 * proof (draft-ietf-plants-merkle-tree-certs-03 §4.4).
 *
 * Checks, in the order of SPEC §5.4's table; the first failure answers:
 *
 *   -  the client's token bucket (`--sign-subtree-rate`)   429 rate_limited (+ retryAfter)
 *   1  body parses (src/note/tlog-witness.ts)             400 malformed_request
 *   2  [start, end) is a valid, non-empty subtree          400 invalid_subtree
 *   3  origin known                                        404 unknown_origin
 *   4  no extension lines; end ≤ checkpoint size           400 ml_dsa_unsignable / subtree_beyond_checkpoint
 *   5  a 0x06 line of one of our ML-DSA-44 keys (name and  403 no_witness_cosignature / invalid_signature
 *      key ID match) verifies over the checkpoint, any T;
 *      none, or a matching line that fails, refuses
 *   6  the proof is a subtree consistency proof from       422 inconsistent
 *      (start, end, hash) to (size, root)
 *   7  one subtree/v1 line, T = 0, per own key whose line  200
 *      verified in 5, in --cosign-key order
 *
 * Every request takes a token first, before any parsing or signature check: the bucket guards the
 * ML-DSA verifications and signatures a request costs, whatever it carries. No per-origin state is
 * read or written and the origin's qpd quota does not apply (SPEC §5.4). The log's own signature
 * lines are not checked: the witness's cosignature already vouches for the checkpoint, and
 * tlog-witness says the reference checkpoint SHOULD carry only the witness's signatures.
 */
import { ProtocolError } from '../errors.ts';
import type { MlDsa44Cosigner, Subtree } from '../note/cosigner.ts';
import { parseSignSubtreeRequest, type SignSubtreeRequest } from '../note/tlog-witness.ts';
import type { RateLimitSpec } from '../server/rate-limit.ts';
import { TokenBuckets } from '../server/rate-limit.ts';
import { isValidSubtree, verifySubtreeConsistency } from '../tlog/subtree.ts';
import { CosignConfigError, type SignSubtreeRejectionCode } from './errors.ts';
import type { KnownLogs } from './logs.ts';
import { reject, type CosignRejection } from './rejection.ts';

/** `--sign-subtree-rate` default: 2 requests per second, bursts of 10, per client address. */
export const DEFAULT_SIGN_SUBTREE_RATE: RateLimitSpec = { rps: 2, burst: 10 };

/**
 * One of this witness's ML-DSA-44 cosign keys, as sign-subtree uses it (key name = the witness
 * name): the keyring's MlDsa44Cosigner (src/note/cosigner.ts), or a test's stand-in.
 */
export type SubtreeCosigner = Pick<MlDsa44Cosigner, 'keyId' | 'verifyCheckpoint' | 'signSubtree'>;

export type SignSubtreeOutcome =
  | { readonly kind: 'signed'; readonly status: 200; readonly origin: string; readonly body: string }
  | CosignRejection<SignSubtreeRejectionCode>;

export interface SignSubtreeServiceOptions {
  /** The witness name: the key name of our cosignature lines. */
  name: string;
  /** Our ML-DSA-44 cosign keys, at least one, in `--cosign-key` order. */
  cosigners: readonly SubtreeCosigner[];
  /** The current known-logs snapshot (read once per request). */
  logs: () => KnownLogs;
  /** Per-client token bucket (default DEFAULT_SIGN_SUBTREE_RATE); null = no limit of its own. */
  rate?: RateLimitSpec | null | undefined;
}

export class SignSubtreeService {
  private readonly name: string;
  private readonly cosigners: readonly SubtreeCosigner[];
  private readonly logs: () => KnownLogs;
  private readonly buckets: TokenBuckets | null;

  constructor(opts: SignSubtreeServiceOptions) {
    if (opts.cosigners.length === 0) throw new CosignConfigError('invalid_cosign_key', 'sign-subtree needs an ML-DSA-44 cosign key');
    this.name = opts.name;
    this.cosigners = opts.cosigners;
    this.logs = opts.logs;
    const rate = opts.rate === undefined ? DEFAULT_SIGN_SUBTREE_RATE : opts.rate;
    this.buckets = rate === null ? null : new TokenBuckets(rate);
  }

  /** Handle one sign-subtree body from the client counted under `client` (a server/ip.ts clientKey). */
  async signSubtree(body: Uint8Array | string, client: string): Promise<SignSubtreeOutcome> {
    const token = this.buckets?.take(client);
    if (token !== undefined && !token.ok) {
      const retryAfter = token.retryAfterSeconds;
      return reject(429, 'rate_limited', `too many sign-subtree requests; retry in ${retryAfter} s`, undefined, retryAfter);
    }
    // 1. parse
    let req: SignSubtreeRequest;
    try {
      req = parseSignSubtreeRequest(body);
    } catch (e) {
      if (e instanceof ProtocolError) return reject(400, 'malformed_request', e.message, undefined);
      throw e;
    }
    const { start, end, checkpoint } = req;
    // 2. a valid subtree (-03 §4.1), never empty
    if (!isValidSubtree(start, end)) {
      const why = end <= start ? 'start must be below end' : `start must be a multiple of the smallest power of two ≥ ${end - start}`;
      return reject(400, 'invalid_subtree', `[${start}, ${end}) is not a valid subtree: ${why}`, undefined);
    }
    // 3. origin known
    const log = this.logs().get(checkpoint.origin);
    if (log === undefined) return reject(404, 'unknown_origin', 'unknown log: this witness does not cosign for that origin', undefined);
    const origin = log.origin;
    // 4. a checkpoint ML-DSA-44 can cover, holding the subtree
    if (checkpoint.extensions.length > 0) {
      return reject(400, 'ml_dsa_unsignable', 'ML-DSA-44 cosignatures do not cover checkpoints with extension lines', origin);
    }
    const size = BigInt(checkpoint.size);
    if (end > size) return reject(400, 'subtree_beyond_checkpoint', `subtree end ${end} is beyond the checkpoint size ${size}`, origin);
    // 5. our own ML-DSA-44 cosignature of the checkpoint
    const verified = new Set<SubtreeCosigner>();
    for (const sig of req.note.signatures) {
      if (sig.name !== this.name) continue;
      const cosigner = this.cosigners.find((c) => c.keyId === sig.keyId);
      if (cosigner === undefined) continue;
      if (!(await cosigner.verifyCheckpoint(req.note.text, sig.signature))) {
        return reject(403, 'invalid_signature', 'invalid signature: a cosignature line of this witness does not verify', origin);
      }
      verified.add(cosigner);
    }
    if (verified.size === 0) {
      return reject(403, 'no_witness_cosignature', 'the checkpoint carries no ML-DSA-44 cosignature of this witness', origin);
    }
    // 6. the subtree consistency proof
    if (!verifySubtreeConsistency(start, end, req.subtreeHash, size, checkpoint.rootHash, req.proof)) {
      return reject(422, 'inconsistent', `bad subtree consistency proof from [${start}, ${end}) to size ${size}`, origin);
    }
    // 7. sign, T = 0, one line per key that vouched for the checkpoint, in key order
    const subtree: Subtree = { origin, start, end, hash: req.subtreeHash };
    const lines = await Promise.all(this.cosigners.filter((c) => verified.has(c)).map((c) => c.signSubtree(subtree)));
    return { kind: 'signed', status: 200, origin, body: lines.join('') };
  }
}
