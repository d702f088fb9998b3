/**
 * The KERI witness role's first-seen ledger in SQLite (SPEC §3.6.6): `kel_events` (one accepted
 * row per (prefix, sn), enforced by a partial unique index), `kel_receipts`, `kel_duplicities`, and
 * the bound prefix in `meta`. Reads outside a transaction use the reader connection; the
 * transaction side (KelLedgerTx) reads and writes on the writer, inside BEGIN IMMEDIATE.
 */
import type { Database as Db, Statement } from 'better-sqlite3';
import { StoreInvariantError, StoreOpenError } from '../errors.ts';
import type {
  KelLedgerCounts,
  KelLedgerEvent,
  KelLedgerReads,
  KelLedgerStorage,
  KelLedgerTx,
  KelReceipt,
  KelStoredDuplicity,
  KelUrlSet,
} from '../kel-ledger.ts';
import { decodeKelUrlSet, dipDelegator, encodeKelUrlSet, KEL_URLS_META_KEY, sameKelUrls } from '../kel-ledger.ts';
import { toBytes } from '../rows.ts';
import { guard, type SqliteConnections } from './db.ts';

interface EventRow {
  prefix: string;
  said: string;
  sn: number;
  t: string;
  event: string;
  attachment: string;
  state: string;
  witnessed: number;
  first_seen: string;
  ordinal: number;
  receipt: string | null;
  key_state: string;
  leaf_index: number | null;
}

function eventFromRow(r: EventRow): KelLedgerEvent {
  return {
    prefix: r.prefix,
    said: r.said,
    sn: r.sn,
    t: r.t,
    event: r.event,
    attachment: r.attachment,
    state: r.state === 'superseded' ? 'superseded' : 'accepted',
    witnessed: r.witnessed === 1,
    firstSeen: r.first_seen,
    ordinal: r.ordinal,
    receipt: r.receipt,
    keyState: r.key_state,
    leafIndex: r.leaf_index,
  };
}

const COLS = 'prefix, said, sn, t, event, attachment, state, witnessed, first_seen, ordinal, receipt, key_state, leaf_index';

class KelQueries {
  readonly tip: Statement<[string], EventRow>;
  readonly accepted: Statement<[string, number], EventRow>;
  readonly bySaid: Statement<[string, string], EventRow>;
  readonly events: Statement<[string], EventRow>;
  readonly receipts: Statement<[string, string], { prefix: string; said: string; idx: number; backer: string; signature: Uint8Array }>;
  readonly duplicity: Statement<[string, number], { prefix: string; sn: number; proof: string; leaf_index: number }>;
  readonly duplicityCount: Statement<[string], { n: number }>;
  readonly duplicitiesAfter: Statement<[string, string, number, number], { prefix: string; sn: number; proof: string; leaf_index: number }>;
  readonly counts: Statement<[], { held: number; events: number; witnessed: number; duplicities: number; bytes: number }>;
  readonly nextOrdinal: Statement<[string], { n: number }>;
  readonly put: Statement<
    [string, string, number, string, string, string, string, number, string, number, string | null, string, number | null]
  >;
  readonly supersede: Statement<[string, number]>;
  readonly witnessed: Statement<[string, number, string, string]>;
  readonly putReceipt: Statement<[string, string, number, string, Uint8Array]>;
  readonly putDuplicity: Statement<[string, number, string, number]>;
  readonly getMeta: Statement<[string], { value: string }>;
  readonly setMeta: Statement<[string, string]>;
  readonly prefixBytes: Statement<[string], { n: number }>;
  readonly dips: Statement<[], { prefix: string; event: string }>;
  readonly forgetEvents: Statement<[string]>;
  readonly forgetReceipts: Statement<[string]>;
  readonly forgetDuplicities: Statement<[string]>;
  readonly upsertMeta: Statement<[string, string]>;

  constructor(db: Db) {
    this.tip = db.prepare(`SELECT ${COLS} FROM kel_events WHERE prefix = ? AND state = 'accepted' ORDER BY sn DESC LIMIT 1`);
    this.accepted = db.prepare(`SELECT ${COLS} FROM kel_events WHERE prefix = ? AND sn = ? AND state = 'accepted'`);
    this.bySaid = db.prepare(`SELECT ${COLS} FROM kel_events WHERE prefix = ? AND said = ?`);
    this.events = db.prepare(`SELECT ${COLS} FROM kel_events WHERE prefix = ? ORDER BY ordinal`);
    this.receipts = db.prepare('SELECT prefix, said, idx, backer, signature FROM kel_receipts WHERE prefix = ? AND said = ? ORDER BY idx');
    this.duplicity = db.prepare('SELECT prefix, sn, proof, leaf_index FROM kel_duplicities WHERE prefix = ? AND sn = ?');
    this.duplicityCount = db.prepare('SELECT count(*) AS n FROM kel_duplicities WHERE prefix = ?');
    this.duplicitiesAfter = db.prepare(
      'SELECT prefix, sn, proof, leaf_index FROM kel_duplicities WHERE prefix > ? OR (prefix = ? AND sn > ?) ORDER BY prefix, sn LIMIT ?',
    );
    this.counts = db.prepare(
      `SELECT (SELECT count(DISTINCT prefix) FROM kel_events) AS held, (SELECT count(*) FROM kel_events) AS events,
              (SELECT count(*) FROM kel_events WHERE witnessed = 1) AS witnessed, (SELECT count(*) FROM kel_duplicities) AS duplicities,
              (SELECT coalesce(sum(length(event) + length(attachment)), 0) FROM kel_events) AS bytes`,
    );
    this.nextOrdinal = db.prepare('SELECT count(*) AS n FROM kel_events WHERE prefix = ?');
    this.put = db.prepare(`INSERT INTO kel_events (${COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.supersede = db.prepare("UPDATE kel_events SET state = 'superseded' WHERE prefix = ? AND sn >= ? AND state = 'accepted'");
    this.witnessed = db.prepare('UPDATE kel_events SET witnessed = 1, receipt = ?, leaf_index = ? WHERE prefix = ? AND said = ?');
    this.putReceipt = db.prepare(
      'INSERT INTO kel_receipts (prefix, said, idx, backer, signature) VALUES (?, ?, ?, ?, ?) ON CONFLICT (prefix, said, idx) DO NOTHING',
    );
    this.putDuplicity = db.prepare('INSERT INTO kel_duplicities (prefix, sn, proof, leaf_index) VALUES (?, ?, ?, ?)');
    this.getMeta = db.prepare('SELECT value FROM meta WHERE key = ?');
    this.setMeta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
    this.prefixBytes = db.prepare('SELECT coalesce(sum(length(event) + length(attachment)), 0) AS n FROM kel_events WHERE prefix = ?');
    this.dips = db.prepare("SELECT prefix, event FROM kel_events WHERE sn = 0 AND t = 'dip' AND state = 'accepted' ORDER BY prefix");
    this.forgetEvents = db.prepare('DELETE FROM kel_events WHERE prefix = ?');
    this.forgetReceipts = db.prepare('DELETE FROM kel_receipts WHERE prefix = ?');
    this.forgetDuplicities = db.prepare('DELETE FROM kel_duplicities WHERE prefix = ?');
    this.upsertMeta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  }
}

type Run = <T>(fn: () => T) => Promise<T>;

class SqliteKelReads implements KelLedgerReads {
  protected readonly q: KelQueries;
  protected readonly run: Run;

  constructor(q: KelQueries, run: Run) {
    this.q = q;
    this.run = run;
  }

  tip(prefix: string): Promise<KelLedgerEvent | undefined> {
    return this.run(() => {
      const r = this.q.tip.get(prefix);
      return r === undefined ? undefined : eventFromRow(r);
    });
  }

  accepted(prefix: string, sn: number): Promise<KelLedgerEvent | undefined> {
    return this.run(() => {
      const r = this.q.accepted.get(prefix, sn);
      return r === undefined ? undefined : eventFromRow(r);
    });
  }

  bySaid(prefix: string, said: string): Promise<KelLedgerEvent | undefined> {
    return this.run(() => {
      const r = this.q.bySaid.get(prefix, said);
      return r === undefined ? undefined : eventFromRow(r);
    });
  }

  events(prefix: string): Promise<KelLedgerEvent[]> {
    return this.run(() => this.q.events.all(prefix).map(eventFromRow));
  }

  receipts(prefix: string, said: string): Promise<KelReceipt[]> {
    return this.run(() =>
      this.q.receipts
        .all(prefix, said)
        .map((r) => ({ prefix: r.prefix, said: r.said, index: r.idx, backer: r.backer, signature: toBytes(r.signature) })),
    );
  }

  duplicity(prefix: string, sn: number): Promise<KelStoredDuplicity | undefined> {
    return this.run(() => {
      const r = this.q.duplicity.get(prefix, sn);
      return r === undefined ? undefined : { prefix: r.prefix, sn: r.sn, proof: r.proof, leafIndex: r.leaf_index };
    });
  }

  duplicityCount(prefix: string): Promise<number> {
    return this.run(() => this.q.duplicityCount.get(prefix)?.n ?? 0);
  }

  counts(): Promise<KelLedgerCounts> {
    return this.run(() => {
      const r = this.q.counts.get()!;
      return { held: r.held, events: r.events, witnessed: r.witnessed, duplicities: r.duplicities, bytes: r.bytes };
    });
  }

  prefixBytes(prefix: string): Promise<number> {
    return this.run(() => this.q.prefixBytes.get(prefix)?.n ?? 0);
  }

  forgotten(prefix: string): Promise<boolean> {
    return this.run(() => this.q.getMeta.get(`kel_forgotten:${prefix}`) !== undefined);
  }

  delegatesOf(delegator: string): Promise<string[]> {
    return this.run(() =>
      this.q.dips
        .all()
        .filter((r) => dipDelegator(r.event) === delegator)
        .map((r) => r.prefix),
    );
  }
}

/** Committed ledger state, on the reader connection. */
export class SqliteKelLedger extends SqliteKelReads implements KelLedgerStorage {
  private readonly c: SqliteConnections;
  private readonly w: KelQueries;

  constructor(c: SqliteConnections) {
    super(new KelQueries(c.reader), (fn) => c.read(fn));
    this.c = c;
    this.w = new KelQueries(c.writer);
  }

  listDuplicities(after: { prefix: string; sn: number } | undefined, limit: number): Promise<KelStoredDuplicity[]> {
    return this.run(() =>
      this.q.duplicitiesAfter
        .all(after?.prefix ?? '', after?.prefix ?? '', after?.sn ?? -1, limit)
        .map((r) => ({ prefix: r.prefix, sn: r.sn, proof: r.proof, leafIndex: r.leaf_index })),
    );
  }

  bindPrefix(prefix: string): Promise<void> {
    return this.c.write(() => {
      this.c.writer
        .transaction(() => {
          const stored = this.w.getMeta.get('kel_prefix')?.value;
          if (stored === undefined) this.w.setMeta.run('kel_prefix', prefix);
          else if (stored !== prefix)
            throw new StoreOpenError('store_identity_mismatch', `the store is bound to kel_prefix ${stored}, not ${prefix}`);
        })
        .immediate();
    });
  }

  forget(prefix: string): Promise<number> {
    return this.c.write(() =>
      this.c.writer
        .transaction(() => {
          const n = this.w.forgetEvents.run(prefix).changes;
          this.w.forgetReceipts.run(prefix);
          this.w.forgetDuplicities.run(prefix);
          this.w.upsertMeta.run(`kel_forgotten:${prefix}`, new Date().toISOString());
          return n;
        })
        .immediate(),
    );
  }

  kelUrls(): Promise<KelUrlSet | undefined> {
    return this.run(() => decodeKelUrlSet(this.q.getMeta.get(KEL_URLS_META_KEY)?.value));
  }

  setKelUrls(urls: readonly string[], nextStamp: (previous: string | undefined) => string): Promise<KelUrlSet> {
    return this.c.write(() =>
      this.c.writer
        .transaction(() => {
          const stored = decodeKelUrlSet(this.w.getMeta.get(KEL_URLS_META_KEY)?.value);
          if (stored !== undefined && sameKelUrls(stored.urls, urls)) return stored;
          const set = { urls: [...urls], stamp: nextStamp(stored?.stamp) };
          this.w.upsertMeta.run(KEL_URLS_META_KEY, encodeKelUrlSet(set));
          return set;
        })
        .immediate(),
    );
  }

  /** The ledger side of a write transaction (inside BEGIN IMMEDIATE on the writer). */
  transaction(): SqliteKelLedgerTx {
    return new SqliteKelLedgerTx(this.w);
  }
}

const inline: Run = (fn) =>
  new Promise((resolve) => {
    resolve(guard(fn));
  });

export class SqliteKelLedgerTx extends SqliteKelReads implements KelLedgerTx {
  constructor(q: KelQueries) {
    super(q, inline);
  }

  lockPrefix(): Promise<void> {
    return Promise.resolve(); // one writer: the store's write lane
  }

  putEvent(e: Omit<KelLedgerEvent, 'ordinal'>): Promise<KelLedgerEvent> {
    return this.run(() => {
      if (e.state === 'accepted' && this.q.accepted.get(e.prefix, e.sn) !== undefined)
        throw new StoreInvariantError(`store: a second accepted event at ${e.prefix} sn ${e.sn}`);
      const ordinal = this.q.nextOrdinal.get(e.prefix)?.n ?? 0;
      this.q.put.run(
        e.prefix,
        e.said,
        e.sn,
        e.t,
        e.event,
        e.attachment,
        e.state,
        e.witnessed ? 1 : 0,
        e.firstSeen,
        ordinal,
        e.receipt,
        e.keyState,
        e.leafIndex,
      );
      return { ...e, ordinal };
    });
  }

  supersede(prefix: string, fromSn: number): Promise<void> {
    return this.run(() => {
      this.q.supersede.run(prefix, fromSn);
    });
  }

  setWitnessed(prefix: string, said: string, receipt: string, leafIndex: number): Promise<void> {
    return this.run(() => {
      this.q.witnessed.run(receipt, leafIndex, prefix, said);
    });
  }

  putReceipt(r: KelReceipt): Promise<void> {
    return this.run(() => {
      this.q.putReceipt.run(r.prefix, r.said, r.index, r.backer, Buffer.from(r.signature));
    });
  }

  putDuplicity(d: KelStoredDuplicity): Promise<void> {
    return this.run(() => {
      this.q.putDuplicity.run(d.prefix, d.sn, d.proof, d.leafIndex);
    });
  }
}
