// `anchor-witness kel init | rotate | delegate` (docs/registry.md, "Test KELs"): an operator makes
// and rotates test KELs in a dir: source without KERI tooling, and `kel verify` (the witness's own
// rules) accepts what they wrote.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_KEL_LIMITS } from '../../src/keri/index.ts';
import { readKelDirectory } from '../../src/registry/dir-source.ts';
import { delegateKel, initKel, kelFile, kelKeysFile, rotateKel } from '../../src/cli/kel-author.ts';
import { verifyKelPaths } from '../../src/cli/kel-commands.ts';
import { KelToolError } from '../../src/cli/errors.ts';
import { commitmentTo, ed25519Signer } from '../../src/keri/build.ts';
import { tempDir } from '../helpers/tmp.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'anchor-witness.js');
const run = promisify(execFile);

async function lineOf(kels: string, prefix: string) {
  const lines = await verifyKelPaths([kels], DEFAULT_KEL_LIMITS);
  const l = lines.find((x) => x.prefix === prefix);
  assert.ok(l !== undefined, `${prefix} not read from the dir: source`);
  return l;
}

void test('kel init: a KEL the dir: source reads and kel verify accepts; its seeds in a 0600 key file', async () => {
  const { dir, cleanup } = tempDir('aw-kel-init-');
  try {
    const kels = join(dir, 'kels');
    const keys = join(dir, 'keys');
    const { stdout } = await run(process.execPath, [BIN, 'kel', 'init', '--dir', kels, '--keys', keys]);
    const c = JSON.parse(stdout) as { prefix: string; id: string; public_key: string; kel_file: string; keys_file: string };
    assert.equal(c.id, `did:keri:${c.prefix}`);
    assert.equal(c.kel_file, kelFile(kels, c.prefix));
    assert.equal(statSync(c.keys_file).mode & 0o777, 0o600);
    assert.equal(statSync(keys).mode & 0o777, 0o700);
    const seeds = (JSON.parse(readFileSync(c.keys_file, 'utf8')) as { seeds: string[] }).seeds;
    assert.ok(!readFileSync(c.kel_file, 'utf8').includes(seeds[0]!), 'no seed in the KEL');
    const read = await readKelDirectory(kels, DEFAULT_KEL_LIMITS);
    assert.deepEqual([...read.kels.keys()], [c.prefix]);
    const l = await lineOf(kels, c.prefix);
    assert.equal(l.status, 'accepted');
    assert.deepEqual(l.keys, [{ curve: 'ed25519', public_key: c.public_key }]);
    const v = await run(process.execPath, [BIN, 'kel', 'verify', kels]);
    assert.match(v.stdout, /"status":"accepted"/);

    // the seeds never go into the source
    await assert.rejects(
      run(process.execPath, [BIN, 'kel', 'init', '--dir', kels, '--keys', kels]),
      (e: { code: number; stderr: string }) => {
        assert.equal(e.code, 1);
        assert.match(e.stderr, /--keys .* is the dir: source itself/);
        return true;
      },
    );
  } finally {
    cleanup();
  }
});

void test('kel rotate: the committed next key becomes current, kel verify accepts; seeds are never regenerated', async () => {
  const { dir, cleanup } = tempDir('aw-kel-rot-');
  try {
    const kels = join(dir, 'kels');
    const keys = join(dir, 'keys');
    mkdirSync(kels);
    mkdirSync(keys, { mode: 0o700 });
    const first = initKel(kels, keys);
    const r1 = rotateKel(kels, keys, first.prefix);
    assert.equal(r1.s, 1);
    assert.notEqual(r1.public_key, first.public_key);
    let l = await lineOf(kels, first.prefix);
    assert.equal(l.status, 'accepted');
    assert.equal(l.s, 1);
    assert.deepEqual(l.keys, [{ curve: 'ed25519', public_key: r1.public_key }]);
    const r2 = rotateKel(kels, keys, first.prefix);
    l = await lineOf(kels, first.prefix);
    assert.deepEqual([l.status, l.s, l.keys[0]!.public_key], ['accepted', 2, r2.public_key]);

    // an interrupted rotation (new seed written, KEL not yet) leaves a spare seed: the next rotation uses it
    const keyFile = kelKeysFile(keys, first.prefix);
    const doc = JSON.parse(readFileSync(keyFile, 'utf8')) as { seeds: string[] };
    const spare = 'ab'.repeat(32);
    doc.seeds.push(spare);
    writeFileSync(keyFile, JSON.stringify(doc));
    rotateKel(kels, keys, first.prefix);
    const after = (JSON.parse(readFileSync(keyFile, 'utf8')) as { seeds: string[] }).seeds;
    assert.deepEqual(after, doc.seeds, 'no seed generated: the spare is the new next key');
    const last = JSON.parse(readFileSync(kelFile(kels, first.prefix), 'utf8')) as { events: { n: string[] }[] };
    assert.equal(last.events.at(-1)!.n[0], commitmentTo(ed25519Signer(Buffer.from(spare, 'hex'))));
    assert.equal((await lineOf(kels, first.prefix)).status, 'accepted');

    // a key file that holds neither the current nor the next key: refused, nothing written
    const before = readFileSync(kelFile(kels, first.prefix), 'utf8');
    writeFileSync(keyFile, JSON.stringify({ ...doc, seeds: ['01'.repeat(32), '02'.repeat(32)] }));
    assert.throws(
      () => rotateKel(kels, keys, first.prefix),
      (e: unknown) => e instanceof KelToolError && e.code === 'kel_keys_mismatch',
    );
    assert.equal(readFileSync(kelFile(kels, first.prefix), 'utf8'), before);
    // a group-readable key file is refused like any key file
    chmodSync(keyFile, 0o640);
    assert.throws(() => rotateKel(kels, keys, first.prefix), /accessible by group or others/);
    // no key file at all
    renameSync(keyFile, `${keyFile}.away`);
    assert.throws(
      () => rotateKel(kels, keys, first.prefix),
      (e: unknown) => e instanceof KelToolError && e.code === 'kel_keys_missing',
    );
  } finally {
    cleanup();
  }
});

void test('kel delegate: the agent is accepted with its delegator, whose KEL carries the seal; a rotation is anchored too', async () => {
  const { dir, cleanup } = tempDir('aw-kel-dip-');
  try {
    const kels = join(dir, 'kels');
    const keys = join(dir, 'keys');
    mkdirSync(kels);
    mkdirSync(keys, { mode: 0o700 });
    const root = initKel(kels, keys);
    const agent = delegateKel(kels, keys, root.prefix);
    assert.equal(agent.delegator, root.prefix);
    assert.deepEqual(agent.anchored_by, { prefix: root.prefix, s: 1, d: agent.anchored_by!.d });
    const rootDoc = JSON.parse(readFileSync(kelFile(kels, root.prefix), 'utf8')) as { events: { t: string; a?: unknown[] }[] };
    assert.deepEqual(rootDoc.events[1]!.a, [{ i: agent.prefix, s: '0', d: agent.d }]);
    let a = await lineOf(kels, agent.prefix);
    assert.deepEqual([a.status, a.delegator, a.keys[0]!.public_key], ['accepted', root.prefix, agent.public_key]);
    assert.equal((await lineOf(kels, root.prefix)).status, 'accepted');

    // a delegated rotation, anchored at once because the delegator's keys are here
    const rot = rotateKel(kels, keys, agent.prefix);
    assert.equal(rot.anchored_by?.prefix, root.prefix);
    a = await lineOf(kels, agent.prefix);
    assert.deepEqual([a.status, a.s, a.keys[0]!.public_key], ['accepted', 1, rot.public_key]);

    // without the delegator's keys the drt stays unanchored: the old key stays current
    renameSync(kelKeysFile(keys, root.prefix), join(dir, 'root-keys-elsewhere'));
    const pending = rotateKel(kels, keys, agent.prefix);
    assert.equal(pending.anchored_by, null);
    a = await lineOf(kels, agent.prefix);
    assert.equal(a.keys[0]!.public_key, rot.public_key, 'the unanchored drt does not make its key current');

    // a delegator without a key file here cannot delegate
    assert.throws(
      () => delegateKel(kels, keys, root.prefix),
      (e: unknown) => e instanceof KelToolError && e.code === 'kel_keys_missing',
    );
  } finally {
    cleanup();
  }
});
