/** Test fixtures for anchors: deterministic party keys and signed anchors. */
import { ed25519KeyFromSeed, ed25519PublicKeyBytes, signEd25519 } from '../../src/crypto/ed25519.ts';
import { partyMessage } from '../../src/anchor/messages.ts';
import type { Anchor } from '../../src/anchor/types.ts';
import type { KeyObject } from 'node:crypto';

export const fill = (byte: number, n = 32): Uint8Array => new Uint8Array(n).fill(byte);

export interface TestParty {
  key: KeyObject;
  publicKey: Uint8Array;
}

export function edParty(seedByte: number): TestParty {
  const key = ed25519KeyFromSeed(fill(seedByte));
  return { key, publicKey: ed25519PublicKeyBytes(key) };
}

export interface AnchorFields {
  seedId: Uint8Array;
  index: number;
  head: Uint8Array;
  cumulative: bigint;
  timestamp: number;
  witnessSet?: { said: string; threshold: number };
}

export function signAnchor(p: TestParty, f: AnchorFields): Anchor {
  const unsigned: Anchor = {
    seedId: f.seedId,
    index: f.index,
    head: f.head,
    cumulative: f.cumulative,
    timestamp: f.timestamp,
    witnessSet: f.witnessSet ?? { said: 'EWitSet', threshold: 2 },
    sigParty: { curve: 'ed25519', publicKey: p.publicKey, signature: new Uint8Array(64) },
  };
  return { ...unsigned, sigParty: { ...unsigned.sigParty, signature: signEd25519(p.key, partyMessage(unsigned)) } };
}
