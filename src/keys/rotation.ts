/**
 * Witness-key rotation with an overlap (SPEC §1.2): the start-up acceptance table over the store's
 * key history, the announce / abort / complete entries it logs (in the transaction that records
 * the history), and the guard every checkpoint signature passes (the store's key set must be the
 * signer's, so replicas follow an announcement or a completion by refusing, never by signing with
 * a stale set).
 *
 *   --key current                         none recorded → nothing (or announce with a new --next-key)
 *   --key current --next-key recorded     the overlap goes on
 *   --key current --next-key new          with --abandon-next: abort the recorded one, announce the new
 *   --key next (no --next-key)            completion, at least --key-overlap-min after the announcement
 *   anything else                         store_identity_mismatch; a retired key: key_retired
 */
import type { KeyObject } from 'node:crypto';
import { signEd25519 } from '../crypto/ed25519.ts';
import { encodeHex } from '../encoding/hex.ts';
import { formatTimestamp } from '../encoding/time.ts';
import { StoreOpenError } from '../store/errors.ts';
import type { StoreTransaction, WitnessKeyRecord } from '../store/types.ts';
import {
  encodeRotationEntry,
  KEY_ROTATION_V,
  rotationMessage,
  STAGE_SIGNATURES,
  type RotationEntry,
  type RotationStage,
} from '../verify/key-rotation.ts';
import { KeyRotationError, SignerError } from './errors.ts';
import { isSigner, type Signer } from './signer.ts';

export type { RotationEntry, RotationStage } from '../verify/key-rotation.ts';

/** What start-up does to the history (decided by `planRotation`). */
export type RotationPlan =
  | { kind: 'none' }
  | { kind: 'announce'; next: string }
  | { kind: 'abort_and_announce'; abandoned: string; next: string }
  | { kind: 'complete'; old: string };

export interface RotationStart {
  /** hex: --key, --next-key */
  key: string;
  nextKey: string | undefined;
  abandonNext: boolean;
  /** Unix seconds. */
  now: number;
  overlapMinSeconds: number;
}

/** The key set that signs checkpoints: current, then next (hex). */
export function activeKeySet(history: readonly WitnessKeyRecord[]): string[] {
  const current = history.find((r) => r.state === 'current');
  const next = history.find((r) => r.state === 'next');
  return [...(current === undefined ? [] : [current.key]), ...(next === undefined ? [] : [next.key])];
}

const mismatch = (why: string): StoreOpenError => new StoreOpenError('store_identity_mismatch', why);

/** SPEC §1.2's start-up table. Throws store_identity_mismatch, key_retired or key_overlap_too_short. */
export function planRotation(history: readonly WitnessKeyRecord[], s: RotationStart): RotationPlan {
  const retired = new Set(history.filter((r) => r.state === 'retired').map((r) => r.key));
  for (const [flag, k] of [
    ['--key', s.key],
    ['--next-key', s.nextKey],
  ] as const) {
    if (k !== undefined && retired.has(k))
      throw new KeyRotationError('key_retired', `${flag} ${k} is a retired witness key: it is refused forever (docs/keys.md)`);
  }
  const current = history.find((r) => r.state === 'current');
  const next = history.find((r) => r.state === 'next');
  if (current === undefined) throw mismatch('the store has no current witness key');
  if (s.key === current.key) {
    if (next === undefined) return s.nextKey === undefined ? { kind: 'none' } : { kind: 'announce', next: s.nextKey };
    if (s.nextKey === next.key) return { kind: 'none' };
    if (s.nextKey === undefined)
      throw mismatch(
        `the store records the next witness key ${next.key}: start with --next-key for it (the overlap goes on), ` +
          'or with --key for it alone (completion), or with another --next-key and --abandon-next',
      );
    if (!s.abandonNext)
      throw mismatch(
        `the store records the next witness key ${next.key}, not ${s.nextKey}: add --abandon-next to replace it (docs/keys.md)`,
      );
    return { kind: 'abort_and_announce', abandoned: next.key, next: s.nextKey };
  }
  if (next !== undefined && s.key === next.key) {
    if (s.nextKey !== undefined)
      throw mismatch(
        '--key is the recorded next witness key: complete the rotation first (start without --next-key), then announce another',
      );
    const ready = next.since + s.overlapMinSeconds;
    if (s.now < ready)
      throw new KeyRotationError(
        'key_overlap_too_short',
        `the rotation to ${next.key} was announced at ${formatTimestamp(next.since)}; --key-overlap-min allows completing it from ${formatTimestamp(ready)}`,
      );
    return { kind: 'complete', old: current.key };
  }
  throw mismatch(`the store is bound to witness_key ${JSON.stringify(current.key)}, not ${JSON.stringify(s.key)}`);
}

/** A witness key as the node holds it. */
export type WitnessSigningKey = KeyObject | Signer;

async function signWith(key: WitnessSigningKey, message: Uint8Array): Promise<Uint8Array> {
  return isSigner(key) ? key.sign(message) : signEd25519(key, message);
}

/** Build and sign one rotation entry. `oldKey`/`newKey` sign as the stage requires. */
export async function signRotationEntry(
  stage: RotationStage,
  ids: { name: string; origin: string; old: string; new: string; time: number },
  oldKey: WitnessSigningKey | undefined,
  newKey: WitnessSigningKey | undefined,
): Promise<RotationEntry> {
  const entry: RotationEntry = {
    v: KEY_ROTATION_V,
    stage,
    name: ids.name,
    origin: ids.origin,
    old: ids.old,
    new: ids.new,
    time: formatTimestamp(ids.time),
  };
  const message = rotationMessage(entry);
  const want = STAGE_SIGNATURES[stage];
  if (want.old) entry.sig_old = encodeHex(await signWith(oldKey!, message));
  if (want.new) entry.sig_new = encodeHex(await signWith(newKey!, message));
  return entry;
}

export interface RotationKeys {
  /** --key */
  key: WitnessSigningKey;
  keyHex: string;
  /** --next-key */
  next: WitnessSigningKey | undefined;
  nextHex: string | undefined;
}

/**
 * Apply `plan` inside a log transaction: record the history and append the entries (their
 * log indexes are kept with the history for GET /v1/key-rotation). Re-plans on the history the transaction sees, so two replicas starting
 * together record one announcement.
 */
export async function applyRotation(
  tx: StoreTransaction,
  append: (entry: Uint8Array) => number,
  keys: RotationKeys,
  start: RotationStart,
  ids: { name: string; origin: string },
): Promise<{ plan: RotationPlan; entries: RotationEntry[] }> {
  const plan = planRotation(await tx.keys.history(), start);
  const time = start.now;
  const entries: RotationEntry[] = [];
  const log = async (e: RotationEntry): Promise<void> => {
    entries.push(e);
    const bytes = encodeRotationEntry(e);
    await tx.keys.addRotationEntry({ logIndex: append(bytes), entry: new TextDecoder().decode(bytes) });
  };
  if (plan.kind === 'abort_and_announce') {
    await log(await signRotationEntry('abort', { ...ids, old: keys.keyHex, new: plan.abandoned, time }, keys.key, undefined));
    await tx.keys.setKey({ key: plan.abandoned, state: 'retired', since: time });
  }
  if (plan.kind === 'announce' || plan.kind === 'abort_and_announce') {
    await log(await signRotationEntry('announce', { ...ids, old: keys.keyHex, new: plan.next, time }, keys.key, keys.next));
    await tx.keys.setKey({ key: plan.next, state: 'next', since: time });
  }
  if (plan.kind === 'complete') {
    await log(await signRotationEntry('complete', { ...ids, old: plan.old, new: keys.keyHex, time }, undefined, keys.key));
    await tx.keys.setKey({ key: plan.old, state: 'retired', since: time });
    await tx.keys.setKey({ key: keys.keyHex, state: 'current', since: time });
  }
  return { plan, entries };
}

/**
 * The guard before each checkpoint signature (src/log/log.ts KeySetGuard): the store's key set
 * (current, next) must be `signerSet`, else 503 `signer_unavailable` — another replica announced or
 * completed a rotation this process does not hold the keys for (restart it with them). `observe`
 * hears every set read (readiness, src/witness/key-set-watch.ts).
 */
export function keySetGuard(
  signerSet: readonly string[],
  observe?: (stored: readonly string[]) => void,
): (tx: StoreTransaction) => Promise<void> {
  const mine = signerSet.join(',');
  return async (tx) => {
    const stored = activeKeySet(await tx.keys.history());
    observe?.(stored);
    if (stored.length === 0 || stored.join(',') === mine) return;
    throw new SignerError(
      'signer_unavailable',
      `the store's witness key set is [${stored.join(', ')}], this process signs with [${signerSet.join(', ')}]: ` +
        'a rotation was announced or completed by another process; restart with its --key/--next-key (docs/keys.md)',
    );
  };
}
