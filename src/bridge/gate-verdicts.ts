/**
 * The freshness gate's verdict cache (issue 30): the expensive pure part of the gate — the bundle
 * parse, G2's SAID recomputation and G8 (the party signature and every receipt: cosignature,
 * checkpoint signature, inclusion proof) — depends only on the bundle's content and the pinned set
 * it matched, so a device presenting the same finalized bundle again (every token until the party
 * anchors anew) need not pay for it twice.
 *
 * What is remembered: a bundle that passed G2 and G8 (final), keyed by SHA-256 of its RFC 8785
 * canonical JSON, with the pinned set's SAID it matched, its parsed form and its count of valid members.
 * Failures are never remembered (a transient `crypto_unavailable` must not stick, and an attacker
 * cannot fill the cache with bundles that cost nothing to make). Never cached, because they change
 * while the bundle does not: G3 (the root and agent of this request), G4 (the clock), G5 (the
 * presented chain), G6 (the durable floor), G7 (whether the party key is still current) and the
 * nonce. Bounded: the least recently used entry goes first.
 */
import { createHash } from 'node:crypto';
import { canonicalBytes } from '../encoding/jcs.ts';
import type { FinalizedBundle } from '../verify/index.ts';

export const DEFAULT_GATE_VERDICTS = 1024;

export interface GateVerdict {
  bundle: FinalizedBundle;
  /** The pinned set's SAID the bundle matched (G2). */
  said: string;
  /** Distinct pinned members with a valid receipt (G8). */
  valid: number;
}

export class GateVerdictCache {
  private readonly entries = new Map<string, GateVerdict>();
  private readonly max: number;
  hits = 0;
  misses = 0;

  constructor(max = DEFAULT_GATE_VERDICTS) {
    this.max = max;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The cache key of a bundle document (parsed JSON), or undefined when it has no canonical form (never cached). */
  keyOf(doc: Record<string, unknown>): string | undefined {
    let bytes: Uint8Array;
    try {
      bytes = canonicalBytes(doc);
    } catch {
      return undefined;
    }
    return createHash('sha256').update(bytes).digest('base64');
  }

  /** The remembered verdict for this bundle, or undefined (the caller checks its `said` is still pinned). */
  get(key: string | undefined): GateVerdict | undefined {
    if (key === undefined) return undefined;
    const v = this.entries.get(key);
    if (v === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.entries.delete(key);
    this.entries.set(key, v);
    return v;
  }

  /** Remember a final verdict (only a bundle that passed G2 and G8). */
  set(key: string | undefined, verdict: GateVerdict): void {
    if (key === undefined || this.max === 0) return;
    this.entries.delete(key);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, verdict);
  }
}
