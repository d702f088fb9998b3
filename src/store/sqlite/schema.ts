/**
 * The SQLite store's schema: versioned migrations (PRAGMA user_version), applied at open. The
 * on-disk format is the contract with existing stores: never edit a migration, append one.
 *
 * The Merkle tree is stored as every complete-subtree hash, `tree_nodes(level, idx)`: about 2n
 * rows for n leaves, so roots, proofs and tiles are O(log n) point reads or one range read.
 */
import type { Database as Db } from 'better-sqlite3';
import { StoreOpenError } from '../errors.ts';

/** Schema version i + 1 is MIGRATIONS[0..i] (exported for the upgrade tests). */
export const MIGRATIONS: string[] = [
  `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
   CREATE TABLE tree_nodes (level INTEGER NOT NULL, idx INTEGER NOT NULL, hash BLOB NOT NULL, PRIMARY KEY (level, idx)) WITHOUT ROWID;
   CREATE TABLE log_entries (idx INTEGER PRIMARY KEY, entry BLOB NOT NULL);
   CREATE TABLE seeds (seed_id BLOB PRIMARY KEY, owner TEXT NOT NULL, created_at INTEGER NOT NULL, anchor TEXT NOT NULL,
                       cosig_signature BLOB NOT NULL, cosig_time INTEGER NOT NULL, leaf_index INTEGER NOT NULL) WITHOUT ROWID;
   CREATE TABLE duplicities (seed_id BLOB PRIMARY KEY, proof TEXT NOT NULL, leaf_index INTEGER NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;
   CREATE TABLE party_events (id INTEGER PRIMARY KEY, party TEXT NOT NULL, at INTEGER NOT NULL, new_seed INTEGER NOT NULL);
   CREATE INDEX party_events_by_party ON party_events (party, at);`,
  `CREATE TABLE origins (origin TEXT PRIMARY KEY, size INTEGER NOT NULL, root BLOB NOT NULL, checkpoint TEXT NOT NULL,
                         cosignatures TEXT NOT NULL, last_time INTEGER NOT NULL) WITHOUT ROWID;
   CREATE TABLE evidence (id INTEGER PRIMARY KEY, origin TEXT NOT NULL, note TEXT NOT NULL, reason TEXT NOT NULL, at INTEGER NOT NULL);`,
  // Evidence deduplicated by checkpoint hash and bounded per origin (SPEC §5). Rows from earlier
  // versions keep a NULL hash: never deduplicated, the oldest, so evicted first.
  `ALTER TABLE evidence ADD COLUMN hash BLOB;
   CREATE UNIQUE INDEX evidence_by_hash ON evidence (origin, hash);
   CREATE INDEX evidence_by_origin ON evidence (origin, id);`,
  // Logs imported from logs/v0 lists (SPEC §5.5): vkeys newline-separated, in list order.
  `CREATE TABLE imported_logs (id INTEGER PRIMARY KEY, origin TEXT NOT NULL UNIQUE, vkeys TEXT NOT NULL, qpd INTEGER NOT NULL,
                               source TEXT NOT NULL, imported_at INTEGER NOT NULL);`,
  // The highest accepted KEL tip per identifier (SPEC §3.5): only ever raised.
  `CREATE TABLE kel_tips (prefix TEXT PRIMARY KEY, s INTEGER NOT NULL, d TEXT NOT NULL) WITHOUT ROWID;`,
  // The witnessed own log (SPEC §4.1): peers' state, the notes they cosigned, their lines, the
  // published size.
  `CREATE TABLE log_witnesses (url TEXT PRIMARY KEY, size INTEGER NOT NULL, root BLOB NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;
   CREATE TABLE log_cosigned_notes (size INTEGER PRIMARY KEY, root BLOB NOT NULL, note TEXT NOT NULL);
   CREATE TABLE log_cosignatures (size INTEGER NOT NULL, url TEXT NOT NULL, lines TEXT NOT NULL, at INTEGER NOT NULL,
                                  PRIMARY KEY (size, url)) WITHOUT ROWID;
   CREATE INDEX log_cosignatures_by_url ON log_cosignatures (url, size);
   CREATE TABLE log_published (id INTEGER PRIMARY KEY CHECK (id = 1), size INTEGER NOT NULL);`,
  // An origin's state bound to the log key set it was cosigned under, and the cosign key set that
  // made its stored lines (SPEC §5 rev 4). Imported origins are bound to their imported keys; other
  // older rows stay unbound (NULL) until the logs file names them again.
  `ALTER TABLE origins ADD COLUMN log_keys TEXT;
   ALTER TABLE origins ADD COLUMN cosigner_set BLOB;
   UPDATE origins SET log_keys = (SELECT vkeys FROM imported_logs WHERE imported_logs.origin = origins.origin);`,
  // A KEL tip's last establishment event (SPEC §3.5 rev 4): rows move ahead by (est_s, s), so a
  // recovery rotation (a lower s, a higher est_s) moves the row. Older rows stay NULL until the
  // next accepted evaluation of that prefix fills them.
  `ALTER TABLE kel_tips ADD COLUMN est_s INTEGER;
   ALTER TABLE kel_tips ADD COLUMN est_d TEXT;`,
  // The KERI witness role's first-seen ledger (SPEC §3.6.6): one accepted event per (prefix, sn).
  `CREATE TABLE kel_events (prefix TEXT NOT NULL, said TEXT NOT NULL, sn INTEGER NOT NULL, t TEXT NOT NULL, event TEXT NOT NULL,
                            attachment TEXT NOT NULL, state TEXT NOT NULL, witnessed INTEGER NOT NULL, first_seen TEXT NOT NULL,
                            ordinal INTEGER NOT NULL, receipt TEXT, key_state TEXT NOT NULL, leaf_index INTEGER,
                            PRIMARY KEY (prefix, said)) WITHOUT ROWID;
   CREATE UNIQUE INDEX kel_events_accepted ON kel_events (prefix, sn) WHERE state = 'accepted';
   CREATE UNIQUE INDEX kel_events_order ON kel_events (prefix, ordinal);
   CREATE TABLE kel_receipts (prefix TEXT NOT NULL, said TEXT NOT NULL, idx INTEGER NOT NULL, backer TEXT NOT NULL,
                              signature BLOB NOT NULL, PRIMARY KEY (prefix, said, idx)) WITHOUT ROWID;
   CREATE TABLE kel_duplicities (prefix TEXT NOT NULL, sn INTEGER NOT NULL, proof TEXT NOT NULL, leaf_index INTEGER NOT NULL,
                                 PRIMARY KEY (prefix, sn)) WITHOUT ROWID;`,
  // The witness key history (SPEC §1.2): one current, at most one next, retired keys kept forever;
  // the rotation entries logged (GET /v1/key-rotation) by log index.
  // A store from before rotation takes its bound key as current.
  `CREATE TABLE witness_keys (key TEXT PRIMARY KEY, state TEXT NOT NULL CHECK (state IN ('current', 'next', 'retired')),
                              since INTEGER NOT NULL, seq INTEGER NOT NULL) WITHOUT ROWID;
   CREATE UNIQUE INDEX witness_keys_one_per_state ON witness_keys (state) WHERE state <> 'retired';
   CREATE TABLE key_rotations (log_index INTEGER PRIMARY KEY, entry TEXT NOT NULL);
   INSERT INTO witness_keys (key, state, since, seq) SELECT value, 'current', 0, 0 FROM meta WHERE key = 'witness_key';`,
  // Cosignatures by rotation keys (SPEC §1.2 cosignature_next, stored at first need), by the
  // anchor's log leaf index and the key (hex).
  `CREATE TABLE witness_cosignatures (leaf_index INTEGER NOT NULL, key TEXT NOT NULL, signature BLOB NOT NULL,
                                      PRIMARY KEY (leaf_index, key)) WITHOUT ROWID;`,
];

/** The schema this build writes: one version per migration. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Apply the missing migrations, one transaction each; refuses a newer schema. */
export function migrate(db: Db, path: string): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > SCHEMA_VERSION) {
    throw new StoreOpenError('store_schema', `the store ${path} has schema version ${version}; this build knows ${SCHEMA_VERSION}`);
  }
  for (let v = version; v < SCHEMA_VERSION; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    }).immediate();
  }
  // On a read-only file system SQLite silently falls back to a read-only connection, which could
  // never write again, not even once the file system is writable: refuse it with a no-op write.
  db.pragma(`user_version = ${SCHEMA_VERSION}`);
}
