/**
 * PostgreSQL driver of the witness store (`pg`, pooled): several witness replicas with the same
 * identity share one database (docs/scale-out.md).
 *
 * Serialization. Every write transaction (`transaction`) starts with
 * `BEGIN ISOLATION LEVEL READ COMMITTED; SELECT pg_advisory_xact_lock(SEQUENCER)`: one sequencer
 * at a time across all replicas, held until COMMIT/ROLLBACK (a dead replica's connection drops and
 * the server releases the lock). READ COMMITTED takes a new snapshot per statement, so every read
 * after the lock sees everything the previous holder committed (REPEATABLE READ would not: its
 * snapshot could predate the lock wait). So the log is one linear tree, the seed reads behind SPEC
 * §3.3 checks 7–15 see the latest committed record, and a seed's latest anchor never moves
 * backwards; the seeds upsert also refuses, in the database, to replace a record by one with a
 * lower or equal anchor index.
 *
 * One durable commit per transaction. Writes inside a transaction are buffered (the driver keeps
 * read-your-writes for getSeed/partyUsage/treeHead) and flushed at the end as ONE statement of
 * data-modifying CTEs (entries, tree nodes, seeds, party events, duplicity proofs, log head +
 * checkpoint), then COMMIT: a batch costs the lock round trip, one read per seed and party, the
 * flush and the commit, whatever its size.
 *
 * `PgTransaction.prefetch` (optional, not yet in StoreTransaction) reads a batch's seeds and quota
 * windows in two queries instead of one round trip per seed and party.
 *
 * Tree. Same layout as the SQLite driver: every complete-subtree hash in `tree_nodes(level, idx)`.
 * Appends keep the right edge (frontier, read in the lock round trip) in memory and write only new
 * nodes. Proofs run the reference algorithm of src/tlog/merkle.ts twice (pg-tree.ts `withNodes`):
 * once recording the (level, index) nodes it reads, then over those nodes fetched in one query.
 * Committed nodes never change, so a per-process LRU of them is valid with several writers; it
 * holds what this replica read or committed, and a fresh batch's proofs usually need no query.
 * The sequencer has its own connection, so a batch never queues behind the previous batch's reads.
 *
 * Cosign role (SPEC §5): `updateOrigin` is one conditional statement per call (row-level CAS on
 * the stored size, and the stored cosignature time may not go backwards), so concurrent
 * add-checkpoint requests on different replicas never roll an origin back.
 *
 * Migrations are versioned (`aw_schema.version`) and run at open under a separate advisory
 * transaction lock, so replicas starting together apply each migration exactly once.
 *
 * Failures: connection loss, timeouts, a read-only (standby) server, lock timeouts and server
 * shutdown are StoreUnavailableError (HTTP 503 `store_unavailable`); the pool drops broken
 * connections and reconnects on the next request. Integrity and syntax errors are not mapped:
 * they mean a bug, not an outage.
 */
import { decodeStoredProof, encodeStoredAnchor, encodeStoredProof, seedFromRow, toBytes, type SeedRow } from './rows.ts';
import pg from 'pg';
import type { PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import type { DuplicityProof } from '../anchor/types.ts';
import { encodeHex } from '../encoding/hex.ts';
import { ProtocolError } from '../errors.ts';
import { consistencyProof, inclusionProof } from '../tlog/merkle.ts';
import { Mutex } from './mutex.ts';
import { NodeCache } from './node-cache.ts';
import { Frontier, withNodes, type NodeRef, type StoredNode } from './pg-tree.ts';
import { EVIDENCE_LIMIT, StoreOpenError, StoreUnavailableError } from './types.ts';
import type { EvidenceRecord, OriginState, PartyUsage, SeedRecord, SignedCheckpoint, StoreIdentity, StoreTransaction, TreeHead, WitnessStore } from './types.ts';

export const PG_SCHEMA_VERSION = 2;

/** Advisory lock keys (one database per witness identity; see docs/scale-out.md). */
const SEQUENCER_LOCK = 0x4157_5345; // "AWSE"
const MIGRATION_LOCK = 0x4157_4d49; // "AWMI"
/** With hashtext(origin): one evidence writer per origin across replicas, so the bound holds. */
const EVIDENCE_LOCK = 0x4157_4556; // "AWEV"

/** Schema version i + 1 is MIGRATIONS[0..i] (exported for the upgrade tests). */
export const MIGRATIONS: string[] = [
  `CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
   CREATE TABLE log_head (id boolean PRIMARY KEY DEFAULT true CHECK (id), size bigint NOT NULL CHECK (size >= 0),
                          checkpoint text, checkpoint_size bigint, checkpoint_root bytea);
   INSERT INTO log_head (id, size) VALUES (true, 0);
   CREATE TABLE tree_nodes (level smallint NOT NULL, idx bigint NOT NULL, hash bytea NOT NULL, PRIMARY KEY (level, idx));
   CREATE TABLE log_entries (idx bigint PRIMARY KEY, entry bytea NOT NULL);
   CREATE TABLE seeds (seed_id bytea PRIMARY KEY, owner text NOT NULL, created_at bigint NOT NULL, anchor text NOT NULL,
                       anchor_index bigint NOT NULL, cosig_signature bytea NOT NULL, cosig_time bigint NOT NULL, leaf_index bigint NOT NULL);
   CREATE TABLE duplicities (seed_id bytea PRIMARY KEY, proof text NOT NULL, leaf_index bigint NOT NULL, at bigint NOT NULL);
   CREATE TABLE party_events (id bigserial PRIMARY KEY, party text NOT NULL, at bigint NOT NULL, new_seed boolean NOT NULL);
   CREATE INDEX party_events_by_party ON party_events (party, at);
   CREATE INDEX party_new_seeds_by_party ON party_events (party, at) WHERE new_seed;
   CREATE TABLE origins (origin text PRIMARY KEY, size bigint NOT NULL, root bytea NOT NULL, checkpoint text NOT NULL,
                         cosignatures text NOT NULL, last_time bigint NOT NULL);
   CREATE TABLE evidence (id bigserial PRIMARY KEY, origin text NOT NULL, note text NOT NULL, reason text NOT NULL, at bigint NOT NULL);`,
  // Evidence deduplicated by checkpoint hash and bounded per origin (SPEC §5). Rows from version 1
  // keep a NULL hash: never deduplicated, the oldest, so evicted first.
  `ALTER TABLE evidence ADD COLUMN hash bytea;
   CREATE UNIQUE INDEX evidence_by_hash ON evidence (origin, hash);
   CREATE INDEX evidence_by_origin ON evidence (origin, id);`,
];

export interface PostgresStoreOptions {
  /** postgres://user:password@host:port/database?… (libpq-style URL; sslmode etc. as pg supports). */
  url: string;
  /** Read pool size per replica (default 10); the sequencer has one more connection of its own. */
  poolSize?: number;
  /** Connecting to the server (default 5000 ms), then 503. */
  connectTimeoutMs?: number;
  /** Waiting for the sequencer lock or a row lock (default 5000 ms), then 503. */
  lockTimeoutMs?: number;
  /** Any one statement, server-side (default 15000 ms); the client gives up 2 s later. */
  statementTimeoutMs?: number;
  /** The server aborts a transaction idle this long, releasing a stuck replica's lock (default 10000 ms). */
  idleInTransactionTimeoutMs?: number;
}

// ---------------------------------------------------------------- errors

/**
 * SQLSTATE classes that mean "the database cannot serve this now": connection exceptions (08),
 * transaction rollback (40: serialization, deadlock), insufficient resources (53), operator
 * intervention (57: shutdown, statement timeout), system errors (58), plus lock timeout (55P03),
 * a read-only server such as a standby (25006), idle-in-transaction timeout (25P03), a missing
 * database (3D000) and authentication (28).
 */
const UNAVAILABLE_SQLSTATE = /^(?:08|28|40|53|57|58)|^(?:55P03|25006|25P03|3D000)$/;

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Map driver faults to StoreUnavailableError; keep protocol errors and bugs as they are. */
export function mapPgError(e: unknown): unknown {
  if (e instanceof ProtocolError) return e;
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
    return UNAVAILABLE_SQLSTATE.test(code) ? new StoreUnavailableError(`store: PostgreSQL ${code}: ${describe(e)}`) : e;
  }
  if (e instanceof TypeError || e instanceof RangeError || e instanceof SyntaxError) return e;
  // No SQLSTATE: the connection (ECONNREFUSED, ECONNRESET, "Connection terminated", timeouts).
  return new StoreUnavailableError(`store: PostgreSQL connection: ${describe(e)}`);
}

class StoreInvariantError extends ProtocolError {}

// ---------------------------------------------------------------- rows and codecs

const types = new pg.TypeOverrides();
// int8 → number: sizes, indices and times are safe integers (trees hold < 2^53 entries).
types.setTypeParser(20, (v: string) => Number(v));





// Named statements: prepared once per connection.
const Q = {
  getSeed: 'SELECT s.seed_id, s.owner, s.created_at, s.anchor, s.cosig_signature, s.cosig_time, s.leaf_index, d.proof FROM seeds s LEFT JOIN duplicities d ON d.seed_id = s.seed_id WHERE s.seed_id = $1',
  getSeeds: 'SELECT s.seed_id, s.owner, s.created_at, s.anchor, s.cosig_signature, s.cosig_time, s.leaf_index, d.proof FROM seeds s LEFT JOIN duplicities d ON d.seed_id = s.seed_id WHERE s.seed_id = ANY($1::bytea[])',
  getProof: 'SELECT proof FROM duplicities WHERE seed_id = $1',
  proofsAfter: 'SELECT proof FROM duplicities WHERE seed_id > $1 ORDER BY seed_id LIMIT $2',
  counts: 'SELECT (SELECT count(*) FROM seeds) AS seeds, (SELECT count(*) FROM duplicities) AS duplicities',
  checkpoint: 'SELECT checkpoint, checkpoint_size, checkpoint_root FROM log_head',
  nodes: 'SELECT t.level, t.idx, t.hash FROM tree_nodes t JOIN unnest($1::smallint[], $2::bigint[]) AS w(level, idx) ON t.level = w.level AND t.idx = w.idx',
  nodeRange: 'SELECT hash FROM tree_nodes WHERE level = $1 AND idx >= $2 AND idx < $3 ORDER BY idx',
  entryRange: 'SELECT entry FROM log_entries WHERE idx >= $1 AND idx < $2 ORDER BY idx',
  // Grouped by second: a busy party's window is a few dozen rows, not one per anchor.
  partyUsage: `SELECT false AS seed, at, count(*)::integer AS n FROM party_events WHERE party = $1 AND at >= $2 GROUP BY at
               UNION ALL SELECT true, at, count(*)::integer FROM party_events WHERE party = $1 AND at >= $3 AND new_seed GROUP BY at ORDER BY 1, 2`,
  partiesUsage: `SELECT party, false AS seed, at, count(*)::integer AS n FROM party_events WHERE party = ANY($1::text[]) AND at >= $2 GROUP BY party, at
                 UNION ALL SELECT party, true, at, count(*)::integer FROM party_events WHERE party = ANY($1::text[]) AND at >= $3 AND new_seed GROUP BY party, at
                 ORDER BY 1, 2, 3`,
  getOrigin: 'SELECT size, root, checkpoint, cosignatures, last_time FROM origins WHERE origin = $1',
  // CAS from "never cosigned" (no row, or a row of size 0): insert, or update a size-0 row.
  createOrigin: `INSERT INTO origins (origin, size, root, checkpoint, cosignatures, last_time) VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (origin) DO UPDATE SET size = excluded.size, root = excluded.root, checkpoint = excluded.checkpoint,
                   cosignatures = excluded.cosignatures, last_time = excluded.last_time
                 WHERE origins.size = 0 AND origins.last_time <= excluded.last_time`,
  updateOrigin: `UPDATE origins SET size = $2, root = $3, checkpoint = $4, cosignatures = $5, last_time = $6
                 WHERE origin = $1 AND size = $7 AND last_time <= $6`,
  hasEvidence: 'SELECT 1 FROM evidence WHERE origin = $1 AND hash = $2',
  // Insert unless the hash is known; then delete what is older than the newest limit − 1 rows the
  // statement's snapshot holds (it does not see its own insert), leaving `limit` rows.
  evidence: `WITH ins AS (INSERT INTO evidence (origin, hash, note, reason, at) VALUES ($1, $2, $3, $4, $5)
                          ON CONFLICT (origin, hash) DO NOTHING RETURNING 1),
                  del AS (DELETE FROM evidence WHERE origin = $1 AND EXISTS (SELECT 1 FROM ins)
                            AND id <= (SELECT id FROM evidence WHERE origin = $1 ORDER BY id DESC LIMIT 1 OFFSET $6::bigint - 1)
                          RETURNING 1)
             SELECT (SELECT count(*) FROM ins)::integer AS added, (SELECT count(*) FROM del)::integer AS evicted`,
  listEvidence: 'SELECT hash, note, reason, at FROM evidence WHERE origin = $1 ORDER BY id',
  getMeta: 'SELECT value FROM meta WHERE key = $1',
  setMeta: 'INSERT INTO meta (key, value) VALUES ($1, $2)',
  // The whole batch in one statement (data-modifying CTEs run exactly once each, all or nothing).
  flush: `WITH
      e AS (INSERT INTO log_entries (idx, entry) SELECT * FROM unnest($1::bigint[], $2::bytea[])),
      n AS (INSERT INTO tree_nodes (level, idx, hash) SELECT * FROM unnest($3::smallint[], $4::bigint[], $5::bytea[])),
      s AS (INSERT INTO seeds (seed_id, owner, created_at, anchor, anchor_index, cosig_signature, cosig_time, leaf_index)
              SELECT * FROM unnest($6::bytea[], $7::text[], $8::bigint[], $9::text[], $10::bigint[], $11::bytea[], $12::bigint[], $13::bigint[])
            ON CONFLICT (seed_id) DO UPDATE SET anchor = excluded.anchor, anchor_index = excluded.anchor_index,
              cosig_signature = excluded.cosig_signature, cosig_time = excluded.cosig_time, leaf_index = excluded.leaf_index
            WHERE seeds.anchor_index < excluded.anchor_index
            RETURNING 1),
      v AS (INSERT INTO party_events (party, at, new_seed) SELECT * FROM unnest($14::text[], $15::bigint[], $16::boolean[])),
      d AS (INSERT INTO duplicities (seed_id, proof, leaf_index, at) SELECT * FROM unnest($17::bytea[], $18::text[], $19::bigint[], $20::bigint[])),
      p AS (DELETE FROM party_events WHERE $21::bigint IS NOT NULL AND at < $21::bigint),
      h AS (UPDATE log_head SET size = $22, checkpoint = COALESCE($23::text, checkpoint),
              checkpoint_size = COALESCE($24::bigint, checkpoint_size), checkpoint_root = COALESCE($25::bytea, checkpoint_root)
            WHERE size = $26 AND size <= $22 AND ($24::bigint IS NULL OR checkpoint_size IS NULL OR checkpoint_size <= $24::bigint)
            RETURNING 1)
    SELECT (SELECT count(*) FROM s) AS seeds, (SELECT count(*) FROM h) AS head`,
};

/** BEGIN + the sequencer lock + the log head and its frontier, in one round trip (simple protocol). */
const BEGIN_WRITE = `BEGIN ISOLATION LEVEL READ COMMITTED;
SELECT pg_advisory_xact_lock(${SEQUENCER_LOCK});
SELECT size FROM log_head;
SELECT t.level, t.idx, t.hash FROM log_head h CROSS JOIN generate_series(0, 52) AS b(lv)
  JOIN tree_nodes t ON t.level = b.lv AND t.idx = (h.size >> b.lv) - 1
  WHERE ((h.size >> b.lv) & 1) = 1 ORDER BY t.level DESC;`;

async function run<R extends QueryResultRow>(client: pg.Pool | PoolClient, name: keyof typeof Q, values: unknown[]): Promise<QueryResult<R>> {
  const config: QueryConfig = { name: `aw_${name}`, text: Q[name], values };
  try {
    return await client.query<R>(config);
  } catch (e) {
    throw mapPgError(e);
  }
}

// ---------------------------------------------------------------- transactions

interface PendingDuplicity {
  proof: DuplicityProof;
  leafIndex: number;
  at: number;
}

class PgTransaction implements StoreTransaction {
  private readonly client: PoolClient;
  private readonly frontier: Frontier;
  private readonly baseSize: number;
  private readonly seeds = new Map<string, SeedRecord>();
  private readonly events: { party: string; at: number; newSeed: boolean }[] = [];
  private readonly duplicities = new Map<string, PendingDuplicity>();
  private checkpoint: SignedCheckpoint | undefined;
  private readonly prefetchedSeeds = new Map<string, SeedRecord | undefined>();
  private readonly prefetchedUsage = new Map<string, PartyUsage & { anchorsSince: number; newSeedsSince: number }>();

  constructor(client: PoolClient, baseSize: number, frontier: Frontier) {
    this.client = client;
    this.baseSize = baseSize;
    this.frontier = frontier;
  }

  /**
   * Read ahead, in two queries, what a batch will ask of getSeed and partyUsage: the committed
   * records of `seedIds`, and the quota windows of `parties` since the given times (the earliest
   * any request of the batch needs). Optional (not in StoreTransaction yet); without it each
   * getSeed/partyUsage is a round trip. Valid until the transaction ends: the sequencer lock keeps
   * every other writer out, and this transaction's own writes are laid over it as usual.
   */
  async prefetch(seedIds: Uint8Array[], parties: string[], anchorsSince: number, newSeedsSince: number): Promise<void> {
    const seeds = [...new Map(seedIds.map((id) => [encodeHex(id), id])).entries()].filter(([k]) => !this.prefetchedSeeds.has(k));
    if (seeds.length > 0) {
      const res = await run<SeedRow>(this.client, 'getSeeds', [seeds.map(([, id]) => id)]);
      for (const [k] of seeds) this.prefetchedSeeds.set(k, undefined);
      for (const row of res.rows) this.prefetchedSeeds.set(encodeHex(toBytes(row.seed_id)), seedFromRow(row));
    }
    const names = [...new Set(parties)].filter((p) => !this.prefetchedUsage.has(p));
    if (names.length > 0) {
      const res = await run<{ party: string; seed: boolean; at: number; n: number }>(this.client, 'partiesUsage', [names, anchorsSince, newSeedsSince]);
      for (const p of names) this.prefetchedUsage.set(p, { anchorsSince, newSeedsSince, anchorTimes: [], newSeedTimes: [] });
      for (const r of res.rows) {
        const u = this.prefetchedUsage.get(r.party)!;
        const list = r.seed ? u.newSeedTimes : u.anchorTimes;
        for (let i = 0; i < r.n; i++) list.push(r.at);
      }
    }
  }

  async getSeed(seedId: Uint8Array): Promise<SeedRecord | undefined> {
    const key = encodeHex(seedId);
    let stored: SeedRecord | undefined;
    if (this.prefetchedSeeds.has(key)) stored = this.prefetchedSeeds.get(key);
    else {
      const res = await run<SeedRow>(this.client, 'getSeed', [seedId]);
      stored = res.rows[0] === undefined ? undefined : seedFromRow(res.rows[0]);
    }
    const record = this.seeds.get(key) ?? stored;
    const dup = this.duplicities.get(key)?.proof ?? stored?.duplicity;
    if (record === undefined) return undefined;
    const out: SeedRecord = { ...record };
    delete out.duplicity;
    if (dup !== undefined) out.duplicity = dup;
    return out;
  }

  async partyUsage(party: string, anchorsSince: number, newSeedsSince: number): Promise<PartyUsage> {
    let anchorTimes: number[] = [];
    let newSeedTimes: number[] = [];
    const pre = this.prefetchedUsage.get(party);
    if (pre !== undefined && anchorsSince >= pre.anchorsSince && newSeedsSince >= pre.newSeedsSince) {
      anchorTimes = pre.anchorTimes.filter((t) => t >= anchorsSince);
      newSeedTimes = pre.newSeedTimes.filter((t) => t >= newSeedsSince);
    } else {
      const res = await run<{ seed: boolean; at: number; n: number }>(this.client, 'partyUsage', [party, anchorsSince, newSeedsSince]);
      for (const r of res.rows) {
        const list = r.seed ? newSeedTimes : anchorTimes;
        for (let i = 0; i < r.n; i++) list.push(r.at);
      }
    }
    for (const e of this.events) {
      if (e.party !== party) continue;
      if (e.at >= anchorsSince) anchorTimes.push(e.at);
      if (e.newSeed && e.at >= newSeedsSince) newSeedTimes.push(e.at);
    }
    anchorTimes.sort((a, b) => a - b);
    newSeedTimes.sort((a, b) => a - b);
    return { anchorTimes, newSeedTimes };
  }

  putSeed(record: SeedRecord, isNew: boolean, party: string): Promise<void> {
    const key = encodeHex(record.seedId);
    const prior = this.seeds.get(key);
    if (prior !== undefined && prior.latest.index >= record.latest.index) {
      return Promise.reject(new StoreInvariantError('store_invariant', `store: seed ${key} would move from index ${prior.latest.index} to ${record.latest.index}`));
    }
    this.seeds.set(key, record);
    this.events.push({ party, at: record.cosignature.timestamp, newSeed: isNew });
    return Promise.resolve();
  }

  putDuplicity(proof: DuplicityProof, leafIndex: number, at: number): Promise<void> {
    const key = encodeHex(proof.seedId);
    if (this.duplicities.has(key)) return Promise.reject(new StoreInvariantError('store_invariant', `store: a second duplicity proof for seed ${key}`));
    this.duplicities.set(key, { proof, leafIndex, at });
    return Promise.resolve();
  }

  appendEntries(entries: Uint8Array[]): Promise<number> {
    const first = this.frontier.size;
    for (const e of entries) this.frontier.append(e);
    return Promise.resolve(first);
  }

  treeHead(): Promise<TreeHead> {
    return Promise.resolve({ size: this.frontier.size, root: this.frontier.root() });
  }

  setCheckpoint(checkpoint: SignedCheckpoint): Promise<void> {
    if (checkpoint.size > this.frontier.size) return Promise.reject(new StoreInvariantError('store_invariant', 'store: checkpoint beyond the tree size'));
    this.checkpoint = checkpoint;
    return Promise.resolve();
  }

  private get dirty(): boolean {
    return this.frontier.newEntries.length > 0 || this.seeds.size > 0 || this.duplicities.size > 0 || this.checkpoint !== undefined;
  }

  /** Write everything buffered in one statement (still inside the transaction). */
  async flush(): Promise<void> {
    if (!this.dirty) return;
    const f = this.frontier;
    const seeds = [...this.seeds.values()];
    const dups = [...this.duplicities.values()];
    const cp = this.checkpoint;
    const newSize = f.size;
    // Quota windows look back one day at most: prune older events each time the log crosses a multiple of 1024.
    const prune = Math.floor(newSize / 1024) > Math.floor(this.baseSize / 1024) ? Math.floor(Date.now() / 1000) - 2 * 86400 : null;
    const res = await run<{ seeds: number; head: number }>(this.client, 'flush', [
      f.newEntries.map((x) => x.index),
      f.newEntries.map((x) => x.entry),
      f.newNodes.map((x) => x.level),
      f.newNodes.map((x) => x.index),
      f.newNodes.map((x) => x.hash),
      seeds.map((s) => s.seedId),
      seeds.map((s) => s.owner),
      seeds.map((s) => s.createdAt),
      seeds.map((s) => encodeStoredAnchor(s.latest)),
      seeds.map((s) => s.latest.index),
      seeds.map((s) => s.cosignature.signature),
      seeds.map((s) => s.cosignature.timestamp),
      seeds.map((s) => s.cosignature.leafIndex),
      this.events.map((e) => e.party),
      this.events.map((e) => e.at),
      this.events.map((e) => e.newSeed),
      dups.map((d) => d.proof.seedId),
      dups.map((d) => encodeStoredProof(d.proof)),
      dups.map((d) => d.leafIndex),
      dups.map((d) => d.at),
      prune,
      newSize,
      cp?.note ?? null,
      cp?.size ?? null,
      cp === undefined ? null : Buffer.from(cp.root),
      this.baseSize,
    ]);
    const row = res.rows[0];
    if (row?.head !== 1) throw new StoreInvariantError('store_invariant', 'store: the log head moved under the sequencer lock (or a checkpoint would go backwards)');
    if (row.seeds !== seeds.length) throw new StoreInvariantError('store_invariant', "store: a seed's latest anchor would move backwards");
  }
}

// ---------------------------------------------------------------- the store

export class PostgresStore implements WitnessStore {
  /** Several processes may write this store at once: in-memory caches of committed state are invalid. */
  readonly multiWriter = true;
  /** Reads, cosign CAS and evidence. */
  private readonly pool: pg.Pool;
  /** The sequencer's own connection, so that a batch never queues behind the reads of the previous one. */
  private readonly writer: pg.Pool;
  private readonly writeMutex = new Mutex();
  /** Committed tree nodes (immutable, so valid with several writers): proofs for fresh anchors need no query. */
  private readonly nodes = new NodeCache();
  private closed = false;

  private constructor(pool: pg.Pool, writer: pg.Pool) {
    this.pool = pool;
    this.writer = writer;
  }

  /** Connect, check the server's durability settings, apply pending migrations (serialized across replicas). */
  static async open(options: PostgresStoreOptions | string): Promise<PostgresStore> {
    const o: PostgresStoreOptions = typeof options === 'string' ? { url: options } : options;
    const statementTimeout = o.statementTimeoutMs ?? 15_000;
    const config: pg.PoolConfig = {
      connectionString: o.url,
      connectionTimeoutMillis: o.connectTimeoutMs ?? 5_000,
      idleTimeoutMillis: 30_000,
      keepAlive: true,
      application_name: 'anchor-witness',
      statement_timeout: statementTimeout,
      query_timeout: statementTimeout + 2_000,
      lock_timeout: o.lockTimeoutMs ?? 5_000,
      idle_in_transaction_session_timeout: o.idleInTransactionTimeoutMs ?? 10_000,
      types,
    };
    const pool = new pg.Pool({ ...config, max: o.poolSize ?? 10 });
    const writer = new pg.Pool({ ...config, max: 1 });
    // An idle connection that breaks (server restart, network) is dropped by the pool; requests
    // report their own errors. Without a listener the 'error' event would end the process.
    pool.on('error', () => undefined);
    writer.on('error', () => undefined);
    const where = redact(o.url);
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (e) {
      await pool.end().catch(() => undefined);
      await writer.end().catch(() => undefined);
      throw new StoreOpenError('store_unopenable', `cannot connect to the store ${where}: ${describe(e)}`);
    }
    let failed = false;
    try {
      const settings = await client.query<{ sync: string; fsync: string; recovery: boolean }>(
        "SELECT current_setting('synchronous_commit') AS sync, current_setting('fsync') AS fsync, pg_is_in_recovery() AS recovery",
      );
      const s = settings.rows[0]!;
      if (s.recovery) throw new StoreOpenError('store_read_only', `the store ${where} is a read-only standby; point --store at the primary`);
      if (s.sync === 'off' || s.fsync === 'off') {
        throw new StoreOpenError('store_unsafe', `the store ${where} runs with synchronous_commit=${s.sync}, fsync=${s.fsync}: acknowledged anchors could be lost (docs/scale-out.md)`);
      }
      await client.query('BEGIN');
      await client.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
      await client.query('CREATE TABLE IF NOT EXISTS aw_schema (id boolean PRIMARY KEY DEFAULT true CHECK (id), version integer NOT NULL)');
      const row = (await client.query<{ version: number }>('SELECT version FROM aw_schema')).rows[0];
      const version = row?.version ?? 0;
      if (version > PG_SCHEMA_VERSION) {
        throw new StoreOpenError('store_schema', `the store ${where} has schema version ${version}; this build knows ${PG_SCHEMA_VERSION}`);
      }
      for (let v = version; v < PG_SCHEMA_VERSION; v++) {
        await client.query(MIGRATIONS[v]!);
        await client.query('INSERT INTO aw_schema (id, version) VALUES (true, $1) ON CONFLICT (id) DO UPDATE SET version = excluded.version', [v + 1]);
      }
      await client.query('COMMIT');
    } catch (e) {
      failed = true;
      await client.query('ROLLBACK').catch(() => undefined);
      client.release(true);
      await pool.end().catch(() => undefined);
      await writer.end().catch(() => undefined);
      if (e instanceof StoreOpenError) throw e;
      throw new StoreOpenError('store_unopenable', `cannot open the store ${where}: ${describe(e)}`);
    } finally {
      if (!failed) client.release();
    }
    return new PostgresStore(pool, writer);
  }

  async bindIdentity(id: StoreIdentity): Promise<void> {
    await this.withWriteClient(async (client) => {
      const fields: [keyof StoreIdentity, string][] = [
        ['witnessKey', 'witness_key'],
        ['name', 'name'],
        ['logOrigin', 'log_origin'],
      ];
      for (const [field, key] of fields) {
        const stored = (await run<{ value: string }>(client, 'getMeta', [key])).rows[0]?.value;
        if (stored === undefined) await run(client, 'setMeta', [key, id[field]]);
        else if (stored !== id[field]) {
          throw new StoreOpenError('store_identity_mismatch', `the store is bound to ${key} ${JSON.stringify(stored)}, not ${JSON.stringify(id[field])}`);
        }
      }
      return undefined;
    });
  }

  async transaction<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    return this.withWriteClient(async (client, size, frontier) => {
      const tx = new PgTransaction(client, size, frontier);
      const result = await fn(tx);
      await tx.flush();
      return result;
    });
  }

  /**
   * One write transaction under the sequencer lock: BEGIN, lock, head + frontier (one round trip),
   * `body`, COMMIT. Any failure rolls back; a connection fault destroys the pooled connection.
   */
  private withWriteClient<T>(body: (client: PoolClient, size: number, frontier: Frontier) => Promise<T>): Promise<T> {
    return this.writeMutex.run(async () => {
      if (this.closed) throw new StoreUnavailableError('store: closed');
      const client = await this.connect();
      // A connection that breaks between statements emits 'error' on the checked-out client.
      let broken: unknown;
      const onError = (e: unknown): void => {
        broken = e;
      };
      client.on('error', onError);
      let committed = false;
      try {
        let results: QueryResult[];
        try {
          results = (await client.query(BEGIN_WRITE)) as unknown as QueryResult[];
        } catch (e) {
          throw mapPgError(e);
        }
        const size = Number((results[2]!.rows[0] as { size: number | string } | undefined)?.size ?? NaN);
        if (!Number.isSafeInteger(size)) throw new StoreUnavailableError('store: the log head row is missing');
        const nodes: StoredNode[] = results[3]!.rows.map((r: { level: number; idx: number | string; hash: unknown }) => ({
          level: r.level,
          index: Number(r.idx),
          hash: toBytes(r.hash),
        }));
        let frontier: Frontier;
        try {
          frontier = new Frontier(size, nodes);
        } catch {
          throw new StoreUnavailableError(`store: missing tree nodes on the right edge of the log (size ${size})`);
        }
        for (const n of nodes) this.nodes.set(n.level, n.index, n.hash);
        const result = await body(client, size, frontier);
        try {
          await client.query('COMMIT');
        } catch (e) {
          // Outcome unknown to us: 503, the client resends (a replay if it did commit).
          broken ??= e;
          throw mapPgError(e);
        }
        committed = true;
        // Every node a proof against the new head needs for this batch's leaves is here.
        for (const n of frontier.newNodes.slice(-4096)) this.nodes.set(n.level, n.index, n.hash);
        return result;
      } catch (e) {
        if (e instanceof StoreUnavailableError) broken ??= e;
        throw e;
      } finally {
        if (!committed && broken === undefined) {
          try {
            await client.query('ROLLBACK');
          } catch (e) {
            broken = e;
          }
        }
        client.removeListener('error', onError);
        client.release(broken === undefined ? undefined : true);
      }
    });
  }

  private async connect(): Promise<PoolClient> {
    try {
      return await this.writer.connect();
    } catch (e) {
      throw mapPgError(e);
    }
  }

  private read<R extends QueryResultRow>(name: keyof typeof Q, values: unknown[]): Promise<QueryResult<R>> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('store: closed'));
    return run<R>(this.pool, name, values);
  }

  async getSeed(seedId: Uint8Array): Promise<SeedRecord | undefined> {
    const row = (await this.read<SeedRow>('getSeed', [seedId])).rows[0];
    return row === undefined ? undefined : seedFromRow(row);
  }

  async getDuplicity(seedId: Uint8Array): Promise<DuplicityProof | undefined> {
    const row = (await this.read<{ proof: string }>('getProof', [seedId])).rows[0];
    return row === undefined ? undefined : decodeStoredProof(row.proof);
  }

  async listDuplicities(after: Uint8Array | undefined, limit: number): Promise<DuplicityProof[]> {
    const res = await this.read<{ proof: string }>('proofsAfter', [after ?? new Uint8Array(0), limit]);
    return res.rows.map((r) => decodeStoredProof(r.proof));
  }

  async counts(): Promise<{ seeds: number; duplicities: number }> {
    const row = (await this.read<{ seeds: number; duplicities: number }>('counts', [])).rows[0];
    return { seeds: row?.seeds ?? 0, duplicities: row?.duplicities ?? 0 };
  }

  async checkpoint(): Promise<SignedCheckpoint | undefined> {
    const row = (await this.read<{ checkpoint: string | null; checkpoint_size: number | null; checkpoint_root: Uint8Array | null }>('checkpoint', [])).rows[0];
    if (row === undefined || row.checkpoint === null || row.checkpoint_size === null || row.checkpoint_root === null) return undefined;
    return { note: row.checkpoint, size: row.checkpoint_size, root: toBytes(row.checkpoint_root) };
  }

  private fetchNodes = async (nodes: NodeRef[]): Promise<StoredNode[]> => {
    const res = await this.read<{ level: number; idx: number; hash: Uint8Array }>('nodes', [nodes.map((n) => n.level), nodes.map((n) => n.index)]);
    return res.rows.map((r) => ({ level: r.level, index: r.idx, hash: toBytes(r.hash) }));
  };

  private static readonly missing = (level: number, index: number): Error => new StoreUnavailableError(`store: missing tree node (${level}, ${index})`);

  inclusionProof(index: number, size: number): Promise<Uint8Array[]> {
    return withNodes((read) => inclusionProof(index, size, read), this.fetchNodes, PostgresStore.missing, this.nodes);
  }

  consistencyProof(oldSize: number, newSize: number): Promise<Uint8Array[]> {
    return withNodes((read) => consistencyProof(oldSize, newSize, read), this.fetchNodes, PostgresStore.missing, this.nodes);
  }

  async tile(level: number, index: number, width: number): Promise<Uint8Array> {
    const start = index * 256;
    const rows = (await this.read<{ hash: Uint8Array }>('nodeRange', [level * 8, start, start + width])).rows;
    if (rows.length !== width) throw new RangeError('tile not available at that width');
    return Buffer.concat(rows.map((r) => toBytes(r.hash)));
  }

  async entries(index: number, width: number): Promise<Uint8Array[]> {
    const start = index * 256;
    const rows = (await this.read<{ entry: Uint8Array }>('entryRange', [start, start + width])).rows;
    if (rows.length !== width) throw new RangeError('entry bundle not available at that width');
    return rows.map((r) => toBytes(r.entry));
  }

  async getOrigin(origin: string): Promise<OriginState | undefined> {
    const row = (await this.read<{ size: number; root: Uint8Array; checkpoint: string; cosignatures: string; last_time: number }>('getOrigin', [origin])).rows[0];
    if (row === undefined) return undefined;
    return { origin, size: row.size, root: toBytes(row.root), checkpoint: row.checkpoint, cosignatures: row.cosignatures, lastTime: row.last_time };
  }

  /**
   * Compare-and-swap in one statement: PostgreSQL re-checks the WHERE clause against the latest
   * committed row after any concurrent update, so of several replicas racing from one stored size
   * exactly one wins. Also refuses a cosignature time below the stored one (times never go
   * backwards across replicas with skewed clocks; the cosign service retries with the new state).
   */
  async updateOrigin(expectedSize: number, next: OriginState): Promise<boolean> {
    const values = [next.origin, next.size, Buffer.from(next.root), next.checkpoint, next.cosignatures, next.lastTime];
    const res = expectedSize === 0 ? await this.read('createOrigin', values) : await this.read('updateOrigin', [...values, expectedSize]);
    return res.rowCount === 1;
  }

  /**
   * A known hash costs one read. A new one: a transaction holding the origin's evidence lock
   * (replicas recording evidence for one origin take turns, so none overshoots the bound), then
   * insert and evict in one statement, then COMMIT.
   */
  async recordEvidence(e: Omit<EvidenceRecord, 'hash'> & { hash: Uint8Array }, limit = EVIDENCE_LIMIT): Promise<{ added: boolean; evicted: number }> {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`evidence limit ${limit}: a positive integer is required`);
    const hash = Buffer.from(e.hash);
    if (((await this.read('hasEvidence', [e.origin, hash])).rowCount ?? 0) > 0) return { added: false, evicted: 0 };
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw mapPgError(err);
    }
    let broken = false;
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1::integer, hashtext($2::text))', [EVIDENCE_LOCK, e.origin]);
      const row = (await run<{ added: number; evicted: number }>(client, 'evidence', [e.origin, hash, e.note, e.reason, e.at, limit])).rows[0];
      await client.query('COMMIT');
      return { added: row?.added === 1, evicted: row?.evicted ?? 0 };
    } catch (err) {
      try {
        await client.query('ROLLBACK');
      } catch {
        broken = true; // the connection is gone: drop it from the pool
      }
      throw mapPgError(err);
    } finally {
      client.release(broken);
    }
  }

  async listEvidence(origin: string): Promise<EvidenceRecord[]> {
    const res = await this.read<{ hash: Uint8Array | null; note: string; reason: string; at: number }>('listEvidence', [origin]);
    return res.rows.map((r) => ({ origin, hash: r.hash === null ? undefined : toBytes(r.hash), note: r.note, reason: r.reason, at: r.at }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.writeMutex.run(() => {
      this.closed = true;
      return Promise.resolve();
    });
    await this.pool.end().catch(() => undefined);
    await this.writer.end().catch(() => undefined);
  }
}

/** The URL without its password, for messages. */
function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}
