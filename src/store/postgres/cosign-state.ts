/**
 * The cosign role's state in PostgreSQL (SPEC §5). `updateOrigin` is one conditional statement per
 * call (row-level CAS on the stored size, and the stored cosignature time may not go backwards),
 * so concurrent add-checkpoint requests on different replicas never roll an origin back. Evidence
 * is deduplicated by hash and bounded per origin, replicas taking turns per origin.
 */
import { decodeKeySet, encodeKeySet, originFromRow, toBytes, type OriginRow } from '../rows.ts';
import {
  EVIDENCE_LIMIT,
  type CosignStateStorage,
  type EvidenceRecord,
  type ForgottenOrigin,
  type ImportedLog,
  type OriginState,
  type StoredOriginKeys,
} from '../types.ts';
import { query, type PgReader } from './db.ts';
import { EVIDENCE_LOCK } from './schema.ts';

const SQL = {
  getOrigin: 'SELECT size, root, checkpoint, cosignatures, last_time, log_keys, cosigner_set FROM origins WHERE origin = $1',
  // CAS from "never cosigned" (no row, or a row of size 0): insert, or update a size-0 row.
  createOrigin: `INSERT INTO origins (origin, size, root, checkpoint, cosignatures, last_time, log_keys, cosigner_set)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                 ON CONFLICT (origin) DO UPDATE SET size = excluded.size, root = excluded.root, checkpoint = excluded.checkpoint,
                   cosignatures = excluded.cosignatures, last_time = excluded.last_time, log_keys = excluded.log_keys,
                   cosigner_set = excluded.cosigner_set
                 WHERE origins.size = 0 AND origins.last_time <= excluded.last_time`,
  updateOrigin: `UPDATE origins SET size = $2, root = $3, checkpoint = $4, cosignatures = $5, last_time = $6, log_keys = $7,
                   cosigner_set = $8
                 WHERE origin = $1 AND size = $9 AND last_time <= $6`,
  originKeys: "SELECT origin, log_keys, checkpoint <> '' AS cosigned FROM origins WHERE origin = ANY($1::text[])",
  setOriginKeys: 'UPDATE origins SET log_keys = $2 WHERE origin = $1',
  forget: `WITH st AS (DELETE FROM origins WHERE origin = $1 RETURNING size, checkpoint),
                ev AS (DELETE FROM evidence WHERE origin = $1 RETURNING 1),
                im AS (DELETE FROM imported_logs WHERE origin = $1 RETURNING 1)
           SELECT (SELECT count(*) FROM st)::integer AS state, (SELECT size FROM st WHERE checkpoint <> '') AS cosigned_size,
                  (SELECT count(*) FROM ev)::integer AS evidence, (SELECT count(*) FROM im)::integer AS imported`,
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
  // One statement per chunk: the import records that are new, then their empty states.
  importLogs: `WITH ins AS (INSERT INTO imported_logs (origin, vkeys, qpd, source, imported_at)
                            SELECT o, v, q, s, a FROM unnest($1::text[], $2::text[], $3::integer[], $4::text[], $5::bigint[]) WITH ORDINALITY AS t(o, v, q, s, a, n)
                            ORDER BY n
                            ON CONFLICT (origin) DO NOTHING RETURNING origin),
                    st AS (INSERT INTO origins (origin, size, root, checkpoint, cosignatures, last_time, log_keys)
                            SELECT ins.origin, 0, $6, '', '', 0, t.v
                            FROM ins JOIN unnest($1::text[], $2::text[]) AS t(o, v) ON t.o = ins.origin
                            ON CONFLICT (origin) DO NOTHING)
               SELECT origin FROM ins`,
  setImportedQpd: 'UPDATE imported_logs SET qpd = t.q FROM unnest($1::text[], $2::integer[]) AS t(o, q) WHERE imported_logs.origin = t.o',
  listImports: 'SELECT origin, vkeys, qpd, source, imported_at FROM imported_logs ORDER BY id',
  cosignedSizes: "SELECT origin, size FROM origins WHERE checkpoint <> ''",
};

/** Rows per import statement (bounded parameter arrays). */
const IMPORT_CHUNK = 5000;

export class PgCosignState implements CosignStateStorage {
  private readonly db: PgReader;

  constructor(db: PgReader) {
    this.db = db;
  }

  async getOrigin(origin: string): Promise<OriginState | undefined> {
    return originFromRow(origin, (await this.db.read<OriginRow>('getOrigin', SQL.getOrigin, [origin])).rows[0]);
  }

  /**
   * Compare-and-swap in one statement: PostgreSQL re-checks the WHERE clause against the latest
   * committed row after any concurrent update, so of several replicas racing from one stored size
   * exactly one wins. Also refuses a cosignature time below the stored one (times never go
   * backwards across replicas with skewed clocks; the cosign service retries with the new state).
   */
  async updateOrigin(expectedSize: number, next: OriginState): Promise<boolean> {
    const values = [
      next.origin,
      next.size,
      Buffer.from(next.root),
      next.checkpoint,
      next.cosignatures,
      next.lastTime,
      encodeKeySet(next.logKeys),
      next.cosignerSet === undefined ? null : Buffer.from(next.cosignerSet),
    ];
    const res =
      expectedSize === 0
        ? await this.db.read('createOrigin', SQL.createOrigin, values)
        : await this.db.read('updateOrigin', SQL.updateOrigin, [...values, expectedSize]);
    return res.rowCount === 1;
  }

  /**
   * A known hash costs one read. A new one: a transaction holding the origin's evidence lock
   * (replicas recording evidence for one origin take turns, so none overshoots the bound), then
   * insert and evict in one statement, then COMMIT.
   */
  async recordEvidence(
    e: Omit<EvidenceRecord, 'hash'> & { hash: Uint8Array },
    limit = EVIDENCE_LIMIT,
  ): Promise<{ added: boolean; evicted: number }> {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`evidence limit ${limit}: a positive integer is required`);
    const hash = Buffer.from(e.hash);
    if (((await this.db.read('hasEvidence', SQL.hasEvidence, [e.origin, hash])).rowCount ?? 0) > 0) return { added: false, evicted: 0 };
    return this.db.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1::integer, hashtext($2::text))', [EVIDENCE_LOCK, e.origin]);
      const row = (
        await query<{ added: number; evicted: number }>(client, 'evidence', SQL.evidence, [e.origin, hash, e.note, e.reason, e.at, limit])
      ).rows[0];
      return { added: row?.added === 1, evicted: row?.evicted ?? 0 };
    });
  }

  async listEvidence(origin: string): Promise<EvidenceRecord[]> {
    const res = await this.db.read<{ hash: Uint8Array | null; note: string; reason: string; at: number }>(
      'listEvidence',
      SQL.listEvidence,
      [origin],
    );
    return res.rows.map((r) => ({ origin, hash: r.hash === null ? undefined : toBytes(r.hash), note: r.note, reason: r.reason, at: r.at }));
  }

  async importLogs(logs: readonly ImportedLog[], emptyRoot: Uint8Array): Promise<string[]> {
    if (logs.length === 0) return [];
    const root = Buffer.from(emptyRoot);
    return this.db.transaction(async (client) => {
      const added: string[] = [];
      for (let i = 0; i < logs.length; i += IMPORT_CHUNK) {
        const chunk = logs.slice(i, i + IMPORT_CHUNK);
        const res = await query<{ origin: string }>(client, 'importLogs', SQL.importLogs, [
          chunk.map((l) => l.origin),
          chunk.map((l) => l.vkeys.join('\n')),
          chunk.map((l) => l.qpd),
          chunk.map((l) => l.source),
          chunk.map((l) => l.importedAt),
          root,
        ]);
        const fresh = new Set(res.rows.map((r) => r.origin));
        for (const l of chunk) if (fresh.has(l.origin)) added.push(l.origin);
      }
      return added;
    });
  }

  async setImportedQpd(changes: readonly { origin: string; qpd: number }[]): Promise<void> {
    if (changes.length === 0) return;
    await this.db.transaction(async (client) => {
      for (let i = 0; i < changes.length; i += IMPORT_CHUNK) {
        const chunk = changes.slice(i, i + IMPORT_CHUNK);
        await query(client, 'setImportedQpd', SQL.setImportedQpd, [chunk.map((c) => c.origin), chunk.map((c) => c.qpd)]);
      }
    });
  }

  async listImportedLogs(): Promise<ImportedLog[]> {
    type Row = { origin: string; vkeys: string; qpd: number; source: string; imported_at: number };
    const res = await this.db.read<Row>('listImports', SQL.listImports, []);
    return res.rows.map((r) => ({ origin: r.origin, vkeys: r.vkeys.split('\n'), qpd: r.qpd, source: r.source, importedAt: r.imported_at }));
  }

  async cosignedSizes(): Promise<Map<string, number>> {
    const res = await this.db.read<{ origin: string; size: number }>('cosignedSizes', SQL.cosignedSizes, []);
    return new Map(res.rows.map((r) => [r.origin, r.size]));
  }

  async originKeys(origins: readonly string[]): Promise<Map<string, StoredOriginKeys>> {
    const out = new Map<string, StoredOriginKeys>();
    for (let i = 0; i < origins.length; i += IMPORT_CHUNK) {
      type Row = { origin: string; log_keys: string | null; cosigned: boolean };
      const res = await this.db.read<Row>('originKeys', SQL.originKeys, [origins.slice(i, i + IMPORT_CHUNK)]);
      for (const r of res.rows) out.set(r.origin, { keys: decodeKeySet(r.log_keys), cosigned: r.cosigned });
    }
    return out;
  }

  async setOriginKeys(origin: string, keys: readonly string[]): Promise<boolean> {
    return (await this.db.read('setOriginKeys', SQL.setOriginKeys, [origin, keys.join('\n')])).rowCount === 1;
  }

  async forgetOrigin(origin: string): Promise<ForgottenOrigin> {
    type Row = { state: number; cosigned_size: number | null; evidence: number; imported: number };
    const r = (await this.db.read<Row>('forgetOrigin', SQL.forget, [origin])).rows[0]!;
    return { state: r.state === 1, cosignedSize: r.cosigned_size ?? undefined, evidence: r.evidence, imported: r.imported === 1 };
  }
}
