/**
 * The cosign role below HTTP (SPEC §5): the witness's cosign keys (keyring.ts), the add-checkpoint
 * algorithm (add-checkpoint.ts: its checks in the order of SPEC §5's table), evidence keeping
 * (evidence.ts), the per-origin quota (quota.ts) and the per-origin lock (src/store/keyed-lock.ts)
 * put together over the cosign state storage.
 *
 * The cosignature time is max(now, the last time issued for the origin), stored with the state, so
 * an origin's cosignature times never go backwards, across restarts and clock steps included.
 */
import type { SignaturePool } from '../anchoring/verify-pool.ts';
import type { CosignKey } from '../note/cosigner.ts';
import { validateName } from '../note/checkpoint.ts';
import { KeyedLock } from '../store/keyed-lock.ts';
import type { CosignStateStorage } from '../store/types.ts';
import { addCheckpoint, type AddCheckpointContext, type AddCheckpointOutcome } from './add-checkpoint.ts';
import { CosignConfigError } from './errors.ts';
import { EvidenceKeeper } from './evidence.ts';
import { CosignKeyring } from './keyring.ts';
import type { KnownLogs } from './logs.ts';
import { OriginQuota } from './quota.ts';

export type { AddCheckpointOutcome } from './add-checkpoint.ts';

export interface CosignServiceOptions {
  store: CosignStateStorage;
  /** The witness name: the key name of the cosignature lines. */
  name: string;
  /**
   * One or more private keys, Ed25519 (cosignature/v1 lines) or ML-DSA-44 (subtree/v1 lines), each
   * a distinct key; one line per key, in this order.
   */
  /** In the process, or external Ed25519 signers (src/keys, SPEC §1.1). */
  cosignKeys: readonly CosignKey[];
  /** The current known-logs snapshot (read once per request). */
  logs: () => KnownLogs;
  /** Clock, milliseconds since the epoch (default Date.now). */
  now?: () => number;
  /** Called after a new evidence row is stored (for logs and metrics); not for a known one. */
  onEvidence?: (origin: string, reason: string) => void;
  /** Called when storing evidence evicted `count` older rows of the origin. */
  onEvidenceEvicted?: (origin: string, count: number) => void;
  /** Evidence rows kept per origin (default EVIDENCE_LIMIT, 1 000). */
  evidenceLimit?: number | undefined;
  /**
   * Verify the log signatures and make the ML-DSA-44 signatures on worker threads (same rules); the
   * pool should hold the ML-DSA-44 cosign keys (SignaturePool's `mlDsaKeys`).
   */
  verifyPool?: SignaturePool | undefined;
}

export class CosignService {
  readonly name: string;
  /** The cosign keys, one Cosigner each, in line order. */
  readonly keyring: CosignKeyring;
  private readonly store: CosignStateStorage;
  private readonly quota = new OriginQuota();
  private readonly ctx: AddCheckpointContext;

  /** Throws CosignConfigError (`invalid_name`, `invalid_cosign_key`, `invalid_evidence_limit`). */
  constructor(opts: CosignServiceOptions) {
    try {
      validateName(opts.name);
    } catch (e) {
      throw new CosignConfigError('invalid_name', `witness name: ${(e as Error).message}`);
    }
    this.name = opts.name;
    this.keyring = new CosignKeyring(opts.name, opts.cosignKeys, opts.verifyPool);
    this.store = opts.store;
    const now = opts.now ?? Date.now;
    this.ctx = {
      name: opts.name,
      store: opts.store,
      keyring: this.keyring,
      logs: opts.logs,
      now,
      evidence: new EvidenceKeeper({
        store: opts.store,
        now,
        limit: opts.evidenceLimit,
        onEvidence: opts.onEvidence,
        onEvicted: opts.onEvidenceEvicted,
      }),
      quota: this.quota,
      lock: new KeyedLock(),
      verifyPool: opts.verifyPool,
    };
  }

  /** The cosigner vkeys (type 0x04 or 0x06), one per cosign key, in line order. */
  get vkeys(): string[] {
    return this.keyring.vkeys;
  }

  /** The vkey of the first Ed25519 (type 0x04) cosign key, if any: `/health` `cosign_vkey`. */
  get ed25519Vkey(): string | undefined {
    return this.keyring.ed25519Vkey;
  }

  /** Whether an ML-DSA-44 cosign key is configured (then extension lines are refused, SPEC §5.3). */
  get hasMlDsaKey(): boolean {
    return this.keyring.hasMlDsaKey;
  }

  /** Handle one add-checkpoint request body. Store failures (StoreUnavailableError) propagate. */
  addCheckpoint(body: Uint8Array | string): Promise<AddCheckpointOutcome> {
    return addCheckpoint(this.ctx, body);
  }

  /** The latest cosigned checkpoint of an origin with its cosignature lines (a signed note), if any. */
  async latest(origin: string): Promise<{ note: string; size: number } | undefined> {
    const state = await this.store.getOrigin(origin);
    if (state === undefined) return undefined;
    return { note: state.checkpoint + state.cosignatures, size: state.size };
  }

  /** Forget quota buckets of origins that are not in `logs` (call after a reload). */
  pruneQuota(logs: KnownLogs): void {
    this.quota.retain((o) => logs.has(o));
  }
}
