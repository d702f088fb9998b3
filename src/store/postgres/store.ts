/**
 * The PostgreSQL driver of the witness store (`pg`, pooled): several witness replicas with the same
 * identity share one database (docs/scale-out.md). Declares `multiWriter`: caches of committed
 * mutable state are invalid with it.
 *
 * Connections: a read pool (reads, cosign CAS, evidence) and the sequencer's own connection, so a
 * batch never queues behind the previous batch's reads. Write transactions: transaction.ts.
 * Schema and migrations: schema.ts. Failures map to StoreUnavailableError (db.ts).
 */
import pg from 'pg';
import type { PoolClient } from 'pg';
import { StoreOpenError, StoreUnavailableError } from '../errors.ts';
import { Mutex } from '../mutex.ts';
import { bindWitnessKey } from '../key-binding.ts';
import type { StoreCapabilities, StoreIdentity, StoreTransaction, KeyRotationRecord, WitnessKeyRecord, WitnessStore } from '../types.ts';
import { PgAnchorState, PgAnchorTx } from './anchor-state.ts';
import { PgCosignState } from './cosign-state.ts';
import { createPools, describe, mapPgError, PgReader, query, redact, type PostgresStoreOptions } from './db.ts';
import { PgLog } from './log.ts';
import { PgLogWitness } from './log-witness.ts';
import { PgKelLedger, PgKelLedgerTx } from './kel-ledger.ts';
import { pgKeyHistory, PgKeyHistoryTx, pgKeyRotations, pgPutWitnessCosignature, pgWitnessCosignature } from './key-history.ts';
import { checkAndMigrate } from './schema.ts';
import { flush, logTxFromBegin, writeTransaction } from './transaction.ts';

export { mapPgError, type PostgresStoreOptions } from './db.ts';
export { MIGRATIONS, PG_SCHEMA_VERSION } from './schema.ts';

const META = {
  get: 'SELECT value FROM meta WHERE key = $1',
  set: 'INSERT INTO meta (key, value) VALUES ($1, $2)',
};

export class PostgresStore implements WitnessStore {
  readonly capabilities: StoreCapabilities = { multiWriter: true };
  readonly log: PgLog;
  readonly anchors: PgAnchorState;
  readonly cosign: PgCosignState;
  readonly logWitness: PgLogWitness;
  readonly kelLedger: PgKelLedger;
  private readonly db: PgReader;
  /** The sequencer's own connection. */
  private readonly writer: pg.Pool;
  private readonly writeMutex = new Mutex();

  private constructor(pool: pg.Pool, writer: pg.Pool) {
    this.db = new PgReader(pool);
    this.writer = writer;
    this.log = new PgLog(this.db);
    this.anchors = new PgAnchorState(this.db);
    this.cosign = new PgCosignState(this.db);
    this.logWitness = new PgLogWitness(this.db);
    this.kelLedger = new PgKelLedger(this.db);
  }

  /** Connect, check the server's durability settings, apply pending migrations (serialized across replicas). */
  static async open(options: PostgresStoreOptions | string): Promise<PostgresStore> {
    const o: PostgresStoreOptions = typeof options === 'string' ? { url: options } : options;
    const { pool, writer } = createPools(o);
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
      await checkAndMigrate(client, where);
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
    await this.withWriter((client) =>
      writeTransaction(client, async () => {
        const fields: [keyof StoreIdentity, string][] = [
          ['name', 'name'],
          ['logOrigin', 'log_origin'],
        ];
        for (const [field, key] of fields) {
          const stored = (await query<{ value: string }>(client, 'getMeta', META.get, [key])).rows[0]?.value;
          if (stored === undefined) await query(client, 'setMeta', META.set, [key, id[field]]);
          else if (stored !== id[field]) {
            throw new StoreOpenError(
              'store_identity_mismatch',
              `the store is bound to ${key} ${JSON.stringify(stored)}, not ${JSON.stringify(id[field])}`,
            );
          }
        }
        await bindWitnessKey(new PgKeyHistoryTx(client), id.witnessKey, async () => {
          const stored = (await query<{ value: string }>(client, 'getMeta', META.get, ['witness_key'])).rows[0]?.value;
          if (stored === undefined) await query(client, 'setMeta', META.set, ['witness_key', id.witnessKey]);
        });
      }),
    );
  }

  keyHistory(): Promise<WitnessKeyRecord[]> {
    return pgKeyHistory(this.db);
  }

  keyRotations(): Promise<KeyRotationRecord[]> {
    return pgKeyRotations(this.db);
  }

  witnessCosignature(leafIndex: number, key: string): Promise<Uint8Array | undefined> {
    return pgWitnessCosignature(this.db, leafIndex, key);
  }

  putWitnessCosignature(leafIndex: number, key: string, signature: Uint8Array): Promise<Uint8Array> {
    return pgPutWitnessCosignature(this.db, leafIndex, key, signature);
  }

  transaction<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    return this.withWriter((client) =>
      writeTransaction(client, async (begin) => {
        const log = logTxFromBegin(client, begin);
        const anchors = new PgAnchorTx(client);
        const result = await fn({ log, anchors, kel: new PgKelLedgerTx(client), keys: new PgKeyHistoryTx(client) });
        await flush(client, log, anchors);
        return result;
      }),
    );
  }

  /** The sequencer's connection, one transaction at a time per replica. */
  private withWriter<T>(body: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.writeMutex.run(async () => {
      if (this.db.closed) throw new StoreUnavailableError('store: closed');
      let client: PoolClient;
      try {
        client = await this.writer.connect();
      } catch (e) {
        throw mapPgError(e);
      }
      return body(client);
    });
  }

  async close(): Promise<void> {
    if (this.db.closed) return;
    await this.writeMutex.run(() => {
      this.db.closed = true;
      return Promise.resolve();
    });
    await this.db.pool.end().catch(() => undefined);
    await this.writer.end().catch(() => undefined);
  }
}
