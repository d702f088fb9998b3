/**
 * The KERI witness role's first-seen ledger in PostgreSQL (SPEC §3.6.6). Same tables as SQLite;
 * one accepted event per (prefix, sn) across replicas by a partial unique index, and writers of a
 * prefix serialized by `pg_advisory_xact_lock(KEL_PREFIX_LOCK, hashtext(prefix))`. Inside the
 * sequencer's write transaction reads and writes go straight to its connection (not buffered), so
 * they see everything committed before and the transaction's own writes.
 */
import type { PoolClient, QueryResult, QueryResultRow } from 'pg';
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
import { toBytes } from '../rows.ts';
import { decodeKelUrlSet, dipDelegator, encodeKelUrlSet, KEL_URLS_META_KEY, sameKelUrls } from '../kel-ledger.ts';
import { query, type PgReader } from './db.ts';
import { KEL_PREFIX_LOCK } from './schema.ts';

const COLS = 'prefix, said, sn, t, event, attachment, state, witnessed, first_seen, ordinal, receipt, key_state, leaf_index';

const SQL = {
  tip: `SELECT ${COLS} FROM kel_events WHERE prefix = $1 AND state = 'accepted' ORDER BY sn DESC LIMIT 1`,
  accepted: `SELECT ${COLS} FROM kel_events WHERE prefix = $1 AND sn = $2 AND state = 'accepted'`,
  bySaid: `SELECT ${COLS} FROM kel_events WHERE prefix = $1 AND said = $2`,
  events: `SELECT ${COLS} FROM kel_events WHERE prefix = $1 ORDER BY ordinal`,
  receipts: 'SELECT prefix, said, idx, backer, signature FROM kel_receipts WHERE prefix = $1 AND said = $2 ORDER BY idx',
  duplicity: 'SELECT prefix, sn, proof, leaf_index FROM kel_duplicities WHERE prefix = $1 AND sn = $2',
  duplicityCount: 'SELECT count(*)::integer AS n FROM kel_duplicities WHERE prefix = $1',
  duplicitiesAfter:
    'SELECT prefix, sn, proof, leaf_index FROM kel_duplicities WHERE prefix > $1 OR (prefix = $1 AND sn > $2) ORDER BY prefix, sn LIMIT $3',
  counts: `SELECT (SELECT count(DISTINCT prefix) FROM kel_events)::integer AS held, (SELECT count(*) FROM kel_events)::integer AS events,
                  (SELECT count(*) FROM kel_events WHERE witnessed)::integer AS witnessed,
                  (SELECT count(*) FROM kel_duplicities)::integer AS duplicities,
                  (SELECT coalesce(sum(octet_length(event) + octet_length(attachment)), 0) FROM kel_events)::bigint AS bytes`,
  lock: `SELECT pg_advisory_xact_lock(${KEL_PREFIX_LOCK}, hashtext($1))`,
  put: `INSERT INTO kel_events (${COLS})
        SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, (SELECT count(*) FROM kel_events WHERE prefix = $1), $10, $11, $12
        RETURNING ordinal`,
  supersede: "UPDATE kel_events SET state = 'superseded' WHERE prefix = $1 AND sn >= $2 AND state = 'accepted'",
  witnessed: 'UPDATE kel_events SET witnessed = true, receipt = $1, leaf_index = $2 WHERE prefix = $3 AND said = $4',
  putReceipt:
    'INSERT INTO kel_receipts (prefix, said, idx, backer, signature) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (prefix, said, idx) DO NOTHING',
  putDuplicity: 'INSERT INTO kel_duplicities (prefix, sn, proof, leaf_index) VALUES ($1, $2, $3, $4)',
  getMeta: 'SELECT value FROM meta WHERE key = $1',
  setMeta: 'INSERT INTO meta (key, value) VALUES ($1, $2)',
  prefixBytes: 'SELECT coalesce(sum(octet_length(event) + octet_length(attachment)), 0)::bigint AS n FROM kel_events WHERE prefix = $1',
  dips: "SELECT prefix, event FROM kel_events WHERE sn = 0 AND t = 'dip' AND state = 'accepted' ORDER BY prefix",
  forgetEvents: 'DELETE FROM kel_events WHERE prefix = $1',
  forgetReceipts: 'DELETE FROM kel_receipts WHERE prefix = $1',
  forgetDuplicities: 'DELETE FROM kel_duplicities WHERE prefix = $1',
  upsertMeta: 'INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
};

interface EventRow {
  prefix: string;
  said: string;
  sn: string | number;
  t: string;
  event: string;
  attachment: string;
  state: string;
  witnessed: boolean;
  first_seen: string;
  ordinal: string | number;
  receipt: string | null;
  key_state: string;
  leaf_index: string | number | null;
}

function eventFromRow(r: EventRow): KelLedgerEvent {
  return {
    prefix: r.prefix,
    said: r.said,
    sn: Number(r.sn),
    t: r.t,
    event: r.event,
    attachment: r.attachment,
    state: r.state === 'superseded' ? 'superseded' : 'accepted',
    witnessed: r.witnessed,
    firstSeen: r.first_seen,
    ordinal: Number(r.ordinal),
    receipt: r.receipt,
    keyState: r.key_state,
    leafIndex: r.leaf_index === null ? null : Number(r.leaf_index),
  };
}

type Exec = <R extends QueryResultRow>(name: string, text: string, values: unknown[]) => Promise<QueryResult<R>>;

interface DupRow {
  prefix: string;
  sn: string | number;
  proof: string;
  leaf_index: string | number;
}
const dupFromRow = (r: DupRow): KelStoredDuplicity => ({
  prefix: r.prefix,
  sn: Number(r.sn),
  proof: r.proof,
  leafIndex: Number(r.leaf_index),
});

class PgKelReads implements KelLedgerReads {
  protected readonly exec: Exec;

  constructor(exec: Exec) {
    this.exec = exec;
  }

  private async one(name: string, text: string, values: unknown[]): Promise<KelLedgerEvent | undefined> {
    const r = (await this.exec<EventRow>(name, text, values)).rows[0];
    return r === undefined ? undefined : eventFromRow(r);
  }

  tip(prefix: string): Promise<KelLedgerEvent | undefined> {
    return this.one('kelTip', SQL.tip, [prefix]);
  }

  accepted(prefix: string, sn: number): Promise<KelLedgerEvent | undefined> {
    return this.one('kelAccepted', SQL.accepted, [prefix, sn]);
  }

  bySaid(prefix: string, said: string): Promise<KelLedgerEvent | undefined> {
    return this.one('kelBySaid', SQL.bySaid, [prefix, said]);
  }

  async events(prefix: string): Promise<KelLedgerEvent[]> {
    return (await this.exec<EventRow>('kelEvents', SQL.events, [prefix])).rows.map(eventFromRow);
  }

  async receipts(prefix: string, said: string): Promise<KelReceipt[]> {
    const res = await this.exec<{ prefix: string; said: string; idx: number; backer: string; signature: unknown }>(
      'kelReceipts',
      SQL.receipts,
      [prefix, said],
    );
    return res.rows.map((r) => ({
      prefix: r.prefix,
      said: r.said,
      index: r.idx,
      backer: r.backer,
      signature: toBytes(r.signature as Uint8Array),
    }));
  }

  async duplicity(prefix: string, sn: number): Promise<KelStoredDuplicity | undefined> {
    const r = (await this.exec<DupRow>('kelDuplicity', SQL.duplicity, [prefix, sn])).rows[0];
    return r === undefined ? undefined : dupFromRow(r);
  }

  async duplicityCount(prefix: string): Promise<number> {
    return (await this.exec<{ n: number }>('kelDupCount', SQL.duplicityCount, [prefix])).rows[0]?.n ?? 0;
  }

  async counts(): Promise<KelLedgerCounts> {
    const r = (
      await this.exec<{ held: number; events: number; witnessed: number; duplicities: number; bytes: string }>('kelCounts', SQL.counts, [])
    ).rows[0]!;
    return { held: r.held, events: r.events, witnessed: r.witnessed, duplicities: r.duplicities, bytes: Number(r.bytes) };
  }

  async prefixBytes(prefix: string): Promise<number> {
    return Number((await this.exec<{ n: string }>('kelPrefixBytes', SQL.prefixBytes, [prefix])).rows[0]?.n ?? 0);
  }

  async delegatesOf(delegator: string): Promise<string[]> {
    const rows = (await this.exec<{ prefix: string; event: string }>('kelDips', SQL.dips, [])).rows;
    return rows.filter((r) => dipDelegator(r.event) === delegator).map((r) => r.prefix);
  }

  async forgotten(prefix: string): Promise<boolean> {
    return (await this.exec<{ value: string }>('getMeta', SQL.getMeta, [`kel_forgotten:${prefix}`])).rows.length > 0;
  }
}

export class PgKelLedger extends PgKelReads implements KelLedgerStorage {
  private readonly db: PgReader;

  constructor(db: PgReader) {
    super((name, text, values) => db.read(name, text, values));
    this.db = db;
  }

  async listDuplicities(after: { prefix: string; sn: number } | undefined, limit: number): Promise<KelStoredDuplicity[]> {
    const res = await this.exec<DupRow>('kelDupsAfter', SQL.duplicitiesAfter, [after?.prefix ?? '', after?.sn ?? -1, limit]);
    return res.rows.map(dupFromRow);
  }

  forget(prefix: string): Promise<number> {
    return this.db.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [KEL_PREFIX_LOCK, prefix]);
      const n = (await query(client, 'kelForgetEvents', SQL.forgetEvents, [prefix])).rowCount ?? 0;
      await query(client, 'kelForgetReceipts', SQL.forgetReceipts, [prefix]);
      await query(client, 'kelForgetDups', SQL.forgetDuplicities, [prefix]);
      await query(client, 'kelSetForgotten', SQL.upsertMeta, [`kel_forgotten:${prefix}`, new Date().toISOString()]);
      return n;
    });
  }

  bindPrefix(prefix: string): Promise<void> {
    return this.db.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, 0)', [KEL_PREFIX_LOCK]);
      const stored = (await query<{ value: string }>(client, 'getMeta', SQL.getMeta, ['kel_prefix'])).rows[0]?.value;
      if (stored === undefined) await query(client, 'setMeta', SQL.setMeta, ['kel_prefix', prefix]);
      else if (stored !== prefix)
        throw new StoreOpenError('store_identity_mismatch', `the store is bound to kel_prefix ${stored}, not ${prefix}`);
    });
  }

  async kelUrls(): Promise<KelUrlSet | undefined> {
    return decodeKelUrlSet((await this.exec<{ value: string }>('getMeta', SQL.getMeta, [KEL_URLS_META_KEY])).rows[0]?.value);
  }

  /** Replicas starting together: the advisory lock orders them, so the stamp still never decreases. */
  setKelUrls(urls: readonly string[], nextStamp: (previous: string | undefined) => string): Promise<KelUrlSet> {
    return this.db.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1, 1)', [KEL_PREFIX_LOCK]);
      const stored = decodeKelUrlSet((await query<{ value: string }>(client, 'getMeta', SQL.getMeta, [KEL_URLS_META_KEY])).rows[0]?.value);
      if (stored !== undefined && sameKelUrls(stored.urls, urls)) return stored;
      const set = { urls: [...urls], stamp: nextStamp(stored?.stamp) };
      await query(client, 'kelSetUrls', SQL.upsertMeta, [KEL_URLS_META_KEY, encodeKelUrlSet(set)]);
      return set;
    });
  }
}

/** The ledger inside the sequencer's write transaction, on its connection. */
export class PgKelLedgerTx extends PgKelReads implements KelLedgerTx {
  constructor(client: PoolClient) {
    super((name, text, values) => query(client, name, text, values));
  }

  async lockPrefix(prefix: string): Promise<void> {
    await this.exec('kelLock', SQL.lock, [prefix]);
  }

  async putEvent(e: Omit<KelLedgerEvent, 'ordinal'>): Promise<KelLedgerEvent> {
    if (e.state === 'accepted' && (await this.accepted(e.prefix, e.sn)) !== undefined)
      throw new StoreInvariantError(`store: a second accepted event at ${e.prefix} sn ${e.sn}`);
    const res = await this.exec<{ ordinal: string }>('kelPut', SQL.put, [
      e.prefix,
      e.said,
      e.sn,
      e.t,
      e.event,
      e.attachment,
      e.state,
      e.witnessed,
      e.firstSeen,
      e.receipt,
      e.keyState,
      e.leafIndex,
    ]);
    return { ...e, ordinal: Number(res.rows[0]!.ordinal) };
  }

  async supersede(prefix: string, fromSn: number): Promise<void> {
    await this.exec('kelSupersede', SQL.supersede, [prefix, fromSn]);
  }

  async setWitnessed(prefix: string, said: string, receipt: string, leafIndex: number): Promise<void> {
    await this.exec('kelWitnessed', SQL.witnessed, [receipt, leafIndex, prefix, said]);
  }

  async putReceipt(r: KelReceipt): Promise<void> {
    await this.exec('kelPutReceipt', SQL.putReceipt, [r.prefix, r.said, r.index, r.backer, Buffer.from(r.signature)]);
  }

  async putDuplicity(d: KelStoredDuplicity): Promise<void> {
    await this.exec('kelPutDup', SQL.putDuplicity, [d.prefix, d.sn, d.proof, d.leafIndex]);
  }
}
