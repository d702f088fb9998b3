// SPEC §1.2: a store written before the key history existed (the schema before the witness_keys
// migration, both drivers) opens under this build with its bound key as the current witness key:
// the node starts with the same --key (no store_identity_mismatch), its log and anchors are kept,
// GET /v1/key-rotation is empty, another --key is still refused, and a rotation can be announced.
// The old store is the one this build writes, taken back to the earlier schema: the rotation
// migration only added tables, so dropping them and the version is exactly what it upgraded.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { encodeAnchor } from '../../src/anchor/codec.ts';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { MIGRATIONS as PG_MIGRATIONS } from '../../src/store/postgres/schema.ts';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../src/store/sqlite/schema.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { pgSkip, startPgServer, type PgServer } from '../helpers/pg-server.ts';
import { tempDir } from '../helpers/tmp.ts';
import { get, post, startTestWitness } from '../helpers/witness.ts';

const party = edParty(0x09);
const REGISTRY = { parties: [{ id: 'EAlice', keys: [{ curve: 'ed25519', public_key: encodeHex(party.publicKey) }] }] };
const K1 = encodeHex(ed25519PublicKeyBytes(ed25519KeyFromSeed(fill(0x01))));
const K2 = encodeHex(ed25519PublicKeyBytes(ed25519KeyFromSeed(fill(0x02))));
const anchorAt = (index: number) =>
  signAnchor(party, { seedId: fill(0x66), index, head: fill(index), cumulative: BigInt(index), timestamp: 1_700_000_000 + index });

/** The schema version before the key history: the index of the witness_keys migration. */
const beforeRotation = (migrations: readonly string[]): number => {
  const i = migrations.findIndex((m) => m.includes('CREATE TABLE witness_keys'));
  assert.ok(i > 0, 'the key-history migration exists');
  return i;
};

/**
 * The statements that take a store back from this build's schema to `version`: the tables the
 * later migrations created (they only create tables; a later ALTER would need its own undoing).
 */
function downgradeTo(migrations: readonly string[], version: number): string {
  const later = migrations.slice(version);
  for (const m of later) assert.doesNotMatch(m, /ALTER TABLE/, 'downgradeTo undoes CREATE TABLE only: extend it');
  return later.flatMap((m) => [...m.matchAll(/CREATE TABLE (\w+)/g)].map((x) => `DROP TABLE ${x[1]!};`)).join(' ');
}

const skipPg = pgSkip();
let server: PgServer | undefined;
before(async () => {
  if (skipPg === false) server = await startPgServer();
});
after(async () => {
  await server?.stop();
});

async function upgradeScenario(dir: string, store: string | undefined, downgrade: () => Promise<void>): Promise<void> {
  const base = { allowUnderivedSeeds: true, ...(store === undefined ? {} : { store }) };
  let w = await startTestWitness(dir, REGISTRY, base);
  const r1 = await post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(anchorAt(1)), party: { agent: 'EAlice' } });
  assert.equal(r1.status, 200, r1.text);
  const note = (await get(`${w.url}/log/checkpoint`)).text;
  await w.close();
  await downgrade();

  // The same --key opens the old store: its key is the current one, nothing else recorded.
  w = await startTestWitness(dir, REGISTRY, base);
  try {
    assert.deepEqual(
      (await w.store.keyHistory()).map((r) => [r.key, r.state]),
      [[K1, 'current']],
    );
    assert.deepEqual(((await get(`${w.url}/v1/key-rotation`)).body as { items: unknown[] }).items, []);
    assert.equal((await get(`${w.url}/log/checkpoint`)).text, note, 'the log is kept');
    const replay = await post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(anchorAt(1)), party: { agent: 'EAlice' } });
    assert.equal((replay.body as { replay: boolean }).replay, true, 'the anchor is kept');
    assert.equal((await get(`${w.url}/ready`)).status, 200);
  } finally {
    await w.close();
  }
  // Another key is still refused; a rotation can be announced from the upgraded history.
  const k2 = join(dir, 'k2.pem');
  writeNewKeyFile(k2, ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(0x02))));
  await assert.rejects(startTestWitness(dir, REGISTRY, { ...base, keyFile: k2 }), { code: 'store_identity_mismatch' });
  w = await startTestWitness(dir, REGISTRY, { ...base, nextKeyFile: k2 });
  try {
    const items = ((await get(`${w.url}/v1/key-rotation`)).body as { items: { stage: string; old: string; new: string }[] }).items;
    assert.deepEqual(
      items.map((e) => [e.stage, e.old, e.new]),
      [['announce', K1, K2]],
    );
  } finally {
    await w.close();
  }
}

void test('SQLite: a store from before the key history opens with its key as current and can rotate', async () => {
  const { dir, cleanup } = tempDir('aw-rotation-upgrade-');
  after(cleanup);
  const version = beforeRotation(SQLITE_MIGRATIONS);
  await upgradeScenario(dir, undefined, () => {
    const db = new Database(join(dir, 'data', 'witness.db'));
    try {
      db.exec(downgradeTo(SQLITE_MIGRATIONS, version));
      db.pragma(`user_version = ${version}`);
    } finally {
      db.close();
    }
    return Promise.resolve();
  });
});

void test('PostgreSQL: a store from before the key history opens with its key as current and can rotate', { skip: skipPg }, async () => {
  const { dir, cleanup } = tempDir('aw-rotation-upgrade-pg-');
  after(cleanup);
  const store = await server!.createDatabase('upgrade');
  const version = beforeRotation(PG_MIGRATIONS);
  await upgradeScenario(dir, store, async () => {
    const c = new pg.Client({ connectionString: store });
    await c.connect();
    try {
      await c.query(downgradeTo(PG_MIGRATIONS, version));
      await c.query('UPDATE aw_schema SET version = $1', [version]);
    } finally {
      await c.end();
    }
  });
});
