/**
 * Building signed KELs from key material (pure: keys in, events and attachments out). For tests,
 * benchmarks and the `npm start` demo, which generates KELs at runtime; the witness itself only
 * verifies. The events are what keripy and upstream produce: canonical member order, `v` for the
 * size, `d` (and a self-addressing prefix) the SAID, rotations signed with dual-index codes when
 * a key moved position in the prior `n`, delegated events anchored by the delegator's seal.
 *
 *   const root = KelBuilder.incept({ signers: [a], next: [a2] });
 *   const agent = KelBuilder.incept({ signers: [b], next: [b2], delegator: root.prefix });
 *   const anchor = root.interact([agent.sealOf(0)]);
 *   agent.addSourceSeal(0, anchor);               // optional -G couple
 *   agent.rotate({ signers: [b2], next: [b3] });   // a drt: pending until root anchors it
 *   root.interact([agent.sealOf(1)]);
 *   root.document();                                // {prefix, events, attachments}
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes, signEd25519 } from '../crypto/ed25519.ts';
import { p256PublicKeyBytes, signP256 } from '../crypto/p256.ts';
import { encodeAttachment, parseAttachment, type IndexedSignature, type SignatureCode } from './attachments.ts';
import { computeSaid, hexText, parseEvent, MEMBERS, type Seal } from './event.ts';
import { encodeQb64 } from './qb64.ts';
import { keyCommitment } from './said.ts';
import type { KelKey, RawKel } from './types.ts';
import { sha256Hex } from '../crypto/sha256.ts';

/** A signing key: its public KelKey and a signer over event bytes. */
export interface KelSigner {
  readonly key: KelKey;
  sign(message: Uint8Array): Uint8Array;
}

export function ed25519Signer(seedOrKey: Uint8Array | KeyObject, transferable = true): KelSigner {
  const privateKey = seedOrKey instanceof Uint8Array ? ed25519KeyFromSeed(seedOrKey) : seedOrKey;
  const raw = ed25519PublicKeyBytes(privateKey);
  return { key: { curve: 'ed25519', raw, qb64: encodeQb64(transferable ? 'D' : 'B', raw) }, sign: (m) => signEd25519(privateKey, m) };
}

/** A P-256 signer (signatures normalized to low S; flip S yourself to test high S). */
export function p256Signer(privateKey: KeyObject, transferable = true): KelSigner {
  const raw = p256PublicKeyBytes(privateKey);
  return { key: { curve: 'p256', raw, qb64: encodeQb64(transferable ? '1AAJ' : '1AAI', raw) }, sign: (m) => signP256(privateKey, m) };
}

/** A fresh random signer. */
export function generateSigner(curve: 'ed25519' | 'p256' = 'ed25519'): KelSigner {
  if (curve === 'ed25519') return ed25519Signer(generateKeyPairSync('ed25519').privateKey);
  return p256Signer(generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey);
}

/** The next-key commitment to a signer's key. */
export const commitmentTo = (signer: KelSigner | KelKey): string => keyCommitment('key' in signer ? signer.key.qb64 : signer.qb64);

/**
 * Complete an event given its members without `v` and `d` (any order): members put in canonical
 * order, `v` for the size, `d` the SAID, and for a self-addressing inception `i` = `d` (pass
 * `i: ''` or leave it out). Returns the JSON object as it is stored.
 */
export function finalizeEvent(members: Record<string, unknown>): Record<string, unknown> {
  const t = members.t as keyof typeof MEMBERS;
  const order = [...MEMBERS[t]];
  if (t === 'drt' && members.di !== undefined) order.push('di');
  const inception = t === 'icp' || t === 'dip';
  const selfAddressing = inception && (members.i === undefined || members.i === '');
  const dummy = 'E' + 'A'.repeat(43);
  const draft: Record<string, unknown> = {};
  for (const m of order) {
    if (m === 'v') draft.v = 'KERI10JSON000000_';
    else if (m === 'd' || (m === 'i' && selfAddressing)) draft[m] = dummy;
    else draft[m] = members[m];
  }
  // parseEvent checks the grammar; the SAID hashes the placeholders, whatever d and i hold.
  const probe = parseEvent(draft);
  draft.v = probe.expectedVersion;
  const said = computeSaid(probe);
  draft.d = said;
  if (selfAddressing) draft.i = said;
  return draft;
}

export interface SignOptions {
  /** Per signer: the index of its key in the prior `n` (rotations), null when it is new. Default: its own index. */
  ondex?: readonly (number | null)[];
  /** Code for P-256 signatures: `E` (keripy) or `A` (upstream auths). */
  p256Code?: 'E' | 'A';
}

/** Sign an event's canonical bytes with signers[index] at each index: the `-A` attachment. */
export function signEvent(event: Record<string, unknown>, signers: readonly KelSigner[], opts: SignOptions = {}): string {
  const bytes = parseEvent(event).bytes;
  const signatures: IndexedSignature[] = signers.map((signer, index) => {
    const ondex: number | null = opts.ondex === undefined ? index : (opts.ondex[index] ?? null);
    const p256 = signer.key.curve === 'p256' && opts.p256Code !== 'A';
    let code: SignatureCode;
    if (ondex === null) code = p256 ? 'F' : 'B';
    else if (ondex === index && index < 64) code = p256 ? 'E' : 'A';
    else code = p256 ? '2E' : '2A';
    return { code, index, ondex, signature: signer.sign(bytes) };
  });
  return encodeAttachment({ signatures, sourceSeals: [] });
}

export interface InceptOptions {
  signers: readonly KelSigner[];
  /** The next keys (their commitments are put in `n`), or commitments directly; [] = non-transferable. */
  next: readonly (KelSigner | string)[];
  kt?: ThresholdOption;
  nt?: ThresholdOption;
  config?: readonly string[];
  seals?: readonly Seal[];
  backers?: readonly string[];
  bt?: number | { json: number };
  /** Makes a `dip` delegated by this prefix. */
  delegator?: string;
  /** A basic prefix (i = the only key) instead of a self-addressing one. */
  basic?: boolean;
  p256Code?: 'E' | 'A';
}

export interface RotateOptions {
  signers: readonly KelSigner[];
  next: readonly (KelSigner | string)[];
  kt?: ThresholdOption;
  nt?: ThresholdOption;
  seals?: readonly Seal[];
  cut?: readonly string[];
  add?: readonly string[];
  bt?: number | { json: number };
  /** On a delegated KEL, write `di` on the drt (upstream form; keripy omits it). */
  withDelegator?: boolean;
  p256Code?: 'E' | 'A';
}

export interface BuiltEvent {
  event: Record<string, unknown>;
  attachment: string;
  s: number;
  d: string;
}

/**
 * A threshold option: a number is written as hex text (`2` → `"2"`); anything else (keripy's
 * integer form `{ json: 2 }`, a weighted list `["1/2","1/2"]`) is written as given.
 */
export type ThresholdOption = number | readonly unknown[] | { json: unknown };

function thresholdJson(t: ThresholdOption | undefined, fallback: number): unknown {
  if (t === undefined) return hexText(fallback);
  if (typeof t === 'number') return hexText(t);
  if (Array.isArray(t)) return t;
  return (t as { json: unknown }).json;
}

const commitments = (next: readonly (KelSigner | string)[]): string[] => next.map((x) => (typeof x === 'string' ? x : commitmentTo(x)));

/** A KEL under construction, one identifier's events and attachments. */
export class KelBuilder {
  readonly prefix: string;
  readonly delegator: string | null;
  readonly events: Record<string, unknown>[] = [];
  readonly attachments: string[] = [];
  private next: string[];
  private backers: string[];
  /** The signers of the current keys (for ixn). */
  private current: readonly KelSigner[];

  private constructor(first: BuiltEvent, signers: readonly KelSigner[], next: string[], backers: string[], delegator: string | null) {
    this.prefix = first.event.i as string;
    this.delegator = delegator;
    this.events.push(first.event);
    this.attachments.push(first.attachment);
    this.current = signers;
    this.next = next;
    this.backers = backers;
  }

  static incept(opts: InceptOptions): KelBuilder {
    const n = commitments(opts.next);
    const backers = [...(opts.backers ?? [])];
    const t = opts.delegator === undefined ? 'icp' : 'dip';
    const members: Record<string, unknown> = {
      t,
      i: opts.basic === true ? opts.signers[0]!.key.qb64 : '',
      s: '0',
      kt: thresholdJson(opts.kt, opts.signers.length),
      k: opts.signers.map((x) => x.key.qb64),
      nt: thresholdJson(opts.nt, n.length),
      n,
      bt: thresholdJson(opts.bt, backers.length),
      b: backers,
      c: [...(opts.config ?? [])],
      a: [...(opts.seals ?? [])],
    };
    if (t === 'dip') members.di = opts.delegator;
    const event = finalizeEvent(members);
    const attachment = signEvent(event, opts.signers, { p256Code: opts.p256Code });
    return new KelBuilder({ event, attachment, s: 0, d: event.d as string }, opts.signers, n, backers, opts.delegator ?? null);
  }

  get sn(): number {
    return this.events.length - 1;
  }

  get tip(): string {
    return this.events.at(-1)!.d as string;
  }

  private append(members: Record<string, unknown>, signers: readonly KelSigner[], opts: SignOptions): BuiltEvent {
    const event = finalizeEvent({ ...members, i: this.prefix, s: hexText(this.events.length), p: this.tip });
    const attachment = signEvent(event, signers, opts);
    this.events.push(event);
    this.attachments.push(attachment);
    return { event, attachment, s: this.events.length - 1, d: event.d as string };
  }

  /** A `rot` (or a `drt` on a delegated KEL): the signers reveal the keys committed in the prior `n`. */
  rotate(opts: RotateOptions): BuiltEvent {
    const n = commitments(opts.next);
    const cut = new Set(opts.cut ?? []);
    const backers = [...this.backers.filter((b) => !cut.has(b)), ...(opts.add ?? [])];
    const prior = this.next;
    const ondex = opts.signers.map((x) => {
      const j = prior.indexOf(commitmentTo(x));
      return j < 0 ? null : j;
    });
    const members: Record<string, unknown> = {
      t: this.delegator === null ? 'rot' : 'drt',
      kt: thresholdJson(opts.kt, opts.signers.length),
      k: opts.signers.map((x) => x.key.qb64),
      nt: thresholdJson(opts.nt, n.length),
      n,
      bt: thresholdJson(opts.bt, backers.length),
      br: [...(opts.cut ?? [])],
      ba: [...(opts.add ?? [])],
      a: [...(opts.seals ?? [])],
    };
    if (this.delegator !== null && opts.withDelegator === true) members.di = this.delegator;
    const built = this.append(members, opts.signers, { ondex, p256Code: opts.p256Code });
    this.current = opts.signers;
    this.next = n;
    this.backers = backers;
    return built;
  }

  /** An `ixn` carrying `seals`, signed by the current keys (or by `signers`). */
  interact(seals: readonly Seal[], signers: readonly KelSigner[] = this.current, opts: SignOptions = {}): BuiltEvent {
    return this.append({ t: 'ixn', a: [...seals] }, signers, opts);
  }

  /** The seal {i, s, d} that anchors event `seq` of this KEL in its delegator's KEL. */
  sealOf(seq: number): Seal {
    const e = this.events[seq]!;
    return { i: this.prefix, s: e.s as string, d: e.d as string };
  }

  /** Append a `-G` couple naming the delegator's anchoring event to event `seq`'s attachment. */
  addSourceSeal(seq: number, anchor: { s: number; d: string }): void {
    const parsed = parseAttachment(this.attachments[seq]!);
    parsed.sourceSeals.push({ s: BigInt(anchor.s), d: anchor.d });
    this.attachments[seq] = encodeAttachment(parsed);
  }

  /** The `dir:` document (SPEC §3.5): `{prefix, events, attachments}`. */
  document(): { prefix: string; events: Record<string, unknown>[]; attachments: string[] } {
    return { prefix: this.prefix, events: this.events.map((e) => ({ ...e })), attachments: [...this.attachments] };
  }

  /** The KEL as evaluateKels takes it (the source hash over the document's JSON). */
  rawKel(source = `memory:${this.prefix}`): RawKel {
    const doc = this.document();
    const text = JSON.stringify(doc);
    return {
      prefix: this.prefix,
      events: doc.events,
      attachments: doc.attachments,
      bytes: text.length,
      sourceHash: sha256Hex(text),
      source,
    };
  }
}
