/**
 * Signing thresholds `kt` and `nt` (SPEC §3.5 rule 4, rev 4 "Weighted thresholds"; keripy's
 * `Tholder`). A threshold is either simple (hex text `"2"` or keripy's JSON integer `2`: at least
 * that many distinct indices) or weighted: a list of weights (one clause) or a list of clauses,
 * each weight `"0"`, `"1"` or `"N/D"` (N, D `[1-9][0-9]{0,5}`, N ≤ D), weight j belonging to key j
 * (or next-key commitment j). Indices satisfy a weighted threshold when, in every clause, the
 * weights of the indices sum to ≥ 1. Arithmetic is exact: sums are BigInt fractions, never floats.
 *
 * Not accepted (keripy accepts some, SPEC refuses them: `threshold_invalid`): nested weight maps,
 * a weight count other than the number of keys, a clause summing to < 1, any other weight form.
 */
import { MAX_INTEGER_THRESHOLD, hexNumber } from './event.ts';

/** One weight, an exact fraction n/d (d ≥ 1). */
export interface Weight {
  n: bigint;
  d: bigint;
  /** As written: `"0"`, `"1"`, `"N/D"`. */
  text: string;
}

/** A threshold as checked by rule 4: `size` is the number of keys (or commitments) it is over. */
export type Tholder =
  | { weighted: false; value: number; size: number; text: string }
  | { weighted: true; clauses: readonly (readonly Weight[])[]; size: number; text: string };

/** A threshold's JSON value as the event carries it: hex text, an integer, or a weighted list. */
export type ThresholdJson = string | number | readonly unknown[];

const FRACTION = /^([1-9][0-9]{0,5})\/([1-9][0-9]{0,5})$/;

/** A weight of a weighted threshold, or a reason it is not one. */
function weight(v: unknown): Weight | string {
  if (typeof v !== 'string') return `a weight must be a string ("0", "1" or "N/D"), got ${JSON.stringify(v)}`;
  if (v === '0') return { n: 0n, d: 1n, text: v };
  if (v === '1') return { n: 1n, d: 1n, text: v };
  const m = FRACTION.exec(v);
  if (m === null) return `the weight ${JSON.stringify(v)} is not "0", "1" or "N/D"`;
  const n = BigInt(m[1]!);
  const d = BigInt(m[2]!);
  if (n > d) return `the weight ${v} is more than 1`;
  return { n, d, text: v };
}

/** Whether the weights sum to at least 1 (exact: Σ n_i/d_i ≥ 1). */
function sumsToOne(weights: readonly Weight[]): boolean {
  let num = 0n;
  let den = 1n;
  for (const w of weights) {
    num = num * w.d + w.n * den;
    den *= w.d;
    if (num >= den) return true;
  }
  return num >= den;
}

/** The number a simple threshold denotes (hex text or a JSON integer), or NaN when it is neither. */
export function simpleValue(v: unknown): number {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 && v <= MAX_INTEGER_THRESHOLD ? v : NaN;
  if (typeof v === 'string') return hexNumber(v);
  return NaN;
}

/**
 * Rule 4's reading of a `kt`/`nt` over `size` keys: the threshold, or why it is `threshold_invalid`.
 * Range checks of a simple threshold (1 ≤ kt ≤ |k|, …) are the caller's; weighted ones are checked here.
 */
export function parseTholder(v: unknown, size: number, name: string): Tholder | string {
  if (!Array.isArray(v)) {
    const value = simpleValue(v);
    if (Number.isNaN(value)) return `${name} ${JSON.stringify(v)} is neither a hex number, an integer nor a weighted list`;
    return { weighted: false, value, size, text: String(value) };
  }
  if (v.length === 0) return `${name} is an empty weighted list`;
  const nested = v.every((c) => Array.isArray(c));
  if (!nested && v.some((c) => Array.isArray(c))) return `${name} mixes weights and clauses`;
  const raw = (nested ? v : [v]) as unknown[][];
  const clauses: Weight[][] = [];
  let count = 0;
  for (const c of raw) {
    if (c.length === 0) return `${name} has an empty clause`;
    const ws: Weight[] = [];
    for (const x of c) {
      const w = weight(x);
      if (typeof w === 'string') return `${name}: ${w}`;
      ws.push(w);
    }
    if (!sumsToOne(ws)) return `${name}: the clause [${ws.map((w) => w.text).join(',')}] sums to less than 1`;
    count += ws.length;
    clauses.push(ws);
  }
  if (count !== size) return `${name} has ${count} weight(s) for ${size} key(s)`;
  return { weighted: true, clauses, size, text: JSON.stringify(v) };
}

/** Whether the distinct `indices` satisfy the threshold. */
export function tholderMet(t: Tholder, indices: ReadonlySet<number>): boolean {
  if (!t.weighted) return indices.size >= t.value;
  let at = 0;
  for (const clause of t.clauses) {
    const chosen = clause.filter((_, j) => indices.has(at + j));
    at += clause.length;
    if (!sumsToOne(chosen)) return false;
  }
  return true;
}

/** For each index, whether its weight is not "0" (every index of a simple threshold counts). */
export function nonZeroWeights(t: Tholder): boolean[] {
  if (!t.weighted) return Array.from({ length: t.size }, () => true);
  return t.clauses.flat().map((w) => w.n !== 0n);
}

/** How the state reports a threshold: a simple one as its number, a weighted one as its clauses of weight texts. */
export function tholderValue(t: Tholder): number | string[][] {
  return t.weighted ? t.clauses.map((c) => c.map((w) => w.text)) : t.value;
}
