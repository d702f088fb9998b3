/**
 * The PostgreSQL store's schema: versioned migrations (`aw_schema.version`), applied at open under
 * an advisory transaction lock so that replicas starting together apply each exactly once. The
 * on-disk format is the contract with existing databases: never edit a migration, append one.
 */
import type { PoolClient } from 'pg';
import { StoreOpenError } from '../errors.ts';

/** Advisory lock keys (one database per witness identity; see docs/scale-out.md). */
export const SEQUENCER_LOCK = 0x4157_5345; // "AWSE"
export const MIGRATION_LOCK = 0x4157_4d49; // "AWMI"
/** With hashtext(origin): one evidence writer per origin across replicas, so the bound holds. */
export const EVIDENCE_LOCK = 0x4157_4556; // "AWEV"
/** With hashtext(prefix): one writer per KERI prefix across replicas (SPEC §3.6.3). */
export const KEL_PREFIX_LOCK = 0x4157_4b45; // "AWKE"

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
  // Logs imported from logs/v0 lists (SPEC §5.5): vkeys newline-separated, in list order.
  `CREATE TABLE imported_logs (id bigserial PRIMARY KEY, origin text NOT NULL UNIQUE, vkeys text NOT NULL, qpd integer NOT NULL,
                               source text NOT NULL, imported_at bigint NOT NULL);`,
  // The highest accepted KEL tip per identifier (SPEC §3.5): only ever raised.
  `CREATE TABLE kel_tips (prefix text PRIMARY KEY, s bigint NOT NULL, d text NOT NULL);`,
  // The witnessed own log (SPEC §4.1): peers' state, the notes they cosigned, their lines, the
  // published size.
  `CREATE TABLE log_witnesses (url text PRIMARY KEY, size bigint NOT NULL, root bytea NOT NULL, at bigint NOT NULL);
   CREATE TABLE log_cosigned_notes (size bigint PRIMARY KEY, root bytea NOT NULL, note text NOT NULL);
   CREATE TABLE log_cosignatures (size bigint NOT NULL, url text NOT NULL, lines text NOT NULL, at bigint NOT NULL, PRIMARY KEY (size, url));
   CREATE INDEX log_cosignatures_by_url ON log_cosignatures (url, size);
   CREATE TABLE log_published (id boolean PRIMARY KEY DEFAULT true CHECK (id), size bigint NOT NULL);`,
  // An origin's state bound to the log key set it was cosigned under, and the cosign key set that
  // made its stored lines (SPEC §5 rev 4). Imported origins are bound to their imported keys; other
  // older rows stay unbound (NULL) until the logs file names them again.
  `ALTER TABLE origins ADD COLUMN log_keys text, ADD COLUMN cosigner_set bytea;
   UPDATE origins SET log_keys = i.vkeys FROM imported_logs i WHERE i.origin = origins.origin;`,
  // A KEL tip's last establishment event (SPEC §3.5 rev 4): rows move ahead by (est_s, s), so a
  // recovery rotation (a lower s, a higher est_s) moves the row. Older rows stay NULL until the
  // next accepted evaluation of that prefix fills them.
  `ALTER TABLE kel_tips ADD COLUMN est_s bigint, ADD COLUMN est_d text;`,
  // The KERI witness role's first-seen ledger (SPEC §3.6.6): one accepted event per (prefix, sn),
  // even across replicas (the unique index; writers also hold a per-prefix advisory lock).
  `CREATE TABLE kel_events (prefix text NOT NULL, said text NOT NULL, sn bigint NOT NULL, t text NOT NULL, event text NOT NULL,
                            attachment text NOT NULL, state text NOT NULL, witnessed boolean NOT NULL, first_seen text NOT NULL,
                            ordinal bigint NOT NULL, receipt text, key_state text NOT NULL, leaf_index bigint,
                            PRIMARY KEY (prefix, said));
   CREATE UNIQUE INDEX kel_events_accepted ON kel_events (prefix, sn) WHERE state = 'accepted';
   CREATE UNIQUE INDEX kel_events_order ON kel_events (prefix, ordinal);
   CREATE TABLE kel_receipts (prefix text NOT NULL, said text NOT NULL, idx integer NOT NULL, backer text NOT NULL,
                              signature bytea NOT NULL, PRIMARY KEY (prefix, said, idx));
   CREATE TABLE kel_duplicities (prefix text NOT NULL, sn bigint NOT NULL, proof text NOT NULL, leaf_index bigint NOT NULL,
                                 PRIMARY KEY (prefix, sn));`,
  // The witness key history (SPEC §1.2): one current, at most one next, retired keys kept forever;
  // the rotation entries logged (GET /v1/key-rotation) by log index.
  // A store from before rotation takes its bound key as current.
  `CREATE TABLE witness_keys (key text PRIMARY KEY, state text NOT NULL CHECK (state IN ('current', 'next', 'retired')),
                              since bigint NOT NULL, seq bigint NOT NULL);
   CREATE UNIQUE INDEX witness_keys_one_per_state ON witness_keys (state) WHERE state <> 'retired';
   CREATE TABLE key_rotations (log_index bigint PRIMARY KEY, entry text NOT NULL);
   INSERT INTO witness_keys (key, state, since, seq) SELECT value, 'current', 0, 0 FROM meta WHERE key = 'witness_key';`,
  // Cosignatures by rotation keys (SPEC §1.2 cosignature_next, stored at first need), by the
  // anchor's log leaf index and the key (hex).
  `CREATE TABLE witness_cosignatures (leaf_index bigint NOT NULL, key text NOT NULL, signature bytea NOT NULL,
                                      PRIMARY KEY (leaf_index, key));`,
];

/** The schema this build writes: one version per migration. */
export const PG_SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Check the server's durability settings, then apply pending migrations in one transaction under
 * the migration lock (PostgreSQL DDL is transactional). `where` names the store in messages.
 */
export async function checkAndMigrate(client: PoolClient, where: string): Promise<void> {
  const settings = await client.query<{ sync: string; fsync: string; recovery: boolean }>(
    "SELECT current_setting('synchronous_commit') AS sync, current_setting('fsync') AS fsync, pg_is_in_recovery() AS recovery",
  );
  const s = settings.rows[0]!;
  if (s.recovery) throw new StoreOpenError('store_read_only', `the store ${where} is a read-only standby; point --store at the primary`);
  if (s.sync === 'off' || s.fsync === 'off') {
    throw new StoreOpenError(
      'store_unsafe',
      `the store ${where} runs with synchronous_commit=${s.sync}, fsync=${s.fsync}: acknowledged anchors could be lost (docs/scale-out.md)`,
    );
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
    await client.query('INSERT INTO aw_schema (id, version) VALUES (true, $1) ON CONFLICT (id) DO UPDATE SET version = excluded.version', [
      v + 1,
    ]);
  }
  await client.query('COMMIT');
}
