/**
 * The KERI witness role's decisions (SPEC §3.6.3 checks 1–11, §3.6.4): parse a keripy request,
 * verify the event with the §3.5 verifier against the first-seen ledger, and witness it (sign the
 * receipt, store the event and its key state, append its `kel-event` entry to the own log) in ONE
 * store transaction. Conflicts become recoveries, `stale`/`superseded` refusals or duplicity
 * proofs; out-of-order and catch-up events wait in the escrow (escrow.ts).
 */
import { verifyEd25519 } from '../crypto/ed25519.ts';
import { decodeUtf8, isJsonObject, parseStrictJson } from '../encoding/json.ts';
import type { IndexedSignature } from '../keri/attachments.ts';
import {
  CesrError,
  coupleGroup,
  keriTimestamp,
  parseWitnessAttachments,
  receiptMessage,
  type WitnessAttachments,
} from '../keri/cesr-attachments.ts';
import { KelError } from '../keri/errors.ts';
import { computeSaid, parseEvent, type KelEvent } from '../keri/event.ts';
import { decodeQb64 } from '../keri/qb64.ts';
import { checkSignatures } from '../keri/signatures.ts';
import { parseTholder, tholderMet } from '../keri/tholder.ts';
import { verifyRange, type ParsedEvent, type WalkState } from '../keri/verify.ts';
import type { LogBatch } from '../log/batch.ts';
import type { TransparencyLog } from '../log/log.ts';
import type { KelLedgerEvent, StoreTransaction, WitnessStore } from '../store/types.ts';
import { admits, type KelAllowList } from './allow.ts';
import { simpleConflictClassifier, type ConflictClassifier } from './conflicts.ts';
import { buildProof, duplicityEntry, eventEntry, type KelDuplicityProof, type ProofEvent } from './duplicity.ts';
import { KelEscrow, type EscrowEntry, type EscrowLimits, DEFAULT_ESCROW_LIMITS } from './escrow.ts';
import type { KelWitnessProblemCode } from './errors.ts';
import type { KelIdentity } from './identity.ts';
import { decodeLedgerState, encodeLedgerState, ledgerStateAfter, type LedgerState } from './key-state.ts';

export type KelRoute = 'receipts' | 'root';

export type KelOutcome =
  | { kind: 'receipt'; body: string }
  | { kind: 'accepted' }
  | { kind: 'escrowed'; prefix: string; sn: number; said: string; expiresAt: string }
  | { kind: 'duplicity'; proof: KelDuplicityProof }
  | {
      kind: 'problem';
      status: number;
      code: KelWitnessProblemCode;
      detail: string;
      reason?: string;
      seq?: number | null;
      headers?: Record<string, string>;
    };

export interface KelWitnessLimits {
  maxEvents: number;
  maxBytes: number;
  prefixEventsPerMinute: number;
  maxProofsPerPrefix: number;
  escrow: EscrowLimits;
}

export const DEFAULT_KEL_WITNESS_LIMITS: KelWitnessLimits = {
  maxEvents: 10_000,
  maxBytes: 8 * 1024 * 1024,
  prefixEventsPerMinute: 60,
  maxProofsPerPrefix: 16,
  escrow: DEFAULT_ESCROW_LIMITS,
};

export interface KelWitnessEvents {
  outcome?(t: string, outcome: string): void;
  duplicity?(stored: boolean): void;
  escrowInvalid?(): void;
}

export interface KelWitnessOptions {
  identity: KelIdentity;
  allow: KelAllowList;
  log: TransparencyLog<WitnessStore>;
  limits?: Partial<KelWitnessLimits>;
  classifier?: ConflictClassifier;
  /** The clock (tests). */
  now?: () => number;
  events?: KelWitnessEvents;
}

/** A request's event, parsed (checks 2–3). */
interface Candidate {
  e: KelEvent;
  text: string;
  body: Uint8Array;
  header: string;
  att: WitnessAttachments;
  /** The `-A` group followed by the `-G` group, as stored. */
  attachment: string;
}

const problem = (
  status: number,
  code: KelWitnessProblemCode,
  detail: string,
  extra: Partial<KelOutcome & { kind: 'problem' }> = {},
): KelOutcome => ({
  kind: 'problem',
  status,
  code,
  detail,
  ...extra,
});

const invalid = (reason: string, seq: number | null, detail: string): KelOutcome =>
  problem(422, 'kel_event_invalid', detail, { reason, seq });

const EVENT_TYPES = new Set(['icp', 'rot', 'ixn', 'dip', 'drt']);

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a).equals(Buffer.from(b));
}

function parsedStored(row: KelLedgerEvent): KelEvent {
  return parseEvent(JSON.parse(row.event), row.sn);
}

export class KelWitness {
  readonly identity: KelIdentity;
  readonly escrow: KelEscrow;
  private readonly allow: KelAllowList;
  private readonly log: TransparencyLog<WitnessStore>;
  private readonly limits: KelWitnessLimits;
  private readonly classifier: ConflictClassifier;
  private readonly now: () => number;
  private readonly events: KelWitnessEvents;
  /** Witnessed-event times per prefix within the last minute (check 5). */
  private readonly recent = new Map<string, number[]>();

  constructor(o: KelWitnessOptions) {
    this.identity = o.identity;
    this.allow = o.allow;
    this.log = o.log;
    this.limits = { ...DEFAULT_KEL_WITNESS_LIMITS, ...o.limits };
    this.classifier = o.classifier ?? simpleConflictClassifier;
    this.now = o.now ?? Date.now;
    this.events = o.events ?? {};
    this.escrow = new KelEscrow(this.limits.escrow);
  }

  private get ledger() {
    return this.log.store.kelLedger;
  }

  /** POST /receipts and POST /: the body (the message's bytes) and the `CESR-ATTACHMENT` header. */
  async submit(route: KelRoute, body: Uint8Array, header: string | undefined, ip: string): Promise<KelOutcome> {
    let att: WitnessAttachments;
    try {
      att = parseWitnessAttachments(header ?? '', route === 'receipts');
    } catch (e) {
      if (e instanceof CesrError) return problem(400, 'malformed_cesr', e.message);
      throw e;
    }
    let value: unknown;
    let text: string;
    try {
      text = decodeUtf8(body);
      value = parseStrictJson(text);
    } catch (e) {
      return problem(400, 'malformed_body', `the body is not a JSON message: ${(e as Error).message}`);
    }
    if (route === 'root' && isJsonObject(value) && !EVENT_TYPES.has(String(value.t))) {
      if (value.t === 'rct') return this.peerReceipts(value, att);
      return { kind: 'accepted' }; // rpy, qry, exn, …: ignored after the JSON parse
    }
    let e: KelEvent;
    try {
      e = parseEvent(value);
    } catch (err) {
      if (err instanceof KelError) return problem(400, 'malformed_body', err.message);
      throw err;
    }
    if (!sameBytes(e.bytes, body)) return problem(400, 'malformed_body', "the body is not the event's canonical serialization B(e)");
    if (att.sourceSeals.length > 0 && e.t !== 'dip' && e.t !== 'drt') return problem(400, 'malformed_cesr', '-G is only for dip and drt');
    const c: Candidate = { e, text, body, header: header ?? '', att, attachment: att.controllerText + att.sourceSealText };
    const out = await this.decide(c, route, ip);
    this.events.outcome?.(e.t, outcomeLabel(out));
    return out;
  }

  private async decide(c: Candidate, route: KelRoute, ip: string): Promise<KelOutcome> {
    const { e } = c;
    // Check 4: who may be witnessed.
    const inception = await this.ledger.accepted(e.i, 0);
    const delegator =
      inception !== undefined
        ? inception.t === 'dip'
          ? parsedStored(inception).di
          : null
        : e.t === 'dip'
          ? e.di
          : this.escrowedDelegator(e.i);
    if (!admits(this.allow, e.i, delegator)) return problem(403, 'kel_prefix_not_allowed', `${e.i} is not admitted by --kel-allow`);
    // Check 5: the per-prefix quota (charged at commit).
    const minute = this.now() - 60_000;
    const times = (this.recent.get(e.i) ?? []).filter((t) => t > minute);
    this.recent.set(e.i, times);
    if (times.length >= this.limits.prefixEventsPerMinute)
      return problem(429, 'kel_quota_exceeded', `${e.i} had ${times.length} events witnessed in the last minute`, {
        headers: { 'retry-after': '60' },
      });
    // Check 6: stateless rules.
    const stateless = statelessCheck(c);
    if (stateless !== null) return stateless;
    const { value, batch } = await this.log.transaction((tx, b) => this.inTransaction(tx, b, c, route, ip));
    if (value.kind === 'receipt' || (value.kind === 'accepted' && batch.appended > 0)) {
      times.push(this.now());
      await this.processEscrow(e.i);
    }
    return value;
  }

  /** Checks 7–11 under the prefix lock, against the committed ledger. */
  private async inTransaction(tx: StoreTransaction, batch: LogBatch, c: Candidate, route: KelRoute, ip: string): Promise<KelOutcome> {
    const { e } = c;
    await tx.kel.lockPrefix(e.i);
    let tip = await tx.kel.tip(e.i);
    const inception = e.t === 'icp' || e.t === 'dip';
    // Check 7: out of order, or a non-inception of a prefix not held.
    if (tip === undefined ? !inception : e.sn > tip.sn + 1) {
      if (tip === undefined && (await this.admitCatchUp(tx, e.i, e.sn))) tip = await tx.kel.tip(e.i);
      if (tip === undefined || e.sn > tip.sn + 1) return this.toEscrow(c, ip);
    }
    // Check 8: replay or conflict.
    if (tip !== undefined && e.sn <= tip.sn) {
      const stored = await tx.kel.bySaid(e.i, e.d);
      if (stored?.state === 'superseded') return invalid('superseded', e.sn, 'this event was superseded by a recovery');
      if (stored !== undefined) return this.replay(tx, batch, stored, c, route);
      return this.conflict(tx, batch, c, route, tip);
    }
    // Check 9: against the state at sn − 1.
    if (tip !== undefined && tip.ordinal + 1 >= this.limits.maxEvents)
      return invalid('oversize', e.sn, `the KEL holds ${this.limits.maxEvents} events`);
    const prior = tip === undefined ? null : decodeLedgerState(tip.keyState);
    const v = verifyAt(c, tip, prior);
    if (!v.ok) return v.outcome;
    const state = ledgerStateAfter(v.state, prior, e.t !== 'ixn');
    if (!state.backers.includes(this.identity.prefix)) {
      if (route === 'receipts')
        return problem(403, 'kel_not_witness', `this node (${this.identity.prefix}) is not a backer after ${e.t} ${e.s}`);
      if (tip === undefined) return this.toEscrow(c, ip); // catch-up: wait for the event that makes this node a backer
      await this.put(tx, c, state, false);
      return { kind: 'accepted' };
    }
    return this.witness(tx, batch, c, state, route, []);
  }

  /** Check 11: sign, store, log (the caller's transaction commits). */
  private async witness(
    tx: StoreTransaction,
    batch: LogBatch,
    c: Candidate,
    state: LedgerState,
    route: KelRoute,
    superseded: string[],
  ): Promise<KelOutcome> {
    const { e } = c;
    const signature = this.identity.sign(e.bytes);
    const receipt = receiptMessage(e.i, e.s, e.d) + coupleGroup([{ prefix: this.identity.prefix, signature }]);
    const leafIndex = batch.append(eventEntry(this.identity.prefix, e, this.now(), superseded));
    await tx.kel.putEvent({ ...this.row(c, state), witnessed: true, receipt, leafIndex });
    await tx.kel.putReceipt({
      prefix: e.i,
      said: e.d,
      index: state.backers.indexOf(this.identity.prefix),
      backer: this.identity.prefix,
      signature,
    });
    await this.storePeerReceipts(tx, e.i, e.d, e.bytes, state.backers, c.att);
    return route === 'receipts' ? { kind: 'receipt', body: receipt } : { kind: 'accepted' };
  }

  private row(c: Candidate, state: LedgerState): Omit<KelLedgerEvent, 'ordinal'> {
    return {
      prefix: c.e.i,
      sn: c.e.sn,
      said: c.e.d,
      t: c.e.t,
      event: c.text,
      attachment: c.attachment,
      state: 'accepted',
      witnessed: false,
      firstSeen: keriTimestamp(this.now()),
      receipt: null,
      keyState: encodeLedgerState(state),
      leafIndex: null,
    };
  }

  private async put(tx: StoreTransaction, c: Candidate, state: LedgerState, witnessed: boolean): Promise<void> {
    await tx.kel.putEvent({ ...this.row(c, state), witnessed });
    await this.storePeerReceipts(tx, c.e.i, c.e.d, c.e.bytes, state.backers, c.att);
  }

  /** Check 8, same SAID: the stored receipt byte for byte, or witness it now if this node backs it. */
  private async replay(tx: StoreTransaction, batch: LogBatch, stored: KelLedgerEvent, c: Candidate, route: KelRoute): Promise<KelOutcome> {
    const state = decodeLedgerState(stored.keyState);
    await this.storePeerReceipts(tx, c.e.i, c.e.d, c.e.bytes, state.backers, c.att);
    if (stored.witnessed && stored.receipt !== null)
      return route === 'receipts' ? { kind: 'receipt', body: stored.receipt } : { kind: 'accepted' };
    if (!state.backers.includes(this.identity.prefix)) {
      return route === 'receipts'
        ? problem(403, 'kel_not_witness', `this node is not a backer after ${stored.t} ${c.e.s}`)
        : { kind: 'accepted' };
    }
    const signature = this.identity.sign(c.e.bytes);
    const receipt = receiptMessage(c.e.i, c.e.s, c.e.d) + coupleGroup([{ prefix: this.identity.prefix, signature }]);
    const leafIndex = batch.append(eventEntry(this.identity.prefix, c.e, this.now()));
    await tx.kel.setWitnessed(c.e.i, c.e.d, receipt, leafIndex);
    await tx.kel.putReceipt({
      prefix: c.e.i,
      said: c.e.d,
      index: state.backers.indexOf(this.identity.prefix),
      backer: this.identity.prefix,
      signature,
    });
    return route === 'receipts' ? { kind: 'receipt', body: receipt } : { kind: 'accepted' };
  }

  /** Check 8, another SAID at a held sn (SPEC §3.6.4 "Conflicts"). */
  private async conflict(tx: StoreTransaction, batch: LogBatch, c: Candidate, route: KelRoute, tip: KelLedgerEvent): Promise<KelOutcome> {
    const { e } = c;
    const x = (await tx.kel.accepted(e.i, e.sn))!;
    const before = e.sn > 0 ? await tx.kel.accepted(e.i, e.sn - 1) : undefined;
    const prior = before === undefined ? null : decodeLedgerState(before.keyState);
    const v = verifyAt(c, before, prior);
    if (!v.ok) return v.outcome; // an invalid event is never evidence
    const tipState = decodeLedgerState(tip.keyState);
    const kind = this.classifier.classify({ inception: tipState.inception, x: x.t, y: e.t, sn: e.sn, lastEstablishmentSn: tipState.estS });
    if (kind === 'stale') return invalid('stale', e.sn, `a ${e.t} at sn ${e.sn} conflicts with the accepted ${x.t}`);
    if (kind === 'recovery_unsupported')
      return problem(
        409,
        'kel_recovery_unsupported',
        'a superseding drt: delegated recovery is not supported (it depends on the delegator)',
      );
    if (kind === 'recovery') {
      const state = ledgerStateAfter(v.state, prior, true);
      if (!state.backers.includes(this.identity.prefix))
        return problem(403, 'kel_not_witness', 'this node is not a backer after the recovery rotation');
      const superseded = (await tx.kel.events(e.i)).filter((r) => r.state === 'accepted' && r.sn >= e.sn).map((r) => r.said);
      await tx.kel.supersede(e.i, e.sn);
      return this.witness(tx, batch, c, state, route, superseded);
    }
    const stored = await tx.kel.duplicity(e.i, e.sn);
    if (stored !== undefined) {
      this.events.duplicity?.(false);
      return { kind: 'duplicity', proof: JSON.parse(stored.proof) as KelDuplicityProof };
    }
    const history: ProofEvent[] = (await tx.kel.events(e.i))
      .filter((r) => r.state === 'accepted' && r.sn < e.sn)
      .sort((a, b) => a.sn - b.sn)
      .map((r) => ({ event: JSON.parse(r.event) as Record<string, unknown>, attachment: r.attachment }));
    const first: ProofEvent = { event: JSON.parse(x.event) as Record<string, unknown>, attachment: x.attachment };
    const second: ProofEvent = { event: JSON.parse(c.text) as Record<string, unknown>, attachment: c.attachment };
    const proof = buildProof(this.identity.prefix, e.i, e.sn, first, second, history);
    if ((await tx.kel.duplicityCount(e.i)) < this.limits.maxProofsPerPrefix) {
      const leafIndex = batch.append(duplicityEntry(proof));
      await tx.kel.putDuplicity({ prefix: e.i, sn: e.sn, proof: JSON.stringify(proof), leafIndex });
      this.events.duplicity?.(true);
    } else this.events.duplicity?.(false);
    return { kind: 'duplicity', proof };
  }

  /** Receipts of other backers (`-C` couples, `-B` indexed) that verify over the stored event. */
  private async storePeerReceipts(
    tx: StoreTransaction,
    prefix: string,
    said: string,
    bytes: Uint8Array,
    backers: readonly string[],
    att: WitnessAttachments,
  ): Promise<void> {
    const found = new Map<number, { backer: string; signature: Uint8Array }>();
    for (const couple of att.couples) found.set(backers.indexOf(couple.prefix), { backer: couple.prefix, signature: couple.signature });
    for (const sig of att.witnesses) {
      const backer = backers[sig.index];
      if (backer !== undefined && !found.has(sig.index)) found.set(sig.index, { backer, signature: sig.signature });
    }
    for (const [index, r] of found) {
      if (index < 0 || r.backer === this.identity.prefix) continue;
      const key = decodeQb64(r.backer, ['B']);
      if (key === null || !verifyEd25519(key.raw, bytes, r.signature)) continue;
      await tx.kel.putReceipt({ prefix, said, index, backer: r.backer, signature: r.signature });
    }
  }

  /** POST / with an `rct`: the backers' receipts for a stored event; unknown events are ignored. */
  private async peerReceipts(value: Record<string, unknown>, att: WitnessAttachments): Promise<KelOutcome> {
    const names = Object.keys(value);
    if (names.join(',') !== 'v,t,d,i,s' || typeof value.i !== 'string' || typeof value.d !== 'string')
      return problem(400, 'malformed_body', 'an rct is exactly {v,t,d,i,s}');
    const prefix = value.i;
    const said = value.d;
    const stored = await this.ledger.bySaid(prefix, said);
    if (stored === undefined) return { kind: 'accepted' };
    const state = decodeLedgerState(stored.keyState);
    await this.log.store.transaction((tx) =>
      this.storePeerReceipts(tx, prefix, said, new TextEncoder().encode(stored.event), state.backers, att),
    );
    return { kind: 'accepted' };
  }

  // ------------------------------------------------------------ escrow

  private toEscrow(c: Candidate, ip: string): KelOutcome {
    const now = this.now();
    const entry: EscrowEntry = {
      prefix: c.e.i,
      sn: c.e.sn,
      said: c.e.d,
      t: c.e.t,
      di: c.e.di,
      body: c.body,
      attachment: c.header,
      ip,
      arrivedMs: now,
      bytes: c.body.length + c.header.length,
    };
    const added = this.escrow.add(entry, now);
    if (!added.ok) return problem(503, 'kel_escrow_full', added.detail, { headers: { 'retry-after': '60' } });
    return { kind: 'escrowed', prefix: c.e.i, sn: c.e.sn, said: c.e.d, expiresAt: new Date(added.expiresMs).toISOString() };
  }

  private escrowedDelegator(prefix: string): string | null {
    return this.escrow.entries(prefix).find((x) => x.t === 'dip')?.di ?? null;
  }

  /** Candidates of an escrow entry (parsing again: the entry keeps the request's bytes). */
  private candidate(entry: EscrowEntry): Candidate | null {
    try {
      const att = parseWitnessAttachments(entry.attachment, false);
      const text = decodeUtf8(entry.body);
      const e = parseEvent(parseStrictJson(text));
      return { e, text, body: entry.body, header: entry.attachment, att, attachment: att.controllerText + att.sourceSealText };
    } catch {
      return null;
    }
  }

  /**
   * Catch-up admission (SPEC §3.6.4): a prefix not held whose escrow holds events 0 … sn − 1 is
   * replayed (first valid candidate per sn, arrival order) and stored unwitnessed. All or nothing:
   * the chain is verified before anything is written.
   */
  private async admitCatchUp(tx: StoreTransaction, prefix: string, sn: number): Promise<boolean> {
    const chain: { c: Candidate; state: LedgerState; entry: EscrowEntry }[] = [];
    let prior: LedgerState | null = null;
    let prevRow: KelLedgerEvent | undefined;
    for (let j = 0; j < sn; j++) {
      let found = false;
      for (const entry of this.escrow.entries(prefix).filter((x) => x.sn === j)) {
        const c = this.candidate(entry);
        if (c === null || statelessCheck(c) !== null) continue;
        const v = verifyAt(c, prevRow, prior);
        if (!v.ok) continue;
        const state = ledgerStateAfter(v.state, prior, c.e.t !== 'ixn');
        chain.push({ c, state, entry });
        prior = state;
        prevRow = { ...this.row(c, state), ordinal: j };
        found = true;
        break;
      }
      if (!found) return false;
    }
    for (const link of chain) {
      await this.put(tx, link.c, link.state, false);
      this.escrow.remove(link.entry);
    }
    return true;
  }

  /** After a commit: escrowed events that now continue the KEL, in sn order, at one sn in arrival order. */
  private async processEscrow(prefix: string): Promise<void> {
    for (;;) {
      const tip = await this.ledger.tip(prefix);
      if (tip === undefined) return;
      const next = this.escrow.entries(prefix).filter((x) => x.sn === tip.sn + 1);
      if (next.length === 0) return;
      let advanced = false;
      for (const entry of next) {
        this.escrow.remove(entry);
        const c = this.candidate(entry);
        const out =
          c === null
            ? null
            : (statelessCheck(c) ?? (await this.log.transaction((tx, b) => this.inTransaction(tx, b, c, 'root', entry.ip))).value);
        if (out !== null && (out.kind === 'accepted' || out.kind === 'receipt')) {
          advanced = true;
          break;
        }
        this.events.escrowInvalid?.();
      }
      if (!advanced) return;
    }
  }

  /** Drop expired escrow entries (the part runs it every 60 s). */
  purgeEscrow(): number {
    return this.escrow.purge(this.now());
  }
}

function outcomeLabel(o: KelOutcome): string {
  switch (o.kind) {
    case 'receipt':
      return 'witnessed';
    case 'accepted':
      return 'stored';
    case 'escrowed':
      return 'escrowed';
    case 'duplicity':
      return 'duplicity';
    default:
      return o.code === 'kel_not_witness' ? 'not_witness' : o.reason === 'stale' ? 'stale' : 'invalid';
  }
}

/** Check 6: `v`, SAID, and for establishment events the signatures under their own `k` meet kt. */
function statelessCheck(c: Candidate): KelOutcome | null {
  const { e } = c;
  const sigs: IndexedSignature[] = c.att.controller ?? [];
  if (e.v !== e.expectedVersion) return invalid('version_mismatch', e.sn, `v is ${e.v}, the event's size needs ${e.expectedVersion}`);
  const said = computeSaid(e);
  if (e.d !== said) return invalid('said_mismatch', e.sn, `d is ${e.d}, the SAID is ${said}`);
  if (e.t === 'ixn') return sigs.length > 64 ? invalid('malformed', e.sn, 'too many signatures') : null;
  if (sigs.length > 2 * Math.max(1, e.keys.length))
    return invalid('malformed', e.sn, `${sigs.length} signatures for ${e.keys.length} key(s)`);
  const kt = parseTholder(e.kt, e.keys.length, 'kt');
  if (typeof kt === 'string') return invalid('threshold_invalid', e.sn, kt);
  if (!kt.weighted && (kt.value < 1 || kt.value > e.keys.length)) return invalid('threshold_invalid', e.sn, 'kt is not satisfiable by k');
  const check = checkSignatures(e.keys, e.bytes, sigs, { met: (indices) => tholderMet(kt, indices), text: kt.text }, null);
  if (!check.ok) return invalid('signature_invalid', e.sn, check.detail);
  return null;
}

/** Rules 2–7 for c's event at its sn, `prev` the accepted event at sn − 1 and `prior` the state after it. */
function verifyAt(
  c: Candidate,
  prev: KelLedgerEvent | undefined,
  prior: LedgerState | null,
): { ok: true; state: WalkState } | { ok: false; outcome: KelOutcome } {
  const { e } = c;
  const events: ParsedEvent[] = [];
  if (prev !== undefined) events[e.sn - 1] = { event: parsedStored(prev), attachment: { signatures: [], sourceSeals: [] } };
  events[e.sn] = { event: e, attachment: { signatures: c.att.controller ?? [], sourceSeals: c.att.sourceSeals } };
  if (prev === undefined && e.sn !== 0) return { ok: false, outcome: invalid('sequence_invalid', e.sn, 'no accepted event precedes it') };
  const r = verifyRange(e.i, events, e.sn, prior);
  if (!r.ok) return { ok: false, outcome: invalid(r.reason, r.seq, r.detail) };
  return { ok: true, state: r.states[r.states.length - 1]! };
}
