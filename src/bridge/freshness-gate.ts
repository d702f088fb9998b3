/**
 * The witness-finalized freshness gate (SPEC §7.2 rev 4, `--require-finalized-anchor`): a token needs
 * a fresh k-of-n finalized anchor that commits to the exact chain presented. Checks G1–G8, cheapest
 * first, each with its code; the finality count is the verifier SDK's `verifyFinalized` under the
 * pinned SAID (verifyFinalizedBundle's contract, on the bundle parsed once; src/verify: distinct
 * pinned members only, each receipt verified over THIS anchor under the member's pinned key and
 * origin), never members, keys or threshold from the request, never a peer. Final verdicts of the
 * expensive pure part are remembered by bundle content (gate-verdicts.ts); G3–G7 run every time.
 *
 * Pure but for the floor read (the caller's AnchorFloorReader): the floor is raised only at commit,
 * atomically with the nonce (the NonceStore's consume with a FloorRaise, src/bridge/nonces.ts).
 */
import { deriveSeedId } from '../anchor/seed.ts';
import type { Anchor } from '../anchor/types.ts';
import { encodeHex } from '../encoding/hex.ts';
import { isJsonObject } from '../encoding/json.ts';
import {
  makeWitnessSet,
  parseFinalizedBundle,
  verifyFinalized,
  VerificationError,
  witnessSetSaid,
  type FinalizedBundle,
  type WitnessSet,
} from '../verify/index.ts';
import { rowAhead } from '../registry/tip-raise.ts';
import type { Attestation } from './attestation.ts';
import { attestationChainDigest, chainInclusionFailure, MAX_PROOF_HASHES, type ChainInclusion } from './chain-state.ts';
import { BridgeError, malformed } from './errors.ts';
import type { GateVerdictCache } from './gate-verdicts.ts';
import { DID_KERI, keriNonTransferablePrefix } from './root.ts';
import type { KelRootSnapshot } from './roots-kel.ts';
import type { TrustedRoots } from './trusted-roots.ts';

export const MAX_BUNDLE_RECEIPTS = 16;
export const DEFAULT_ANCHOR_SCOPE = 'auths-bridge/chain-state/v1';
export const DEFAULT_ANCHOR_FRESHNESS_SECONDS = 600;
export const ANCHOR_FUTURE_SECONDS = 300;

/** A witness set pinned by `--anchor-witness-set` (one, or two during a witness-key rotation). */
export interface PinnedWitnessSet {
  set: WitnessSet;
  said: string;
}

export interface GatePolicy {
  sets: readonly PinnedWitnessSet[];
  freshnessSeconds: number;
  scope: string;
  /** Final verdicts of G2 and G8 by bundle (gate-verdicts.ts); none: every bundle verified in full. */
  verdicts?: GateVerdictCache;
}

/** The `finalized_anchor` member of `/token`, decoded (shape only). */
export interface FinalizedAnchorRequest {
  bundle: Record<string, unknown>;
  agent: string | undefined;
  proof: ChainInclusion;
}

export interface AnchorFloor {
  idx: number;
  /** hex */
  head: string;
}

export interface AnchorFloorReader {
  /** The seed's floor (hex seed id), or undefined. Store faults reject (503 `store_unavailable`). */
  floor(seed: string): Promise<AnchorFloor | undefined>;
}

/** What a passing gate gives the token and the commit. */
export interface GateResult {
  claim: { ws: string; seed: string; idx: number; ts: number; k: number; n: number };
  /** The floor raise to commit with the nonce. */
  raise: { seed: string; idx: number; head: string };
  ageSeconds: number;
}

/** Decode the request member's shape (400 `malformed_body`). */
export function decodeFinalizedAnchor(v: unknown, at = '/finalized_anchor'): FinalizedAnchorRequest {
  if (!isJsonObject(v)) throw malformed(at, 'must be an object {bundle, agent?, proof}');
  for (const k of Object.keys(v)) if (!['bundle', 'agent', 'proof'].includes(k)) throw malformed(`${at}/${k}`, 'unknown field');
  const bundle = decodeBundleShape(v.bundle, `${at}/bundle`);
  let agent: string | undefined;
  if (v.agent !== undefined) {
    if (typeof v.agent !== 'string' || !/^did:keri:[A-Za-z0-9_-]{1,256}$/.test(v.agent))
      throw malformed(`${at}/agent`, 'must be did:keri:<prefix>');
    agent = v.agent;
  }
  const p = v.proof;
  if (!isJsonObject(p)) throw malformed(`${at}/proof`, 'must be an object {leaf_index, tree_size, hashes}');
  for (const k of Object.keys(p))
    if (!['leaf_index', 'tree_size', 'hashes'].includes(k)) throw malformed(`${at}/proof/${k}`, 'unknown field');
  for (const k of ['leaf_index', 'tree_size'] as const) {
    if (typeof p[k] !== 'number' || !Number.isSafeInteger(p[k]) || p[k] < 0)
      throw malformed(`${at}/proof/${k}`, 'must be a non-negative integer');
  }
  if (!Array.isArray(p.hashes) || p.hashes.length > MAX_PROOF_HASHES || p.hashes.some((h) => typeof h !== 'string' || h.length > 64))
    throw malformed(`${at}/proof/hashes`, `must be an array of at most ${MAX_PROOF_HASHES} base64 hashes`);
  return { bundle, agent, proof: { leaf_index: p.leaf_index as number, tree_size: p.tree_size as number, hashes: p.hashes as string[] } };
}

/** A bundle's outer shape (its contents are parsed by the verifier): an object with ≤ 16 receipts. */
export function decodeBundleShape(v: unknown, at: string): Record<string, unknown> {
  if (!isJsonObject(v)) throw malformed(at, 'must be a finalized bundle object');
  if (!Array.isArray(v.receipts)) throw malformed(`${at}/receipts`, 'must be an array');
  if (v.receipts.length > MAX_BUNDLE_RECEIPTS) throw malformed(`${at}/receipts`, `at most ${MAX_BUNDLE_RECEIPTS} receipts`);
  return v;
}

async function parseBundle(doc: Record<string, unknown>, at: string): Promise<FinalizedBundle> {
  try {
    return await parseFinalizedBundle(doc);
  } catch (e) {
    // a set that is no set (one key or name twice) is G2's failure, not a shape error
    if (e instanceof VerificationError && e.code === 'witness_set_invalid') throw new BridgeError('anchor_witness_set_mismatch', e.message);
    if (e instanceof VerificationError) throw malformed(at, e.message);
    throw e;
  }
}

/** G2: the anchor's {said, threshold} is a pinned set's, and the bundle's own set recomputes to that SAID. */
async function matchPinned(bundle: FinalizedBundle, sets: readonly PinnedWitnessSet[]): Promise<PinnedWitnessSet> {
  const ws = bundle.anchor.witnessSet;
  const pinned = sets.find((s) => s.said === ws.said && s.set.threshold === ws.threshold);
  if (pinned === undefined)
    throw new BridgeError(
      'anchor_witness_set_mismatch',
      `the anchor commits to witness set ${ws.said} (threshold ${ws.threshold}), not a pinned one`,
    );
  let said: string;
  try {
    said = await witnessSetSaid(makeWitnessSet(bundle.witnessSet.threshold, bundle.witnessSet.members));
  } catch (e) {
    if (!(e instanceof VerificationError)) throw e;
    throw new BridgeError('anchor_witness_set_mismatch', `the bundle's witness set is invalid: ${e.message}`);
  }
  if (said !== pinned.said)
    throw new BridgeError('anchor_witness_set_mismatch', `the bundle's witness set recomputes to ${said}, not the pinned ${pinned.said}`);
  return pinned;
}

const eqBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && Buffer.compare(a, b) === 0;

/** G7's first half: is `sig_party` a current key of the party (agent = root, or a delegated agent of the root)? */
export function partyKeyProblem(
  anchor: Anchor,
  root: string,
  agent: string,
  roots: TrustedRoots | undefined,
  kel: KelRootSnapshot | undefined,
): string | null {
  const { curve, publicKey } = anchor.sigParty;
  const weightless = (kt: unknown, i: number): boolean => {
    if (!Array.isArray(kt)) return false;
    const flat: unknown[] = kt.every((c) => Array.isArray(c)) ? (kt as unknown[][]).flat() : kt;
    return flat[i] === '0';
  };
  const inState = (prefix: string): string | null => {
    const view = kel?.views.get(prefix);
    const st = view?.state ?? null;
    if (st === null) return `${prefix} has no accepted KEL state`;
    const tip = kel?.tips.get(prefix);
    if (rowAhead(tip, st)) throw new BridgeError('registry_behind', `the store's tip of ${prefix} is ahead of this bridge's KEL state`);
    if (st.revoked || st.abandoned) return `${prefix} is ${st.revoked ? 'revoked' : 'abandoned'}`;
    const i = st.keys.findIndex((k) => k.curve === curve && eqBytes(k.raw, publicKey));
    if (i < 0 || weightless((st as { kt?: unknown }).kt, i)) return `sig_party is not a current key of ${prefix} (KEL state s=${st.s})`;
    return null;
  };
  if (agent === root) {
    if (roots?.kelRoots?.has(root) === true) return inState(root.slice(DID_KERI.length));
    const party = roots?.registry.parties.get(root);
    if (party !== undefined)
      return party.keys.some((k) => k.curve === curve && eqBytes(k.publicKey, publicKey))
        ? null
        : `sig_party is not a key of ${root} in the trusted roots`;
    if (curve === 'ed25519' && root === DID_KERI + keriNonTransferablePrefix(publicKey)) return null;
    return `sig_party is not a current key of ${root}`;
  }
  const prefix = agent.slice(DID_KERI.length);
  const st = kel?.views.get(prefix)?.state ?? null;
  if (st === null) return `the agent ${agent} has no accepted KEL state`;
  if (st.inception !== 'dip' || st.delegator !== root.slice(DID_KERI.length))
    return `the agent ${agent}'s KEL does not begin with a dip delegated by ${root}`;
  return inState(prefix);
}

export interface GateInput {
  request: FinalizedAnchorRequest | undefined;
  chain: readonly Attestation[];
  roots: TrustedRoots | undefined;
  kel: KelRootSnapshot | undefined;
  /** unix s */
  now: number;
}

/** Run G1–G8 for one `/token` request; throws BridgeError with the first failing check's code. */
export async function checkFreshness(input: GateInput, policy: GatePolicy, floors: AnchorFloorReader): Promise<GateResult> {
  // G1
  const fa = input.request;
  if (fa === undefined)
    throw new BridgeError(
      'anchor_required',
      'this bridge requires "finalized_anchor": a fresh finalized anchor of the chain state (docs/bridge.md)',
    );
  const root = input.chain[0]!.issuer;
  const verified = await verifyAnchorBundle(fa.bundle, root, fa.agent, policy, input.roots, input.kel, input.now, {
    before: async (bundle) => {
      // G5: the anchor commits to the presented chain
      const problem = chainInclusionFailure(attestationChainDigest(input.chain), fa.proof, bundle.anchor.head);
      if (problem !== null) throw new BridgeError('chain_not_anchored', problem);
      // G6: the durable per-seed floor
      const seed = encodeHex(bundle.anchor.seedId);
      const floor = await floors.floor(seed);
      if (floor !== undefined && bundle.anchor.index < floor.idx && encodeHex(bundle.anchor.head) !== floor.head)
        throw new BridgeError(
          'anchor_superseded',
          `anchor index ${bundle.anchor.index} is below the seed's floor ${floor.idx} (a newer chain state is anchored)`,
        );
    },
  });
  return verified;
}

/**
 * G2, G3, G4 (unless `skipTime`), `before` (G5, G6 for `/token`), G7, G8. Shared by `/token` and
 * `POST /anchor-floor`.
 */
export async function verifyAnchorBundle(
  doc: Record<string, unknown>,
  root: string,
  agentGiven: string | undefined,
  policy: GatePolicy,
  roots: TrustedRoots | undefined,
  kel: KelRootSnapshot | undefined,
  now: number,
  hooks: { before?: (bundle: FinalizedBundle) => Promise<void>; skipTime?: boolean } = {},
): Promise<GateResult> {
  // A bundle already found final under a pinned set skips the parse, G2's recomputation and G8
  // (gate-verdicts.ts); every other check runs on every request.
  const cacheKey = policy.verdicts?.keyOf(doc);
  const known = policy.verdicts?.get(cacheKey);
  const knownSet =
    known === undefined
      ? undefined
      : policy.sets.find((s) => s.said === known.said && s.set.threshold === known.bundle.anchor.witnessSet.threshold);
  const bundle = knownSet !== undefined ? known!.bundle : await parseBundle(doc, '/finalized_anchor/bundle');
  // G2
  const pinned = knownSet ?? (await matchPinned(bundle, policy.sets));
  // G3
  const agent = agentGiven ?? root;
  if (!root.startsWith(DID_KERI) || !agent.startsWith(DID_KERI))
    throw new BridgeError(
      'anchor_not_bound',
      'with the freshness gate the root (chain[0].issuer) and the agent must be did:keri: identifiers',
    );
  const { anchor } = bundle;
  if (!eqBytes(deriveSeedId(root, agent, policy.scope), anchor.seedId))
    throw new BridgeError(
      'anchor_not_bound',
      `the anchor's seed_id does not derive from (${root}, ${agent}, ${policy.scope}): it is another party's anchor`,
    );
  // G4
  if (hooks.skipTime !== true) {
    if (anchor.timestamp > now + ANCHOR_FUTURE_SECONDS)
      throw new BridgeError(
        'anchor_future',
        `anchor timestamp ${anchor.timestamp} is more than ${ANCHOR_FUTURE_SECONDS} s ahead of ${now}`,
      );
    if (anchor.timestamp < now - policy.freshnessSeconds)
      throw new BridgeError(
        'anchor_stale',
        `the anchor is ${now - anchor.timestamp} s old; at most ${policy.freshnessSeconds} s (--anchor-freshness)`,
      );
  }
  await hooks.before?.(bundle);
  // G7
  const problem = partyKeyProblem(anchor, root, agent, roots, kel);
  if (problem !== null) throw new BridgeError('anchor_party_invalid', problem);
  // G8 (also re-checks G2 and the party signature: the SDK's pinned contract, verifyFinalizedBundle's
  // with the pinned SAID, on the bundle parsed once)
  let valid: number;
  if (knownSet !== undefined) valid = known!.valid;
  else {
    const party = { curve: anchor.sigParty.curve, publicKey: anchor.sigParty.publicKey };
    const result = await verifyFinalized(anchor, bundle.witnessSet, bundle.receipts, { expectedSaid: pinned.said, party });
    if (!result.final) {
      if (result.code === 'party_signature_invalid' || result.code === 'party_key_mismatch')
        throw new BridgeError('anchor_party_invalid', result.reason);
      if (result.code === 'threshold_not_met') throw new BridgeError('anchor_not_final', result.reason);
      throw new BridgeError('anchor_witness_set_mismatch', result.reason);
    }
    valid = result.valid;
    policy.verdicts?.set(cacheKey, { bundle, said: pinned.said, valid });
  }
  const seed = encodeHex(anchor.seedId);
  return {
    claim: { ws: pinned.said, seed, idx: anchor.index, ts: anchor.timestamp, k: pinned.set.threshold, n: valid },
    raise: { seed, idx: anchor.index, head: encodeHex(anchor.head) },
    ageSeconds: now - anchor.timestamp,
  };
}
