/**
 * Events for the verification-worker tests and bench (src/kel-witness/offload.ts): the worst event
 * the grammar lets a controller send (32 keys, kt 32, 256 seals of the longest shape: ≈ 48 KB of
 * body), and P-256 controllers. Built with src/keri/build.ts.
 */
import type { Seal } from '../../src/keri/event.ts';
import { KelBuilder, generateSigner, type KelSigner } from '../../src/keri/build.ts';

/** A `{i,s,p,t,d}` seal (the longest shape), distinct per j. */
export const longSeal = (j: number): Seal => ({
  i: 'E' + j.toString(36).padStart(43, 'A'),
  s: (j + 1).toString(16),
  p: 'E' + 'B'.repeat(43),
  t: 'ixn',
  d: 'E' + 'C'.repeat(43),
});

export const manySeals = (count = 256): Seal[] => Array.from({ length: count }, (_, j) => longSeal(j));

export interface Wire {
  raw: string;
  att: string;
}

export const wire = (b: { event: Record<string, unknown>; attachment: string }): Wire => ({
  raw: JSON.stringify(b.event),
  att: b.attachment,
});

/** An inception witnessed by `witness`: `keys` signers of `curve`, `seals` in `a`. */
export function controller(
  witness: string,
  o: { keys?: number; seals?: number; curve?: 'ed25519' | 'p256' } = {},
): {
  kel: KelBuilder;
  icp: Wire;
  signers: KelSigner[];
  /** The keys committed to in `n`. */
  next: KelSigner[];
} {
  const curve = o.curve ?? 'ed25519';
  const signers = Array.from({ length: o.keys ?? 1 }, () => generateSigner(curve));
  const next = signers.map(() => generateSigner(curve));
  const kel = KelBuilder.incept({ signers, next, seals: manySeals(o.seals ?? 0), backers: [witness] });
  return { kel, icp: { raw: JSON.stringify(kel.events[0]), att: kel.attachments[0]! }, signers, next };
}

/** The worst-case inception: 32 Ed25519 keys (32 signatures, kt 32), 256 long seals. */
export const worstCase = (witness: string) => controller(witness, { keys: 32, seals: 256 });
