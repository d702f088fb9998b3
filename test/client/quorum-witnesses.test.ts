// Issue 25 item 11 (SPEC §4.1 rev 4): a quorum counts WITNESSES, never keys, on every client
// surface — the verifier core (src/verify) under node:crypto and WebCrypto, `verify cosignature`
// and `monitor --log-quorum`. The reproduction: one witness, w2.example, holds an
// Ed25519 cosignature/v1 key and an ML-DSA-44 subtree/v1 key and signs the log's checkpoint with
// both; with cosigners {w2 (both keys), w3} and quorum 2 that is ONE vote, so the checkpoint lacks
// the quorum (before the fix: two keys verified, quorum met, "cosigned by w2.example, w2.example").
// One key given under two names stays a usage error everywhere.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeCryptoBackend } from '../../src/client/node-crypto.ts';
import { withBackend } from '../helpers/crypto-backends.ts';
import { emptyMonitorState, monitorPoll, type MonitorConfig } from '../../src/client/monitor.ts';
import { ed25519KeyFromSeed } from '../../src/crypto/ed25519.ts';
import { mlDsa44KeyFromSeed, mlDsa44PublicKeyBytes, mlDsa44Supported } from '../../src/crypto/ml-dsa.ts';
import { SIG_TYPE_ED25519, SIG_TYPE_SUBTREE_V1, type NoteVerifier } from '../../src/note/signed-note.ts';
import { ed25519NoteSigner, formatVkey, parseVkey } from '../../src/note/vkey.ts';
import { noteKeyFromVkey, verifyCosignedCheckpoint as verifyAsync } from '../../src/verify/note.ts';
import { fill } from '../helpers/anchors.ts';
import { runClientCli } from '../helpers/client-cli-run.ts';
import { FakeWitnessServer } from '../helpers/fake-witness-server.ts';
import { appendLeaf, checkpointNote, fakeWitness } from '../helpers/malicious-witness.ts';
import { tempDir } from '../helpers/tmp.ts';
import { ed25519Cosigner, mlDsa44Cosigner } from '../../src/note/cosigner.ts';

const T0 = 1_700_000_000;
const http = { timeoutMs: 5000, retries: 0 };
const tmp = tempDir('aw-quorum-witnesses-');
const servers: FakeWitnessServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  tmp.cleanup();
});
const skip = mlDsa44Supported() ? false : 'this Node has no ML-DSA-44';

/** The log, its witnessed checkpoints and the cosigner vkeys of the reproduction. */
function scenario() {
  const log = fakeWitness({ seed: 0x71, name: 'qw.test' });
  for (let i = 0; i < 4; i++) appendLeaf(log, fill(i, 8));
  const w2ed = ed25519Cosigner('w2.example', ed25519KeyFromSeed(fill(0xa2))).noteSigner(T0 + 5);
  const w2pq = mlDsa44KeyFromSeed(fill(0xa3));
  const w2pqVkey = formatVkey('w2.example', SIG_TYPE_SUBTREE_V1, mlDsa44PublicKeyBytes(w2pq));
  const w3 = ed25519Cosigner('w3.example', ed25519KeyFromSeed(fill(0xa4))).noteSigner(T0 + 6);
  const logSigner = ed25519NoteSigner(log.origin, log.key);
  const byW2 = checkpointNote(log, 4, [logSigner, w2ed]);
  const text = byW2.slice(0, byW2.indexOf('\n\n') + 1);
  const w2pqLine = mlDsa44Cosigner('w2.example', w2pq)
    .noteSigner(T0 + 7)
    .line(text);
  return {
    log,
    logVkey: formatVkey(log.origin, SIG_TYPE_ED25519, log.publicKey),
    /** Both of w2's lines, nobody else's: one witness. */
    oneWitness: byW2 + w2pqLine,
    /** w2's two lines and w3's: two witnesses. */
    twoWitnesses: checkpointNote(log, 4, [logSigner, w2ed, w3]) + w2pqLine,
    vkeys: { w2ed: w2ed.verifier.vkey, w2pq: w2pqVkey, w3: w3.verifier.vkey },
  };
}

const verifiers = (vkeys: readonly string[]): NoteVerifier[] => vkeys.map(parseVkey);
/** The same verifier core over node:crypto, with keys parsed by the server's vkey parser (what the CLI does). */
const verifyNode = (note: string, opts: Parameters<typeof verifyAsync>[1]) =>
  withBackend(nodeCryptoBackend(), () => verifyAsync(note, opts));

void test(
  'issue 25 item 11: one witness with Ed25519 + ML-DSA-44 keys is one vote — the verifier core refuses quorum 2 under both crypto backends',
  { skip },
  async () => {
    const s = scenario();
    const all = [s.vkeys.w2ed, s.vkeys.w2pq, s.vkeys.w3];
    // node:crypto backend, keys parsed as the CLI parses them: 1 of 2, w3 missing.
    await assert.rejects(verifyNode(s.oneWitness, { cosigners: verifiers(all), log: verifiers([s.logVkey]), quorum: 2 }), {
      code: 'cosignature_missing',
      message: /1 of 2 required cosignatures \(missing: w3\.example\)/,
    });
    // WebCrypto backend, keys from the SDK's noteKeyFromVkey: the same verdict.
    const keys = await Promise.all(all.map(noteKeyFromVkey));
    const logKey = await noteKeyFromVkey(s.logVkey);
    await assert.rejects(verifyAsync(s.oneWitness, { cosigners: keys, log: [logKey], quorum: 2 }), {
      code: 'cosignature_missing',
      message: /1 of 2 required cosignatures \(missing: w3\.example\)/,
    });
    // Two witnesses meet it; each is listed once, with the time of its first verified line.
    const sync = await verifyNode(s.twoWitnesses, { cosigners: verifiers(all), log: verifiers([s.logVkey]), quorum: 2 });
    assert.deepEqual(sync.cosigners, [
      { name: 'w2.example', timestamp: BigInt(T0 + 5) },
      { name: 'w3.example', timestamp: BigInt(T0 + 6) },
    ]);
    const async_ = await verifyAsync(s.twoWitnesses, { cosigners: keys, log: [logKey], quorum: 2 });
    assert.deepEqual(async_.cosigners, sync.cosigners);
    // Without a quorum every witness is required (w2's two keys: one witness, its two lines: one vote).
    assert.equal((await verifyNode(s.twoWitnesses, { cosigners: verifiers(all) })).cosigners.length, 2);
    await assert.rejects(verifyNode(s.oneWitness, { cosigners: verifiers(all) }), { code: 'cosignature_missing' });
    // With only w2's keys there is one witness: quorum 2 is out of range (usage), quorum 1 is met once.
    const w2Only = verifiers([s.vkeys.w2ed, s.vkeys.w2pq]);
    await assert.rejects(verifyNode(s.oneWitness, { cosigners: w2Only, quorum: 2 }), { code: 'usage', message: /1\.\.1/ });
    await assert.rejects(verifyAsync(s.oneWitness, { cosigners: keys.slice(0, 2), quorum: 2 }), { code: 'usage' });
    assert.deepEqual(
      (await verifyNode(s.oneWitness, { cosigners: w2Only, quorum: 1 })).cosigners.map((c) => c.name),
      ['w2.example'],
    );
  },
);

void test(
  'issue 25 item 11: one key under two names is a usage error under both crypto backends (Ed25519 and ML-DSA-44 keys)',
  { skip },
  async () => {
    const s = scenario();
    const renamed = (vkey: string, name: string): string => {
      const v = parseVkey(vkey);
      return formatVkey(name, v.type, v.publicKey);
    };
    for (const alias of [renamed(s.vkeys.w3, 'w3-alias.example'), renamed(s.vkeys.w2pq, 'w2-alias.example')]) {
      const given = [s.vkeys.w2ed, s.vkeys.w2pq, s.vkeys.w3, alias];
      await assert.rejects(verifyNode(s.twoWitnesses, { cosigners: verifiers(given), quorum: 2 }), {
        code: 'usage',
        message: /under two names/,
      });
      await assert.rejects(verifyAsync(s.twoWitnesses, { cosigners: await Promise.all(given.map(noteKeyFromVkey)), quorum: 2 }), {
        code: 'usage',
        message: /under two names/,
      });
    }
  },
);

void test(
  'issue 25 item 11: `verify cosignature --quorum 2` refuses one witness’s two lines and names each cosigner once',
  { skip },
  async () => {
    const s = scenario();
    const one = join(tmp.dir, 'one-witness.txt');
    const two = join(tmp.dir, 'two-witnesses.txt');
    writeFileSync(one, s.oneWitness);
    writeFileSync(two, s.twoWitnesses);
    const vkeys = ['--vkey', s.vkeys.w2ed, '--vkey', s.vkeys.w2pq, '--vkey', s.vkeys.w3];
    const refused = await runClientCli(['verify', 'cosignature', one, '--log-vkey', s.logVkey, ...vkeys, '--quorum', '2']);
    assert.equal(refused.code, 1, refused.stdout);
    assert.match(refused.stderr, /^INVALID cosignature_missing: 1 of 2 required cosignatures \(missing: w3\.example\)/);
    const ok = await runClientCli(['verify', 'cosignature', two, '--log-vkey', s.logVkey, ...vkeys, '--quorum', '2']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /cosigned by w2\.example at 1700000005, w3\.example at 1700000006; log signature verified\n$/);
    // Only w2's keys: "cosigned by w2.example" once (it printed "w2.example, w2.example"), and
    // --quorum 2 is a usage error (exit 2): there is one witness.
    const w2 = ['--vkey', s.vkeys.w2ed, '--vkey', s.vkeys.w2pq];
    const once = await runClientCli(['verify', 'cosignature', one, '--log-vkey', s.logVkey, ...w2]);
    assert.equal(once.code, 0, once.stderr);
    assert.match(once.stdout, /cosigned by w2\.example at 1700000005; log signature verified\n$/);
    const usage = await runClientCli(['verify', 'cosignature', one, '--log-vkey', s.logVkey, ...w2, '--quorum', '2']);
    assert.equal(usage.code, 2, usage.stderr);
    assert.match(usage.stderr, /quorum/);
    // One key under two names: usage.
    const v3 = parseVkey(s.vkeys.w3);
    const alias = formatVkey('w3-alias.example', v3.type, v3.publicKey);
    const twice = await runClientCli(['verify', 'cosignature', two, ...vkeys, '--vkey', alias, '--quorum', '2']);
    assert.equal(twice.code, 2, twice.stderr);
    assert.match(twice.stderr, /under two names/);
  },
);

void test('issue 25 item 11: `monitor --log-quorum 2` reports log_unwitnessed for one witness’s two lines', { skip }, async () => {
  const s = scenario();
  const srv = await new FakeWitnessServer(s.log).start();
  servers.push(srv);
  const config: MonitorConfig = {
    witnesses: [srv.url],
    seeds: [],
    http,
    logCosigners: verifiers([s.vkeys.w2ed, s.vkeys.w2pq, s.vkeys.w3]),
    logQuorum: 2,
  };
  srv.checkpoint = s.oneWitness;
  const short = await monitorPoll(config, emptyMonitorState(), T0 + 10);
  assert.deepEqual(
    short.findings.map((f) => f.kind),
    ['log_unwitnessed'],
  );
  assert.match(short.findings[0]!.message, /1 of 2 required cosignatures \(missing: w3\.example\)/);
  srv.checkpoint = s.twoWitnesses;
  assert.deepEqual((await monitorPoll(config, emptyMonitorState(), T0 + 11)).findings, []);
  // Only w2's two keys with --log-quorum 2: a usage error (one witness), not a finding; a key
  // under two names too.
  await assert.rejects(monitorPoll({ ...config, logCosigners: config.logCosigners!.slice(0, 2) }, emptyMonitorState(), T0 + 12), {
    code: 'usage',
  });
  const v3 = parseVkey(s.vkeys.w3);
  const alias = parseVkey(formatVkey('w3-alias.example', v3.type, v3.publicKey));
  await assert.rejects(monitorPoll({ ...config, logCosigners: [...config.logCosigners!, alias] }, emptyMonitorState(), T0 + 13), {
    code: 'usage',
    message: /under two names/,
  });

  // The CLI: `monitor --once --log-quorum 2` exits 1 with the finding.
  srv.checkpoint = s.oneWitness;
  const run = await runClientCli([
    'monitor',
    '--once',
    '--retries',
    '0',
    '--witness',
    srv.url,
    '--log-cosigner',
    s.vkeys.w2ed,
    '--log-cosigner',
    s.vkeys.w2pq,
    '--log-cosigner',
    s.vkeys.w3,
    '--log-quorum',
    '2',
  ]);
  assert.equal(run.code, 1, `${run.stdout}\n${run.stderr}`);
  assert.match(run.stdout + run.stderr, /log_unwitnessed/);
});
