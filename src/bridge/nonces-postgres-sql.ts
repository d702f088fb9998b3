/**
 * The statements of the PostgreSQL nonce store (nonces-postgres.ts): its schema, and every query
 * on the database's clock (SPEC §7 rev 4) — the batched consume, the liveness read, the §7.2
 * floor raise with its nonce in one statement, the floor read and the purge.
 */
import { POSTGRES_KEL_TIPS_SCHEMA } from './kel-tips.ts';

export const SCHEMA_VERSION = 1;
export const MIGRATION_LOCK = 0x5442_4d49; // "TBMI"

export const SCHEMA = `CREATE TABLE IF NOT EXISTS tb_meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS tb_nonces (key text PRIMARY KEY, expires_at bigint NOT NULL);
CREATE INDEX IF NOT EXISTS tb_nonces_by_expiry ON tb_nonces (expires_at);
${POSTGRES_KEL_TIPS_SCHEMA}
CREATE TABLE IF NOT EXISTS tb_anchor_floor (seed text PRIMARY KEY, idx bigint NOT NULL, head text NOT NULL, updated_at bigint NOT NULL);`;

/**
 * The database's clock in unix ms, as the first CTE `c(now_ms)` of a statement. Parameter `$n` is
 * null in production (the server's `now()`); tests may send a value that stands in for it.
 */
export const dbNow = (n: number): string =>
  `c AS (SELECT COALESCE($${n}::bigint, floor(extract(epoch FROM now()) * 1000)::bigint) AS now_ms)`;

/**
 * The §7.2 floor rule, shared by the token commit and POST /anchor-floor: a seed's row moves only
 * ahead (same head: to the higher index; another head: only past the floor's index), never lower.
 * It follows `INSERT INTO tb_anchor_floor AS t (seed, idx, head, updated_at) SELECT …`.
 */
const FLOOR_RAISE = `ON CONFLICT (seed) DO UPDATE
                     SET idx = greatest(t.idx, excluded.idx),
                         head = CASE WHEN excluded.idx > t.idx THEN excluded.head ELSE t.head END,
                         updated_at = CASE WHEN excluded.idx > t.idx THEN excluded.updated_at ELSE t.updated_at END
                     WHERE t.head = excluded.head OR excluded.idx > t.idx`;

export const Q = {
  // $1 keys (sorted, distinct), $2 their iats, $3 the iat skew (s), $4 the minimum retention (s).
  // A key with a fresh iat is inserted, or replaces an expired row; a returned key is accepted.
  consume: `WITH ${dbNow(5)},
            fresh AS (SELECT t.key, t.iat FROM unnest($1::text[], $2::bigint[]) AS t(key, iat), c
                      WHERE abs(t.iat - c.now_ms / 1000) <= $3::bigint),
            ins AS (INSERT INTO tb_nonces AS n (key, expires_at)
                      SELECT f.key, greatest((f.iat + $3::bigint + 1) * 1000, c.now_ms + $4::bigint * 1000)
                      FROM fresh f, c ORDER BY f.key
                    ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at
                      WHERE n.expires_at <= (SELECT now_ms FROM c)
                    RETURNING n.key)
            SELECT f.key, f.key IN (SELECT key FROM ins) AS inserted FROM fresh f`,
  // For keys that did not fit the capacity (stale, held by a live row: replayed, or full), and peek.
  // `now_ms`: the database's clock of this statement (the freshness gate's G4 reads it with peek).
  live: `WITH ${dbNow(4)}
         SELECT t.key, c.now_ms, abs(t.iat - c.now_ms / 1000) > $3::bigint AS stale,
                EXISTS (SELECT 1 FROM tb_nonces n WHERE n.key = t.key AND n.expires_at > c.now_ms) AS live
         FROM unnest($1::text[], $2::bigint[]) AS t(key, iat), c`,
  // SPEC §7.2 commit, one statement: the floor raise and the nonce together, or neither.
  // $1 key, $2 iat, $3 skew (s), $4 retention (s), $5 db clock, $6 seed, $7 idx, $8 head, $9 floor cap.
  // `ok`: the proof is fresh, its nonce not live, and the seed has a row or there is room for one.
  // `fl`: the upsert is the arbiter between replicas: it locks the seed's row and moves it only
  // ahead (same head: to the higher index; another head: only past the floor's index). No row back:
  // superseded. The nonce goes in only when the floor took the raise (or already held it).
  consumeRaise: `WITH ${dbNow(5)},
            r AS (SELECT CASE WHEN EXISTS (SELECT 1 FROM tb_anchor_floor WHERE seed = $6) THEN true
                              ELSE (SELECT count(*) FROM tb_anchor_floor) < $9::bigint END AS room),
            ok AS (SELECT 1 FROM c
                   WHERE abs($2::bigint - c.now_ms / 1000) <= $3::bigint
                     AND NOT EXISTS (SELECT 1 FROM tb_nonces n WHERE n.key = $1 AND n.expires_at > c.now_ms)
                     AND (SELECT room FROM r)),
            fl AS (INSERT INTO tb_anchor_floor AS t (seed, idx, head, updated_at)
                     SELECT $6, $7::bigint, $8, c.now_ms FROM c, ok
                   ${FLOOR_RAISE}
                   RETURNING t.idx),
            ins AS (INSERT INTO tb_nonces AS n (key, expires_at)
                      SELECT $1, greatest(($2::bigint + $3::bigint + 1) * 1000, c.now_ms + $4::bigint * 1000) FROM c
                      WHERE EXISTS (SELECT 1 FROM fl)
                    ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE n.expires_at <= (SELECT now_ms FROM c)
                    RETURNING 1)
            SELECT abs($2::bigint - c.now_ms / 1000) > $3::bigint AS stale,
                   EXISTS (SELECT 1 FROM tb_nonces n WHERE n.key = $1 AND n.expires_at > c.now_ms) AS live,
                   (SELECT room FROM r) AS room_ok,
                   EXISTS (SELECT 1 FROM fl) AS floor_ok,
                   EXISTS (SELECT 1 FROM ins) AS inserted
            FROM c`,
  // POST /anchor-floor: floor := max(floor, raise), on the database's clock. $1 seed, $2 idx, $3 head, $4 db clock, $5 cap.
  raiseFloor: `WITH ${dbNow(4)},
            room AS (SELECT 1 WHERE CASE WHEN EXISTS (SELECT 1 FROM tb_anchor_floor WHERE seed = $1) THEN true
                                         ELSE (SELECT count(*) FROM tb_anchor_floor) < $5::bigint END),
            fl AS (INSERT INTO tb_anchor_floor AS t (seed, idx, head, updated_at)
                     SELECT $1, $2::bigint, $3, c.now_ms FROM c, room
                   ${FLOOR_RAISE}
                   RETURNING t.idx, t.head)
            SELECT EXISTS (SELECT 1 FROM room) AS room_ok, (SELECT idx FROM fl) AS idx, (SELECT head FROM fl) AS head`,
  floor: 'SELECT idx, head FROM tb_anchor_floor WHERE seed = $1',
  // The outer SELECT sees the table as it was before the DELETE: subtract what it removed.
  purge: `WITH ${dbNow(1)}, d AS (DELETE FROM tb_nonces WHERE expires_at <= (SELECT now_ms FROM c) RETURNING 1)
          SELECT (SELECT count(*) FROM tb_nonces) - (SELECT count(*) FROM d) AS n, (SELECT now_ms FROM c) AS now_ms`,
};
