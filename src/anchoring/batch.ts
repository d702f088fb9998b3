/**
 * One batch of the anchor sequencer, inside one transaction of the witness log: each request is
 * decided by the acceptance rules (src/anchor/accept.ts) in arrival order, against the committed
 * state plus the batch's own earlier decisions, and the decision is executed here: a co-sign
 * appends the cosign message to the log and writes the seed record, a new duplicity proof is
 * logged and freezes its seed. The log signs the new checkpoint when this returns; the batch's
 * replies wait for it.
 */
import type { KeyObject } from 'node:crypto';
import { accept, type AcceptancePolicy, type Rejection, type SeedState } from '../anchor/accept.ts';
import { duplicityEntry } from '../anchor/duplicity.ts';
import type { PartyUsage } from '../anchor/quota-window.ts';
import type { Registry, RegistryParty } from '../anchor/registry.ts';
import type { Anchor, DuplicityProof, PartyClaim } from '../anchor/types.ts';
import { signEd25519 } from '../crypto/ed25519.ts';
import { SignerError } from '../keys/errors.ts';
import { encodeHex } from '../encoding/hex.ts';
import type { LogBatch } from '../log/batch.ts';
import type { SeedRecord, SignedCheckpoint, StoreTransaction } from '../store/types.ts';
import type { SeedCache } from './committed-cache.ts';
import type { BatchQuota } from './quota.ts';

/** A request waiting in the sequencer: what the rules judge, and what the sequencer needs to answer it. */
export interface Pending {
  anchor: Anchor;
  claim: PartyClaim;
  /** Check 5's verdict, computed before queueing (possibly on worker threads). */
  signatureValid: boolean;
  /** The registry view when the request arrived, and the party it names there (if any). */
  registry: Registry;
  party: RegistryParty | undefined;
  /** The witness clock when the request arrived. */
  now: number;
  /** The party message of `anchor` (check 5 and the replay comparison), computed once per request. */
  partyMessage: Uint8Array;
  /** The cosign message (log entry) of `anchor`. */
  message: Uint8Array;
  /** Its signature by the witness key, made speculatively with the party-signature check. */
  presigned: Uint8Array | undefined;
  /** Why an external witness key could not sign it (thrown only if a new cosignature is needed). */
  signerError?: unknown;
  resolve: (o: Decided) => void;
  reject: (e: unknown) => void;
  /** The request's abandonment signal and the listener that drops this entry from the queue. */
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/** A request's outcome once its batch committed. */
export type Decided =
  | { kind: 'cosigned'; record: SeedRecord; replay: boolean; checkpoint: SignedCheckpoint; batch: LogBatch | undefined }
  | { kind: 'duplicity'; proof: DuplicityProof; isNew: boolean }
  | { kind: 'rejected'; rejection: Rejection }
  /** A new cosignature was needed and the external witness key could not make it: nothing committed for it. */
  | { kind: 'signer_failed'; error: unknown };

/** A decision, or one that waits for the checkpoint (and the log batch that signed it). */
export type BatchResult = Decided | ((checkpoint: SignedCheckpoint, batch: LogBatch | undefined) => Decided);

export interface BatchContext {
  /** Undefined with an external witness key: every cosignature is then presigned (src/keys). */
  witnessKey: KeyObject | undefined;
  policy: AcceptancePolicy;
  seedCache: SeedCache | undefined;
  quota: BatchQuota;
}

export interface BatchDecisions {
  results: BatchResult[];
  /** Seed records to cache once the batch commits (read or written by requests whose signature verified). */
  seeds: Map<string, SeedRecord | undefined>;
  cosigned: number;
  duplicities: DuplicityProof[];
}

/** Never read: check 2 refuses a request whose party is not in the registry before check 8. */
const NO_USAGE: PartyUsage = { anchorTimes: [], newSeedTimes: [] };

const seedState = (record: SeedRecord | undefined): SeedState | undefined =>
  record === undefined
    ? undefined
    : { latest: record.latest, owner: record.owner, ...(record.duplicity ? { duplicity: record.duplicity } : {}) };

/** Decide and execute every request of `batch`, in order: appends go to `log`, state to `tx.anchors`. */
export async function decideBatch(
  ctx: BatchContext,
  tx: StoreTransaction,
  log: LogBatch,
  batch: readonly Pending[],
): Promise<BatchDecisions> {
  /** The batch's view of seed state: committed, then its own decisions. */
  const seeds = new Map<string, SeedRecord | undefined>();
  const cacheable = new Map<string, SeedRecord | undefined>();
  const results: BatchResult[] = [];
  const duplicities: DuplicityProof[] = [];
  let cosigned = 0;

  for (const p of batch) {
    const key = encodeHex(p.anchor.seedId);
    if (!seeds.has(key)) {
      const cached = ctx.seedCache?.get(key);
      seeds.set(key, cached === undefined ? await tx.anchors.getSeed(p.anchor.seedId) : (cached ?? undefined));
    }
    const record = seeds.get(key);
    // Only a registered party's verified request may put a seed into the cache.
    if (p.signatureValid) cacheable.set(key, record);
    const party = p.party?.id;
    const usage = party === undefined ? NO_USAGE : (ctx.quota.known(party, p.now) ?? (await ctx.quota.read(tx.anchors, party, p.now)));
    // A Pending is an AnchorSubmission (anchor, claim, signatureValid, partyMessage).
    const decision = accept(p, p.registry, seedState(record), usage, p.now, ctx.policy);
    switch (decision.outcome) {
      case 'reject':
        results.push({ kind: 'rejected', rejection: decision });
        break;
      case 'frozen':
        results.push({ kind: 'duplicity', proof: decision.proof, isNew: false });
        break;
      case 'duplicity': {
        const leafIndex = log.append(duplicityEntry(decision.proof));
        await tx.anchors.putDuplicity(decision.proof, leafIndex, p.now);
        const frozen = { ...record!, duplicity: decision.proof };
        seeds.set(key, frozen);
        cacheable.set(key, frozen);
        duplicities.push(decision.proof);
        results.push({ kind: 'duplicity', proof: decision.proof, isNew: true });
        break;
      }
      case 'replay': {
        const r = record!;
        results.push((checkpoint) => ({ kind: 'cosigned', record: r, replay: true, checkpoint, batch: undefined }));
        break;
      }
      case 'cosign': {
        // Accepted, so the party is registered (`party` is its id) and its signature verified.
        const signature = p.presigned ?? (ctx.witnessKey === undefined ? undefined : signEd25519(ctx.witnessKey, p.message));
        if (signature === undefined) {
          results.push({
            kind: 'signer_failed',
            error: p.signerError ?? new SignerError('signer_unavailable', 'the witness key could not sign'),
          });
          break;
        }
        const leafIndex = log.append(p.message);
        const next: SeedRecord = {
          seedId: p.anchor.seedId,
          owner: record?.owner ?? party!,
          createdAt: record?.createdAt ?? p.now,
          latest: p.anchor,
          cosignature: { signature, timestamp: p.now, leafIndex },
        };
        await tx.anchors.putSeed(next, decision.newSeed, party!);
        seeds.set(key, next);
        cacheable.set(key, next);
        ctx.quota.recordCosign(party!, p.now, decision.newSeed);
        cosigned++;
        results.push((checkpoint, proofs) => ({ kind: 'cosigned', record: next, replay: false, checkpoint, batch: proofs }));
        break;
      }
    }
  }
  return { results, seeds: cacheable, cosigned, duplicities };
}
