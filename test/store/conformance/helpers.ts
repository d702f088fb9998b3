/** Shared fixtures of the store conformance suite (test/store/conformance.ts). */
import assert from 'node:assert/strict';
import { encodeAnchor, encodeDuplicityProof } from '../../../src/anchor/codec.ts';
import { stringifyJson } from '../../../src/encoding/json.ts';
import { ProtocolError } from '../../../src/errors.ts';
import { TransparencyLog } from '../../../src/log/log.ts';
import { LogSigner } from '../../../src/log/signer.ts';
import { ed25519KeyFromSeed } from '../../../src/crypto/ed25519.ts';
import type { OriginState, SeedRecord, StoreIdentity, WitnessStore } from '../../../src/store/types.ts';
import { edParty, fill, signAnchor } from '../../helpers/anchors.ts';

export interface StoreFactory {
  /** A fresh, empty store. */
  fresh(): Promise<WitnessStore>;
  /** Close `store` and open its backing storage again. */
  reopen(store: WitnessStore): Promise<WitnessStore>;
}

const alice = edParty(0x09);
export const ID: StoreIdentity = { witnessKey: 'ab'.repeat(32), name: 'witness.test/w1', logOrigin: 'witness.test/w1/anchors' };
const signer = new LogSigner(ID.logOrigin, ed25519KeyFromSeed(fill(0x01)));

/** The log above a store under test (a fresh node cache each time, so reads reach the driver). */
export const logOf = (s: WitnessStore): TransparencyLog => new TransparencyLog(s, signer);

export const entry = (i: number): Uint8Array => new TextEncoder().encode(`entry ${i} ${'x'.repeat(i % 40)}`);
export const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

export function anchor(seedByte: number, index: number, head = index) {
  return signAnchor(alice, {
    seedId: fill(seedByte),
    index,
    head: fill(head),
    cumulative: BigInt(index) * 10n ** 20n,
    timestamp: 1700000000 + index,
  });
}

export function record(seedByte: number, index: number, leafIndex: number, at: number, head = index): SeedRecord {
  return {
    seedId: fill(seedByte),
    owner: 'did:keri:EAlice',
    createdAt: 1800000000,
    latest: anchor(seedByte, index, head),
    cosignature: { signature: fill(0x40 + index, 64), timestamp: at, leafIndex },
  };
}

/** A comparable form of a record (Buffer vs Uint8Array and bigint safe). */
export function shape(r: SeedRecord | undefined): unknown {
  if (r === undefined) return undefined;
  return {
    seedId: hex(r.seedId),
    owner: r.owner,
    createdAt: r.createdAt,
    latest: stringifyJson(encodeAnchor(r.latest)),
    sig: hex(r.cosignature.signature),
    at: r.cosignature.timestamp,
    leaf: r.cosignature.leafIndex,
    duplicity: r.duplicity === undefined ? null : stringifyJson(encodeDuplicityProof(r.duplicity)),
  };
}

export function origin(size: number, lastTime: number, name = 'example.com/log'): OriginState {
  return { origin: name, size, root: fill(size & 0xff), checkpoint: `${name}\n${size}\n`, cosignatures: `— w ${size}\n`, lastTime };
}

/** Append `batches` of entries, one log transaction each (each signs a checkpoint). */
export async function appendAll(store: WitnessStore, batches: number[]): Promise<Uint8Array[]> {
  const log = logOf(store);
  const all: Uint8Array[] = [];
  for (const n of batches) {
    const es = Array.from({ length: n }, (_, i) => entry(all.length + i));
    const { value: first, checkpoint } = await log.transaction((_tx, batch) => {
      const f = batch.size;
      for (const e of es) batch.append(e);
      return Promise.resolve(f);
    });
    assert.equal(first, all.length);
    assert.equal(checkpoint?.size, all.length + n);
    all.push(...es);
  }
  return all;
}

/** The log size as the store sees it inside a transaction. */
export const storedSize = (s: WitnessStore): Promise<number> => s.transaction((tx) => tx.log.size());

/** Drivers report failures as rejected promises, never as synchronous throws: `fn()` is called directly. */
export async function rejectsWithCode(fn: () => Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(fn(), (e: unknown) => {
    assert.ok(e instanceof ProtocolError, `expected a ProtocolError, got ${String(e)}`);
    assert.equal(e.code, code);
    return true;
  });
}

/** Run `fn` on a fresh store and close it after (or the one `use` last handed over, after a reopen). */
export async function withStore(
  factory: () => StoreFactory,
  fn: (s: WitnessStore, f: StoreFactory, use: (s: WitnessStore) => WitnessStore) => Promise<void>,
): Promise<void> {
  const f = factory();
  let s = await f.fresh();
  try {
    await fn(s, f, (next) => (s = next));
  } finally {
    await s.close();
  }
}
