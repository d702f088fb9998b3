/**
 * The PostgreSQL write transaction (the sequencer), shared by every replica of one witness:
 * READ COMMITTED + `pg_advisory_xact_lock(SEQUENCER)`, the log size and right edge read in the same
 * round trip, buffered writes flushed as ONE statement of data-modifying CTEs that also refuses a
 * moved log head, a checkpoint going backwards or a seed index not growing. Why: docs/scale-out.md.
 */
import type { PoolClient, QueryResult } from 'pg';
import { StoreInvariantError, StoreUnavailableError } from '../errors.ts';
import { encodeStoredAnchor, encodeStoredProof } from '../rows.ts';
import type { PgAnchorTx } from './anchor-state.ts';
import { mapPgError, query } from './db.ts';
import { PgLogTx } from './log.ts';
import { SEQUENCER_LOCK } from './schema.ts';

/** BEGIN + the sequencer lock + the log head and its right edge, in one round trip (simple protocol). */
export const BEGIN_WRITE = `BEGIN ISOLATION LEVEL READ COMMITTED;
SELECT pg_advisory_xact_lock(${SEQUENCER_LOCK});
SELECT size FROM log_head;
SELECT t.level, t.idx, t.hash FROM log_head h CROSS JOIN generate_series(0, 52) AS b(lv)
  JOIN tree_nodes t ON t.level = b.lv AND t.idx = (h.size >> b.lv) - 1
  WHERE ((h.size >> b.lv) & 1) = 1 ORDER BY t.level DESC;`;

// The whole batch in one statement (data-modifying CTEs run exactly once each, all or nothing).
const FLUSH = `WITH
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
  SELECT (SELECT count(*) FROM s) AS seeds, (SELECT count(*) FROM h) AS head`;

/** Open the log side from BEGIN_WRITE's results. */
export function logTxFromBegin(client: PoolClient, results: QueryResult[]): PgLogTx {
  const size = Number((results[2]!.rows[0] as { size: number | string } | undefined)?.size ?? NaN);
  if (!Number.isSafeInteger(size)) throw new StoreUnavailableError('store: the log head row is missing');
  return new PgLogTx(client, size, PgLogTx.parseEdge(results[3]!.rows as { level: number; idx: number | string; hash: unknown }[]));
}

/** Write everything buffered in one statement (still inside the transaction). */
export async function flush(client: PoolClient, log: PgLogTx, anchors: PgAnchorTx): Promise<void> {
  if (!log.dirty && !anchors.dirty) return;
  const seeds = [...anchors.seeds.values()];
  const dups = [...anchors.duplicities.values()];
  const cp = log.checkpoint;
  const base = log.baseSize;
  const newSize = log.currentSize;
  const events = anchors.events;
  // Quota windows look back one day at most: prune older events each time the log crosses a multiple of 1024.
  const prune = Math.floor(newSize / 1024) > Math.floor(base / 1024) ? Math.floor(Date.now() / 1000) - 2 * 86400 : null;
  const res = await query<{ seeds: number; head: number }>(client, 'flush', FLUSH, [
    log.entries.map((_, i) => base + i),
    log.entries,
    log.nodes.map((x) => x.level),
    log.nodes.map((x) => x.index),
    log.nodes.map((x) => x.hash),
    seeds.map((s) => s.seedId),
    seeds.map((s) => s.owner),
    seeds.map((s) => s.createdAt),
    seeds.map((s) => encodeStoredAnchor(s.latest)),
    seeds.map((s) => s.latest.index),
    seeds.map((s) => s.cosignature.signature),
    seeds.map((s) => s.cosignature.timestamp),
    seeds.map((s) => s.cosignature.leafIndex),
    events.map((e) => e.party),
    events.map((e) => e.at),
    events.map((e) => e.newSeed),
    dups.map((d) => d.proof.seedId),
    dups.map((d) => encodeStoredProof(d.proof)),
    dups.map((d) => d.leafIndex),
    dups.map((d) => d.at),
    prune,
    newSize,
    cp?.note ?? null,
    cp?.size ?? null,
    cp === undefined ? null : Buffer.from(cp.root),
    base,
  ]);
  const row = res.rows[0];
  if (row?.head !== 1)
    throw new StoreInvariantError('store: the log head moved under the sequencer lock (or a checkpoint would go backwards)');
  if (row.seeds !== seeds.length) throw new StoreInvariantError("store: a seed's latest anchor would move backwards");
}

/**
 * One write transaction on `client` under the sequencer lock: BEGIN, lock, head + right edge (one
 * round trip), `body`, COMMIT. Any failure rolls back; a connection fault destroys the pooled
 * connection (`release(true)`).
 */
export async function writeTransaction<T>(client: PoolClient, body: (begin: QueryResult[]) => Promise<T>): Promise<T> {
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
    const result = await body(results);
    try {
      await client.query('COMMIT');
    } catch (e) {
      // Outcome unknown to us: 503, the client resends (a replay if it did commit).
      broken ??= e;
      throw mapPgError(e);
    }
    committed = true;
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
}
