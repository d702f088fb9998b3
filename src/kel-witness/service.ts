/**
 * The KERI witness role's decisions (SPEC §3.6.3 checks 1–11, §3.6.4): parse a keripy request,
 * verify the event with the §3.5 verifier against the first-seen ledger, and witness it (sign the
 * receipt, store the event and its key state, append its `kel-event` entry to the own log) in ONE
 * store transaction. Conflicts become recoveries, `stale`/`superseded` refusals or duplicity
 * proofs; out-of-order and catch-up events wait in the escrow (escrow-flow.ts).
 */
import { coupleGroup, receiptMessage, type WitnessAttachments } from '../keri/cesr-attachments.ts';
import type { LogBatch } from '../log/batch.ts';
import type { TransparencyLog } from '../log/log.ts';
import type { KelLedgerEvent, StoreTransaction, WitnessStore } from '../store/types.ts';
import { admits, type KelAllowList } from './allow.ts';
import { ledgerRow, parseSubmission, statelessCheck, verifyAt, type Candidate } from './checks.ts';
import { simpleConflictClassifier, type ConflictClassifier } from './conflicts.ts';
import { buildProof, duplicityEntry, eventEntry, type KelDuplicityProof, type ProofEvent } from './duplicity.ts';
import { KelEscrow } from './escrow.ts';
import { catchUpChain, drainEscrow, escrowedDelegator, holdInEscrow } from './escrow-flow.ts';
import type { KelIdentity } from './identity.ts';
import { decodeLedgerState, ledgerStateAfter, type LedgerState } from './key-state.ts';
import { DEFAULT_KEL_WITNESS_LIMITS, type KelWitnessLimits } from './limits.ts';
import { invalid, outcomeLabel, problem, type KelOutcome, type KelRoute } from './outcome.ts';
import { peerReceiptMessage, storePeerReceipts } from './peer-receipts.ts';
import { KelQuotas, quotaClient } from './quota.ts';
import { GroupCommit } from './group-commit.ts';
import { PrefixBytes, type PrefixBytesAt } from './prefix-bytes.ts';
import { candidateVerifier, type SignatureWorkers } from './preverify.ts';
import type { KelOffload } from './offload.ts';

export type { KelOutcome, KelRoute } from './outcome.ts';

export { DEFAULT_KEL_WITNESS_LIMITS, type KelWitnessLimits } from './limits.ts';

/** What one transaction stored, charged to the client's quotas after its commit. */
interface Tally {
  witnessed: number;
  bytes: number;
  /** Whether the prefix was held when the job began. */
  held: boolean;
  /** Check 9's stored bytes of the prefix, then the new tip's (learned after the commit). */
  bytesBefore?: number;
  tipAfter?: PrefixBytesAt;
}

const newTally = (): Tally => ({ witnessed: 0, bytes: 0, held: false });

export interface KelWitnessEvents {
  outcome?(t: string, outcome: string): void;
  /** A transaction that stored or witnessed an event of `prefix` committed (the `ledger:` source reloads). */
  committed?(prefix: string): void;
  duplicity?(stored: boolean): void;
  escrowInvalid?(): void;
  /** A group of `size` events' transactions committed as one (group-commit.ts). */
  grouped?(size: number): void;
}

export interface KelWitnessOptions {
  identity: KelIdentity;
  allow: KelAllowList;
  log: TransparencyLog<WitnessStore>;
  limits?: Partial<KelWitnessLimits>;
  classifier?: ConflictClassifier;
  /** The clock (tests). */
  now?: () => number;
  /** The node's signature pool: request signatures are verified there, off the event loop. */
  workers?: SignatureWorkers;
  /** The role's verification workers: large and P-256 requests are checked there (offload.ts). */
  offload?: KelOffload;
  events?: KelWitnessEvents;
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
  readonly quotas: KelQuotas;
  private readonly group: GroupCommit;
  private readonly prefixBytes = new PrefixBytes();
  private readonly workers: SignatureWorkers | undefined;
  private readonly offload: KelOffload | undefined;

  constructor(o: KelWitnessOptions) {
    this.identity = o.identity;
    this.allow = o.allow;
    this.log = o.log;
    this.limits = { ...DEFAULT_KEL_WITNESS_LIMITS, ...o.limits };
    this.classifier = o.classifier ?? simpleConflictClassifier;
    this.now = o.now ?? Date.now;
    this.workers = o.workers;
    this.offload = o.offload;
    this.events = o.events ?? {};
    this.escrow = new KelEscrow(this.limits.escrow);
    this.quotas = new KelQuotas(this.limits, this.now);
    this.group = new GroupCommit(this.log, this.limits.maxGroup, (n) => this.events.grouped?.(n));
  }

  /** Read the held count and ledger bytes the capacity bounds use (at start and every minute). */
  async refreshCounts(): Promise<void> {
    this.quotas.refresh(await this.ledger.counts());
  }

  private get ledger() {
    return this.log.store.kelLedger;
  }

  /** POST /receipts and POST /: the body (the message's bytes) and the `CESR-ATTACHMENT` header. */
  async submit(route: KelRoute, body: Uint8Array, header: string | undefined, ip: string): Promise<KelOutcome> {
    const limited = this.quotas.admit(ip);
    if (limited !== null) return limited;
    // Checks 2–3 (and 6): a large or P-256 request on a verification worker (offload.ts).
    const parsed =
      this.offload?.wants(body, header ?? '') === true
        ? await this.offload.submission(route, body, header ?? '')
        : parseSubmission(route, body, header);
    if (parsed.kind === 'message') return parsed.value.t === 'rct' ? this.peerReceipts(parsed.value, parsed.att) : { kind: 'accepted' };
    if (parsed.kind !== 'candidate') return parsed;
    const c = parsed.c;
    const { e } = c;
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
          ? decodeLedgerState(inception.keyState).delegator
          : null
        : e.t === 'dip'
          ? e.di
          : escrowedDelegator(this.escrow, e.i);
    if (!admits(this.allow, e.i, delegator)) return problem(403, 'kel_prefix_not_allowed', `${e.i} is not admitted by --kel-allow`);
    if (await this.ledger.forgotten(e.i)) return problem(403, 'kel_prefix_not_allowed', `${e.i} was forgotten here (kel forget)`);
    // Check 5: quotas and capacity (charged at commit).
    if (this.quotas.needsCounts) await this.refreshCounts();
    const quota = this.quotas.check(e.i, ip, inception !== undefined, c.body.length + c.attachment.length);
    if (quota !== null) return quota;
    // Check 6: stateless rules (signatures verified on the workers first: preverify.ts).
    const verify = await candidateVerifier(this.workers, c, (p) => this.ledger.tip(p), this.offload);
    if (typeof verify === 'object') return verify; // the verification workers are at capacity
    c.verify = verify;
    const stateless = c.stateless !== undefined ? c.stateless : statelessCheck(c);
    if (stateless !== null) return stateless;
    const value = await this.commit(c, route, ip);
    if (value.kind === 'receipt' || value.kind === 'accepted') await this.processEscrow(e.i);
    return value;
  }

  /** Checks 7–11 in one transaction (shared with concurrent events: group-commit.ts); charged to `ip` after the commit. */
  private async commit(c: Candidate, route: KelRoute, ip: string): Promise<KelOutcome> {
    const { value, tally } = await this.group.submit(c.e.i, async (tx, b) => {
      const t = newTally(); // a job may run twice (its group failed): count the run that commits
      return { value: await this.inTransaction(tx, b, c, route, ip, t), tally: t };
    });
    this.quotas.charge(c.e.i, ip, { ...tally, newPrefix: !tally.held && tally.bytes > 0 });
    if (tally.tipAfter !== undefined) this.prefixBytes.learn(tally.tipAfter);
    if (tally.witnessed > 0 || tally.bytes > 0) this.events.committed?.(c.e.i);
    return value;
  }

  /** Checks 7–11 under the prefix lock, against the committed ledger. */
  private async inTransaction(
    tx: StoreTransaction,
    batch: LogBatch,
    c: Candidate,
    route: KelRoute,
    ip: string,
    tally: Tally,
  ): Promise<KelOutcome> {
    const { e } = c;
    await tx.kel.lockPrefix(e.i);
    let tip = await tx.kel.tip(e.i);
    tally.held = tip !== undefined;
    const inception = e.t === 'icp' || e.t === 'dip';
    // Check 7: out of order, or a non-inception of a prefix not held.
    if (tip === undefined ? !inception : e.sn > tip.sn + 1) {
      if (tip === undefined && (await this.admitCatchUp(tx, e.i, e.sn, tally))) tip = await tx.kel.tip(e.i);
      if (tip === undefined || e.sn > tip.sn + 1) return this.toEscrow(c, ip);
    }
    // Check 8: replay or conflict.
    if (tip !== undefined && e.sn <= tip.sn) {
      const stored = await tx.kel.bySaid(e.i, e.d);
      if (stored?.state === 'superseded') return invalid('superseded', e.sn, 'this event was superseded by a recovery');
      if (stored !== undefined) return this.replay(tx, batch, stored, c, route, tally);
      return this.conflict(tx, batch, c, route, tip, tally);
    }
    // Check 9: against the state at sn − 1.
    if (tip !== undefined && tip.ordinal + 1 >= this.limits.maxEvents)
      return invalid('oversize', e.sn, `the KEL holds ${this.limits.maxEvents} events`);
    tally.bytesBefore = tip === undefined ? 0 : await this.prefixBytes.at(tx.kel, tip);
    if (tip !== undefined && tally.bytesBefore + c.body.length + c.attachment.length > this.limits.maxBytes)
      return invalid('oversize', e.sn, `the KEL would exceed ${this.limits.maxBytes} bytes`);
    const prior = tip === undefined ? null : decodeLedgerState(tip.keyState);
    const v = verifyAt(c, tip, prior);
    if (!v.ok) return v.outcome;
    const state = ledgerStateAfter(v.state, prior, e.t !== 'ixn');
    if (!state.backers.includes(this.identity.prefix)) {
      if (route === 'receipts')
        return problem(403, 'kel_not_witness', `this node (${this.identity.prefix}) is not a backer after ${e.t} ${e.s}`);
      if (tip === undefined) return this.toEscrow(c, ip); // catch-up: wait for the event that makes this node a backer
      await this.put(tx, c, state, false, tally);
      return { kind: 'accepted' };
    }
    return this.witness(tx, batch, c, state, route, [], tally);
  }

  /** Check 11: sign, store, log (the caller's transaction commits). */
  private async witness(
    tx: StoreTransaction,
    batch: LogBatch,
    c: Candidate,
    state: LedgerState,
    route: KelRoute,
    superseded: string[],
    tally: Tally,
  ): Promise<KelOutcome> {
    const { e } = c;
    tally.witnessed++;
    tally.bytes += c.body.length + c.attachment.length;
    const signature = await this.identity.sign(e.bytes);
    const receipt = receiptMessage(e.i, e.s, e.d) + coupleGroup([{ prefix: this.identity.prefix, signature }]);
    const leafIndex = batch.append(eventEntry(this.identity.prefix, e, this.now(), superseded));
    this.stored(tally, await tx.kel.putEvent({ ...this.row(c, state), witnessed: true, receipt, leafIndex }));
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

  /** The new tip's stored bytes, when check 9 read the bytes before it (a recovery or catch-up reads them again next time). */
  private stored(tally: Tally, row: KelLedgerEvent): void {
    const size = row.event.length + row.attachment.length;
    tally.tipAfter =
      tally.bytesBefore === undefined
        ? undefined
        : { prefix: row.prefix, ordinal: row.ordinal, said: row.said, bytes: tally.bytesBefore + size };
    tally.bytesBefore = tally.tipAfter?.bytes;
  }

  private row(c: Candidate, state: LedgerState): Omit<KelLedgerEvent, 'ordinal'> {
    return ledgerRow(c, state, this.now());
  }

  private async put(tx: StoreTransaction, c: Candidate, state: LedgerState, witnessed: boolean, tally: Tally): Promise<void> {
    tally.bytes += c.body.length + c.attachment.length;
    this.stored(tally, await tx.kel.putEvent({ ...this.row(c, state), witnessed }));
    await this.storePeerReceipts(tx, c.e.i, c.e.d, c.e.bytes, state.backers, c.att);
  }

  /** Check 8, same SAID: the stored receipt byte for byte, or witness it now if this node backs it. */
  private async replay(
    tx: StoreTransaction,
    batch: LogBatch,
    stored: KelLedgerEvent,
    c: Candidate,
    route: KelRoute,
    tally: Tally,
  ): Promise<KelOutcome> {
    const state = decodeLedgerState(stored.keyState);
    await this.storePeerReceipts(tx, c.e.i, c.e.d, c.e.bytes, state.backers, c.att);
    if (stored.witnessed && stored.receipt !== null)
      return route === 'receipts' ? { kind: 'receipt', body: stored.receipt } : { kind: 'accepted' };
    if (!state.backers.includes(this.identity.prefix)) {
      return route === 'receipts'
        ? problem(403, 'kel_not_witness', `this node is not a backer after ${stored.t} ${c.e.s}`)
        : { kind: 'accepted' };
    }
    tally.witnessed++;
    const signature = await this.identity.sign(c.e.bytes);
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
  private async conflict(
    tx: StoreTransaction,
    batch: LogBatch,
    c: Candidate,
    route: KelRoute,
    tip: KelLedgerEvent,
    tally: Tally,
  ): Promise<KelOutcome> {
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
      return this.witness(tx, batch, c, state, route, superseded, tally);
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

  private storePeerReceipts(
    tx: StoreTransaction,
    prefix: string,
    said: string,
    bytes: Uint8Array,
    backers: readonly string[],
    att: WitnessAttachments,
  ): Promise<void> {
    return storePeerReceipts(tx, this.identity.prefix, { prefix, said, bytes, backers }, att);
  }

  /** POST / with an `rct`: the backers' receipts for a stored event; unknown events are ignored. */
  private peerReceipts(value: Record<string, unknown>, att: WitnessAttachments): Promise<KelOutcome> {
    return peerReceiptMessage(this.log.store, this.identity.prefix, value, att);
  }

  // ------------------------------------------------------------ escrow (escrow-flow.ts)

  private toEscrow(c: Candidate, ip: string): KelOutcome {
    return holdInEscrow(this.escrow, c, quotaClient(ip), this.now());
  }

  /** Catch-up admission (SPEC §3.6.4): the verified escrow chain 0 … sn − 1, stored unwitnessed. */
  private async admitCatchUp(tx: StoreTransaction, prefix: string, sn: number, tally: Tally): Promise<boolean> {
    const chain = catchUpChain(this.escrow, prefix, sn, this.now());
    if (chain === null) return false;
    for (const link of chain) {
      await this.put(tx, link.c, link.state, false, tally);
      this.escrow.remove(link.entry);
    }
    return true;
  }

  private async processEscrow(prefix: string): Promise<void> {
    if (this.escrow.entries(prefix).length === 0) return; // nothing waits: no tip read
    return drainEscrow(this.escrow, prefix, {
      tip: (p) => this.ledger.tip(p),
      admit: (c, ip) => this.commit(c, 'root', ip),
      invalid: () => this.events.escrowInvalid?.(),
    });
  }

  /** Drop expired escrow entries (the part runs it every 60 s). */
  purgeEscrow(): number {
    return this.escrow.purge(this.now());
  }
}
