// The monitor's log checks of SPEC §4.1 ("Clients") and §6.1: a witness's published checkpoint
// without the cosigner quorum is log_unwitnessed (and the quorum-cosigned one passes, also through
// `verify cosignature` and the SDK's async verifier); a watched seed whose newest co-signed anchor
// is older than --dark-after is seed_dark; a log shown two ways — two peers' monitoring endpoints
// with one size and two roots, or a peer's smaller checkpoint the log's own tiles prove is not a
// prefix — is log_equivocation, whose evidence `verify log-equivocation` accepts and refuses
// tampered. Fake witnesses on loopback (test/helpers/fake-witness-server.ts) sign what they are
// told to.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseRegistry } from '../../src/anchor/registry.ts';
import { ed25519KeyFromSeed } from '../../src/crypto/ed25519.ts';
import { sha256Hex } from '../../src/crypto/sha256.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { parseJsonBody } from '../../src/client/http.ts';
import { emptyMonitorState, monitorPoll, type Finding, type MonitorConfig } from '../../src/client/monitor.ts';
import { mlDsa44KeyFromSeed, mlDsa44PublicKeyBytes, mlDsa44Supported } from '../../src/crypto/ml-dsa.ts';
import { SIG_TYPE_ED25519, SIG_TYPE_SUBTREE_V1 } from '../../src/note/signed-note.ts';
import { ed25519NoteSigner, formatVkey, parseVkey } from '../../src/note/vkey.ts';
import { hashLeaf } from '../../src/tlog/hash.ts';
import { verifyLogEquivocation } from '../../src/verify/log-equivocation.ts';
import { noteKeyFromVkey, verifyCosignedCheckpoint } from '../../src/verify/note.ts';
import { fill } from '../helpers/anchors.ts';
import { FakeWitnessServer } from '../helpers/fake-witness-server.ts';
import {
  anchorResponse,
  appendLeaf,
  checkpointNote,
  fakeParty,
  fakeWitness,
  mintAnchor,
  type FakeWitness,
} from '../helpers/malicious-witness.ts';
import { runClientCli } from '../helpers/client-cli-run.ts';
import { tempDir } from '../helpers/tmp.ts';
import { ed25519Cosigner, mlDsa44Cosigner } from '../../src/note/cosigner.ts';

const http = { timeoutMs: 5000, retries: 0 };
const T0 = 1_700_000_000;
const tmp = tempDir('aw-monitor-logs-');
const servers: FakeWitnessServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  tmp.cleanup();
});
async function serve(w: FakeWitness): Promise<FakeWitnessServer> {
  const s = await new FakeWitnessServer(w).start();
  servers.push(s);
  return s;
}
const kinds = (fs: Finding[]): string[] => fs.map((f) => f.kind).sort();
const logVkey = (w: FakeWitness): string => formatVkey(w.origin, SIG_TYPE_ED25519, w.publicKey);
/** A log of `n` leaves (`salt` makes another history). */
function grow(w: FakeWitness, n: number, salt = 0): void {
  for (let i = 0; i < n; i++) appendLeaf(w, fill((i + salt) & 0xff, 8 + salt));
}

const cli = runClientCli;

const cosignerKeys = [1, 2, 3].map((i) => ed25519KeyFromSeed(fill(0xc0 + i)));
const cosigners = cosignerKeys.map((k, i) => ed25519Cosigner(`c${i + 1}.test`, k).noteSigner(T0 + 5));

void test('§4.1 Clients: a published checkpoint without the cosigner quorum is log_unwitnessed; with it, nothing (monitor, verify cosignature, SDK)', async () => {
  const w = fakeWitness({ seed: 0x61, name: 'lw.test' });
  grow(w, 5);
  const srv = await serve(w);
  const witnessed = checkpointNote(w, 5, [ed25519NoteSigner(w.origin, w.key), cosigners[0]!, cosigners[2]!]);
  srv.checkpoint = witnessed;
  const config: MonitorConfig = {
    witnesses: [srv.url],
    seeds: [],
    http,
    logCosigners: cosigners.map((c) => c.verifier),
    logQuorum: 2,
  };
  assert.deepEqual((await monitorPoll(config, emptyMonitorState(), T0 + 10)).findings, []);

  // One cosignature of the two required: log_unwitnessed, naming the witness's URL.
  srv.checkpoint = checkpointNote(w, 5, [ed25519NoteSigner(w.origin, w.key), cosigners[1]!]);
  const short = await monitorPoll(config, emptyMonitorState(), T0 + 11);
  assert.deepEqual(kinds(short.findings), ['log_unwitnessed']);
  const f = short.findings[0]!;
  assert.equal(f.severity, 'alert');
  assert.equal(f.witness, w.name);
  assert.equal(f.url, srv.url);
  assert.match(f.message, /1 of 2 required cosignatures/);
  // Without --log-quorum every cosigner is required: the witnessed checkpoint (2 of 3) lacks one.
  srv.checkpoint = witnessed;
  const everyCosigner: MonitorConfig = { ...config };
  delete everyCosigner.logQuorum;
  const all = await monitorPoll(everyCosigner, emptyMonitorState(), T0 + 12);
  assert.deepEqual(kinds(all.findings), ['log_unwitnessed']);
  // A quorum larger than the cosigners is a usage error, not a finding.
  await assert.rejects(monitorPoll({ ...config, logQuorum: 4 }, emptyMonitorState(), T0 + 13), { code: 'usage' });

  // The same witnessed checkpoint through `verify cosignature` and the SDK's async verifier.
  const file = join(tmp.dir, 'witnessed.txt');
  writeFileSync(file, witnessed);
  const vkeys = cosigners.flatMap((c) => ['--vkey', c.verifier.vkey]);
  const okRun = await cli(['verify', 'cosignature', file, '--log-vkey', logVkey(w), ...vkeys, '--quorum', '2']);
  assert.equal(okRun.code, 0, okRun.stderr);
  assert.match(
    okRun.stdout,
    /^OK checkpoint lw\.test\/anchors size 5 cosigned by c1\.test at \d+, c3\.test at \d+; log signature verified/,
  );
  const missing = await cli(['verify', 'cosignature', file, '--log-vkey', logVkey(w), ...vkeys, '--quorum', '3']);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^INVALID cosignature_missing: 2 of 3/);
  const sdk = await verifyCosignedCheckpoint(witnessed, {
    log: [await noteKeyFromVkey(logVkey(w))],
    cosigners: await Promise.all(cosigners.map((c) => noteKeyFromVkey(c.verifier.vkey))),
    quorum: 2,
  });
  assert.deepEqual(
    sdk.cosigners.map((c) => c.name),
    ['c1.test', 'c3.test'],
  );
  assert.equal(sdk.logVerified, true);
});

void test('§6.1 seed_dark: a seed whose newest co-signed anchor is older than --dark-after is reported; a fresh one is not; off by default', async () => {
  const w = fakeWitness({ seed: 0x62, name: 'dark.test' });
  const party = fakeParty(0x21);
  const registry = parseRegistry({
    parties: [{ id: 'did:keri:EDark', keys: [{ curve: 'ed25519', public_key: encodeHex(party.publicKey) }] }],
  });
  const srv = await serve(w);
  const stale = fill(0xd1);
  const fresh = fill(0xd2);
  // The stale seed: index 1 long ago; the fresh one: index 2 a minute ago.
  srv.anchors.set(encodeHex(stale), anchorResponse(w, mintAnchor(party, { seedId: stale, index: 1, timestamp: T0 })));
  srv.anchors.set(encodeHex(fresh), anchorResponse(w, mintAnchor(party, { seedId: fresh, index: 2, timestamp: T0 + 3540 })));
  const config: MonitorConfig = { witnesses: [srv.url], seeds: [stale, fresh], registry, http };
  assert.deepEqual((await monitorPoll(config, emptyMonitorState(), T0 + 3600)).findings, [], 'off by default');
  const report = await monitorPoll({ ...config, darkAfterSec: 600 }, emptyMonitorState(), T0 + 3600);
  assert.deepEqual(kinds(report.findings), ['seed_dark']);
  const f = report.findings[0]!;
  assert.equal(f.seed, encodeHex(stale));
  assert.equal(f.severity, 'warning');
  assert.deepEqual(f.evidence, { index: 1, timestamp: '2023-11-14T22:13:20Z', witness: w.name, dark_after: 600 });
  // Through the command line (the clock is the real one): --dark-after takes a SPEC duration.
  const now = Math.floor(Date.now() / 1000);
  const [stale2, fresh2] = [fill(0xd3), fill(0xd4)];
  srv.anchors.set(encodeHex(stale2), anchorResponse(w, mintAnchor(party, { seedId: stale2, index: 1, timestamp: now - 3600 })));
  srv.anchors.set(encodeHex(fresh2), anchorResponse(w, mintAnchor(party, { seedId: fresh2, index: 1, timestamp: now - 60 })));
  const reg = join(tmp.dir, 'dark-registry.json');
  writeFileSync(
    reg,
    JSON.stringify({ parties: [{ id: 'did:keri:EDark', keys: [{ curve: 'ed25519', public_key: encodeHex(party.publicKey) }] }] }),
  );
  const args = [
    'monitor',
    '--once',
    '--json',
    '--witness',
    srv.url,
    '--registry',
    reg,
    '--seed',
    `${encodeHex(stale2)},${encodeHex(fresh2)}`,
  ];
  const r = await cli([...args, '--dark-after', '10m']);
  assert.equal(r.code, 1, r.stderr);
  const out = parseJsonBody(r.stdout) as { findings: Finding[] };
  assert.deepEqual(
    out.findings.map((x) => [x.kind, x.seed]),
    [['seed_dark', encodeHex(stale2)]],
  );
  const bad = await cli([...args, '--dark-after', '1w']);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /not a duration/);
  // The age is measured from the newest co-signed anchor: once the party anchors again, it is not dark.
  srv.anchors.set(encodeHex(stale), anchorResponse(w, mintAnchor(party, { seedId: stale, index: 2, timestamp: T0 + 3590 })));
  assert.deepEqual((await monitorPoll({ ...config, darkAfterSec: 600 }, emptyMonitorState(), T0 + 3600)).findings, []);
});

void test('§6.1 log_equivocation: two peers show one log at one size with two roots (monitor --once --peer); the evidence file verifies, a tampered one is refused', async () => {
  const w = fakeWitness({ seed: 0x63, name: 'eq.test' });
  grow(w, 6);
  const own = await serve(w);
  // Two peers that cosign w's log: w showed each a different tree of size 6.
  const fork = fakeWitness({ seed: 0x63, name: 'eq.test' });
  grow(fork, 6, 1);
  const p1 = await serve(fakeWitness({ seed: 0x64, name: 'p1.test' }));
  const p2 = await serve(fakeWitness({ seed: 0x65, name: 'p2.test' }));
  p1.monitoring.set(w.origin, checkpointNote(w, 6, [ed25519NoteSigner(w.origin, w.key), cosigners[0]!]));
  p2.monitoring.set(w.origin, checkpointNote(fork, 6, [ed25519NoteSigner(w.origin, w.key), cosigners[1]!]));

  const dir = join(tmp.dir, 'evidence');
  const state = join(tmp.dir, 'eq-state.json');
  const r = await cli([
    'monitor',
    '--once',
    '--json',
    '--witness',
    own.url,
    '--peer',
    `${p1.url},${p2.url}`,
    '--evidence-dir',
    dir,
    '--state',
    state,
  ]);
  assert.equal(r.code, 1, r.stderr);
  const out = parseJsonBody(r.stdout) as { findings: Finding[] };
  const eq = out.findings.filter((f) => f.kind === 'log_equivocation');
  // w's own checkpoint is p1's view: one split view, p2's against both (one finding per pair of roots).
  assert.equal(eq.length, 1, JSON.stringify(out.findings));
  assert.match(eq[0]!.witness!, /peer 127\.0\.0\.1:\d+/);
  for (const p of [p1, p2]) assert.ok(p.requests.includes(`/${sha256Hex(w.origin)}/checkpoint`), 'each --peer monitoring endpoint is read');
  const files = readdirSync(dir);
  assert.equal(files.length, 1);
  const file = join(dir, files[0]!);
  const ev = parseJsonBody(readFileSync(file, 'utf8')) as { v: string; origin: string; a: string; b: string };
  assert.equal(ev.v, 'anchor-witness/log-equivocation/v1');
  assert.equal(ev.origin, w.origin);

  const proven = await cli(['verify', 'log-equivocation', file, '--log-vkey', logVkey(w)]);
  assert.equal(proven.code, 0, proven.stderr);
  assert.match(proven.stdout, /^OK LOG EQUIVOCATION PROVEN: log eq\.test\/anchors signed two trees of size 6/);
  // Under another log key: not proven (exit 1, the checkpoint does not verify).
  const other = await cli(['verify', 'log-equivocation', file, '--log-vkey', logVkey(fakeWitness({ seed: 0x66, name: 'eq.test' }))]);
  assert.equal(other.code, 1);
  assert.match(other.stderr, /^INVALID checkpoint_invalid: checkpoint a: /);
  // Tampered: b's note replaced by a's (one view twice), or b's root edited (its signature fails).
  const same = join(tmp.dir, 'same.json');
  writeFileSync(same, JSON.stringify({ ...ev, b: ev.a }));
  const r2 = await cli(['verify', 'log-equivocation', same, '--log-vkey', logVkey(w)]);
  assert.equal(r2.code, 1);
  assert.match(r2.stderr, /^INVALID log_equivocation_invalid: not proven: both checkpoints have size 6 and the same root/);
  const lines = ev.b.split('\n');
  lines[2] = lines[2]!.slice(0, 5) + (lines[2]![5] === 'A' ? 'B' : 'A') + lines[2]!.slice(6);
  const edited = join(tmp.dir, 'edited.json');
  writeFileSync(edited, JSON.stringify({ ...ev, b: lines.join('\n') }));
  const r3 = await cli(['verify', 'log-equivocation', edited, '--log-vkey', logVkey(w)]);
  assert.equal(r3.code, 1);
  assert.match(r3.stderr, /^INVALID checkpoint_invalid: checkpoint b: /);
  // A document with an extra member is refused as malformed.
  const extra = join(tmp.dir, 'extra.json');
  writeFileSync(extra, JSON.stringify({ ...ev, note: 'x' }));
  assert.match(
    (await cli(['verify', 'log-equivocation', extra, '--log-vkey', logVkey(w)])).stderr,
    /^INVALID malformed_response: unknown member/,
  );

  // Peers alone, the log key pinned by --log-vkey (no witness of that log polled): the same split view.
  const onlyPeers = await monitorPoll(
    { witnesses: [], seeds: [], http, peers: [p1.url, p2.url], logKeys: [parseVkey(logVkey(w))] },
    emptyMonitorState(),
    T0,
  );
  assert.deepEqual(kinds(onlyPeers.findings), ['log_equivocation']);
});

void test("§6.1 log_equivocation: a peer's smaller checkpoint that the log's own tiles prove is not a prefix; an honest peer behind the log is not", async () => {
  const w = fakeWitness({ seed: 0x67, name: 'inc.test' });
  grow(w, 40);
  const own = await serve(w);
  const peer = await serve(fakeWitness({ seed: 0x68, name: 'peer.test' }));
  const config: MonitorConfig = { witnesses: [own.url], seeds: [], http, peers: [peer.url] };
  // Honest: the peer cosigned the log at size 17 (a prefix of what it publishes now).
  peer.monitoring.set(w.origin, checkpointNote(w, 17));
  assert.deepEqual((await monitorPoll(config, emptyMonitorState(), T0)).findings, []);
  // Forked: the log showed the peer a size-17 tree with another leaf 3.
  const fork = { ...w, leaves: w.leaves.map((h, i) => (i === 3 ? hashLeaf(fill(0xee)) : h)) };
  peer.monitoring.set(w.origin, checkpointNote(fork, 17));
  const report = await monitorPoll(config, emptyMonitorState(), T0 + 1);
  assert.deepEqual(kinds(report.findings), ['log_equivocation']);
  const ev = report.findings[0]!.evidence as { a: string; b: string; consistency_proof: string[]; old_root_from_tiles: string };
  assert.ok(ev.consistency_proof.length > 0);
  const key = await noteKeyFromVkey(logVkey(w));
  const proven = await verifyLogEquivocation(ev, [key]);
  assert.equal(proven.kind, 'inconsistent');
  assert.deepEqual([proven.a.size, proven.b.size], [17, 40]);
  // A proof hash changed, or the proof left out: refused.
  const bad = { ...ev, consistency_proof: ev.consistency_proof.map((h, i) => (i === 0 ? ev.old_root_from_tiles : h)) };
  await assert.rejects(verifyLogEquivocation(bad, [key]), { code: 'log_equivocation_invalid' });
  const bare: Record<string, unknown> = { ...ev };
  delete bare.consistency_proof;
  delete bare.old_root_from_tiles;
  await assert.rejects(verifyLogEquivocation(bare, [key]), { code: 'log_equivocation_invalid', message: /needs old_root_from_tiles/ });
});

void test(
  '§4.1 Clients with an ML-DSA-44 (0x06) cosigner: its subtree/v1 line counts toward the quorum (monitor and verify cosignature)',
  { skip: mlDsa44Supported() ? false : 'this Node has no ML-DSA-44' },
  async () => {
    const w = fakeWitness({ seed: 0x69, name: 'pq.test' });
    grow(w, 4);
    const srv = await serve(w);
    const pq = mlDsa44KeyFromSeed(fill(0x5a));
    const pqVkey = formatVkey('pq-cosigner.test', SIG_TYPE_SUBTREE_V1, mlDsa44PublicKeyBytes(pq));
    const note = checkpointNote(w, 4, [ed25519NoteSigner(w.origin, w.key), cosigners[0]!]);
    const text = note.slice(0, note.indexOf('\n\n') + 1);
    const pqLine = mlDsa44Cosigner('pq-cosigner.test', pq)
      .noteSigner(T0 + 7)
      .line(text);
    const config: MonitorConfig = {
      witnesses: [srv.url],
      seeds: [],
      http,
      logCosigners: [cosigners[0]!.verifier, parseVkey(pqVkey)],
      logQuorum: 2,
    };
    srv.checkpoint = note + pqLine;
    assert.deepEqual((await monitorPoll(config, emptyMonitorState(), T0 + 10)).findings, []);
    srv.checkpoint = note;
    const short = await monitorPoll(config, emptyMonitorState(), T0 + 11);
    assert.deepEqual(kinds(short.findings), ['log_unwitnessed']);
    assert.match(short.findings[0]!.message, /1 of 2 required cosignatures \(missing: pq-cosigner\.test\)/);

    const file = join(tmp.dir, 'pq-witnessed.txt');
    writeFileSync(file, note + pqLine);
    const r = await cli(['verify', 'cosignature', file, '--log-vkey', logVkey(w), '--vkey', cosigners[0]!.verifier.vkey, '--vkey', pqVkey]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /cosigned by c1\.test at \d+, pq-cosigner\.test at 1700000007; log signature verified/);
  },
);
