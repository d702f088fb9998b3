/**
 * The freshness gate's configuration (SPEC §7.2 rev 4 "Flags") as one part the assembly
 * (src/bridge/node.ts) loads: `--require-finalized-anchor`, one or two pinned
 * `--anchor-witness-set` files, `--anchor-freshness`, `--anchor-scope`, `--anchor-floor-max-seeds`
 * and `--anchor-floor-rate`; and the `/anchor-floor` per-IP token bucket.
 */
import { readFileSync } from 'node:fs';
import { parseWitnessSet, witnessSetSaid } from '../verify/index.ts';
import { BridgeConfigError } from './errors.ts';
import { GateVerdictCache } from './gate-verdicts.ts';
import { DEFAULT_ANCHOR_FRESHNESS_SECONDS, DEFAULT_ANCHOR_SCOPE, type GatePolicy, type PinnedWitnessSet } from './freshness-gate.ts';

export interface GateConfig {
  requireFinalizedAnchor?: boolean;
  anchorWitnessSetFiles?: string[];
  /** seconds, 60..86 400 (default 600) */
  anchorFreshnessSeconds?: number;
  anchorScope?: string;
  anchorFloorMaxSeeds?: number;
  /** `--anchor-floor-rate` rps:burst (default 1:10) */
  anchorFloorRate?: { rps: number; burst: number };
  nonceStore?: 'durable' | 'memory';
  store?: string;
}

const fail = (m: string): never => {
  throw new BridgeConfigError('invalid_option', m);
};

/** The checks that need no I/O. */
export function checkGateConfig(c: GateConfig): boolean {
  if (c.requireFinalizedAnchor !== true) {
    if ((c.anchorWitnessSetFiles ?? []).length > 0) fail('--anchor-witness-set needs --require-finalized-anchor');
    return false;
  }
  const files = c.anchorWitnessSetFiles ?? [];
  if (files.length < 1 || files.length > 2)
    fail('--require-finalized-anchor needs --anchor-witness-set FILE (once, or twice during a witness-key rotation)');
  const f = c.anchorFreshnessSeconds ?? DEFAULT_ANCHOR_FRESHNESS_SECONDS;
  if (!Number.isSafeInteger(f) || f < 60 || f > 86_400) fail('--anchor-freshness must be 1m..24h');
  if (c.nonceStore === 'memory') fail('--require-finalized-anchor needs a durable store for its anchor floors (drop --nonce-store memory)');
  return true;
}

/** Read the pinned sets; undefined without the gate. */
export async function loadGatePolicy(c: GateConfig): Promise<GatePolicy | undefined> {
  if (!checkGateConfig(c)) return undefined;
  const sets: PinnedWitnessSet[] = [];
  for (const file of c.anchorWitnessSetFiles!) {
    let set;
    try {
      set = await parseWitnessSet(JSON.parse(readFileSync(file, 'utf8')));
    } catch (e) {
      return fail(`--anchor-witness-set ${file}: ${(e as Error).message}`);
    }
    sets.push({ set, said: await witnessSetSaid(set) });
  }
  return {
    sets,
    freshnessSeconds: c.anchorFreshnessSeconds ?? DEFAULT_ANCHOR_FRESHNESS_SECONDS,
    scope: c.anchorScope ?? DEFAULT_ANCHOR_SCOPE,
    verdicts: new GateVerdictCache(),
  };
}

/** A per-IP token bucket (bounded: at most `maxClients` buckets, the oldest dropped first). */
export class IpBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly rate: { rps: number; burst: number };
  private readonly maxClients: number;
  constructor(rate: { rps: number; burst: number }, maxClients = 10_000) {
    this.rate = rate;
    this.maxClients = maxClients;
  }

  take(ip: string, now: number): boolean {
    const b = this.buckets.get(ip) ?? { tokens: this.rate.burst, at: now };
    b.tokens = Math.min(this.rate.burst, b.tokens + ((now - b.at) / 1000) * this.rate.rps);
    b.at = now;
    this.buckets.delete(ip);
    if (this.buckets.size >= this.maxClients) this.buckets.delete(this.buckets.keys().next().value!);
    this.buckets.set(ip, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }
}
