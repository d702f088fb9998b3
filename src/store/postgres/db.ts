/**
 * The PostgreSQL store's connections (`pg`): pool configuration, named-statement queries, and the
 * mapping of driver faults to StoreUnavailableError. Connection loss, timeouts, a read-only
 * (standby) server, lock timeouts and server shutdown are `store_unavailable` (HTTP 503); the pool
 * drops broken connections and reconnects on the next request. Integrity and syntax errors are not
 * mapped: they mean a bug, not an outage.
 */
import pg from 'pg';
import type { PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { ProtocolError } from '../../errors.ts';
import { StoreUnavailableError } from '../errors.ts';

/**
 * SQLSTATE classes that mean "the database cannot serve this now": connection exceptions (08),
 * transaction rollback (40: serialization, deadlock), insufficient resources (53), operator
 * intervention (57: shutdown, statement timeout), system errors (58), plus lock timeout (55P03),
 * a read-only server such as a standby (25006), idle-in-transaction timeout (25P03), a missing
 * database (3D000) and authentication (28).
 */
const UNAVAILABLE_SQLSTATE = /^(?:08|28|40|53|57|58)|^(?:55P03|25006|25P03|3D000)$/;

export function describe(e: unknown): string {
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

const types = new pg.TypeOverrides();
// int8 → number: sizes, indices and times are safe integers (trees hold < 2^53 entries).
types.setTypeParser(20, (v: string) => Number(v));

/** The read pool (reads, cosign CAS, evidence) and the sequencer's own single connection. */
export function createPools(o: PostgresStoreOptions): { pool: pg.Pool; writer: pg.Pool } {
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
  return { pool, writer };
}

/** A named statement (prepared once per connection); driver faults mapped. */
export async function query<R extends QueryResultRow>(
  client: pg.Pool | PoolClient,
  name: string,
  text: string,
  values: unknown[],
): Promise<QueryResult<R>> {
  const config: QueryConfig = { name: `aw_${name}`, text, values };
  try {
    return await client.query<R>(config);
  } catch (e) {
    throw mapPgError(e);
  }
}

/** The read pool plus the closed flag every concern checks, and short transactions on that pool. */
export class PgReader {
  readonly pool: pg.Pool;
  closed = false;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  read<R extends QueryResultRow>(name: string, text: string, values: unknown[]): Promise<QueryResult<R>> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('store: closed'));
    return query<R>(this.pool, name, text, values);
  }

  /**
   * Run `fn` in one transaction on a pooled connection: BEGIN, `fn`, COMMIT. On any failure,
   * ROLLBACK (a connection that cannot roll back is gone: it is dropped from the pool) and rethrow
   * mapped. Not the sequencer's write transaction (transaction.ts): no lock is taken here.
   */
  async transaction<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    if (this.closed) throw new StoreUnavailableError('store: closed');
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw mapPgError(err);
    }
    let broken = false;
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      try {
        await client.query('ROLLBACK');
      } catch {
        broken = true;
      }
      throw mapPgError(err);
    } finally {
      client.release(broken);
    }
  }
}

/** The URL without its password, for messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}
