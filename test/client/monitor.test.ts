// The monitor (issue "Client SDK and CLI", Must show): a witness withholding, two witnesses
// disagreeing (the duplicity evidence verifies offline), and a witness rolled back (its data dir
// restored from an older copy) caught across a monitor restart through the persisted state —
// as a log rollback, an anchor rollback and, once the log regrows, an inconsistency proven from
// its tiles.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { decodeDuplicityProof } from '../../src/anchor/codec.ts';
import { verifyDuplicityProof } from '../../src/anchor/duplicity.ts';
import { parseRegistry } from '../../src/anchor/registry.ts';
import type { Anchor, DuplicityProofWire } from '../../src/anchor/types.ts';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { decodeBase64 } from '../../src/encoding/base64.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { parseCheckpoint } from '../../src/note/checkpoint.ts';
import { parseNote } from '../../src/note/signed-note.ts';
import {
  emptyMonitorState,
  monitorPoll,
  parseMonitorState,
  readJsonFile,
  signAnchor,
  submitAnchor,
  verifyInconsistency,
  writeJsonAtomic,
  type Finding,
  type MonitorConfig,
  type MonitorState,
  type WitnessTarget,
} from '../../src/client/index.ts';
import { fill } from '../helpers/anchors.ts';
import { setOf, startWitnesses, type TestWitness } from '../helpers/client-witnesses.ts';
import { tempDir } from '../helpers/tmp.ts';

const key = ed25519KeyFromSeed(fill(0x09));
const registry = { parties: [{ id: 'did:keri:EAlice', keys: [{ curve: 'ed25519', public_key: encodeHex(ed25519PublicKeyBytes(key)) }] }] };
const PARTY = { agent: 'did:keri:EAlice' };
const http = { timeoutMs: 2000, retries: 0 };

let tmp: ReturnType<typeof tempDir>;
let ws: TestWitness[];
before(async () => {
  tmp = tempDir('aw-monitor-');
  ws = await startWitnesses(tmp.dir, 3, registry, { allowUnderivedSeeds: true });
});
after(async () => {
  await Promise.all(ws.map((w) => w.stop()));
  tmp.cleanup();
});

const target = (w: TestWitness): WitnessTarget => ({ url: w.url, member: w.member });
const T0 = 1_700_000_000;
function anchorOf(seed: Uint8Array, index: number, head: number): Anchor {
  return signAnchor(key, 'ed25519', {
    seedId: seed,
    index,
    head: fill(head),
    cumulative: BigInt(index),
    timestamp: T0 + index,
    witnessSet: { said: 'ETestSet', threshold: 2 },
  });
}
async function cosign(to: readonly TestWitness[], a: Anchor): Promise<void> {
  const results = await submitAnchor(a, PARTY, to.map(target), http);
  for (const r of results) assert.equal(r.outcome.kind, 'cosigned', JSON.stringify(r.outcome));
}
function config(seeds: Uint8Array[], over: Partial<MonitorConfig> = {}): MonitorConfig {
  return { witnesses: ws.map((w) => w.url), witnessSet: setOf(ws, 2), registry: parseRegistry(registry), seeds, http, ...over };
}
const kinds = (fs: Finding[]): string[] => fs.map((f) => `${f.kind} ${f.witness ?? ''}`).sort();

void test('withholding: a witness behind the others is reported (after the grace), and cleared when it catches up', async () => {
  const seed = new Uint8Array(randomBytes(32));
  await cosign(ws, anchorOf(seed, 0, 1));
  for (let i = 1; i <= 2; i++) await cosign(ws.slice(0, 2), anchorOf(seed, i, 1 + i));
  const state = emptyMonitorState();

  const graced = await monitorPoll(config([seed], { withholdingGraceSec: 60 }), state, 1000);
  assert.deepEqual(graced.findings, [], 'within the grace period nothing is reported');
  const later = await monitorPoll(config([seed], { withholdingGraceSec: 60 }), state, 1061);
  assert.deepEqual(kinds(later.findings), [`withholding ${ws[2]!.name}`]);
  const f = later.findings[0]!;
  assert.equal(f.severity, 'alert');
  assert.deepEqual(f.evidence, { index: 0, expected: 2, by: ws[0]!.name, since: 1000 });
  assert.match(f.message, /index 0 while w1\.test co-signed index 2 \(behind for 61 s\)/);
  assert.deepEqual(
    later.witnesses.map((w) => w.anchors[encodeHex(seed)]),
    [2, 2, 0],
  );

  await cosign([ws[2]!], anchorOf(seed, 2, 3));
  const caught = await monitorPoll(config([seed]), state, 1100);
  assert.deepEqual(caught.findings, []);
});

void test('disagreement: two witnesses co-sign different heads at one index; the duplicity evidence verifies offline', async () => {
  const seed = new Uint8Array(randomBytes(32));
  await cosign([ws[0]!], anchorOf(seed, 1, 0xaa));
  await cosign([ws[1]!], anchorOf(seed, 1, 0xbb));
  const state = emptyMonitorState();
  const report = await monitorPoll(config([seed]), state, 2000);
  assert.deepEqual(kinds(report.findings), [`disagreement ${ws[0]!.name},${ws[1]!.name}`, `withholding ${ws[2]!.name}`]);
  const d = report.findings.find((f) => f.kind === 'disagreement')!;
  assert.match(
    d.message,
    /witnesses disagree on seed .* index 1: w1\.test co-signed head aaaa.*w2\.test co-signed bbbb.*duplicity proof attached/,
  );
  const proof = decodeDuplicityProof(d.evidence.duplicity_proof);
  assert.deepEqual(verifyDuplicityProof(proof), { valid: true });
  assert.equal(encodeHex(proof.seedId), encodeHex(seed));

  // Shown the other head, a witness proves the party's duplicity itself: the monitor reports it too.
  const r = await submitAnchor(anchorOf(seed, 1, 0xaa), PARTY, [target(ws[1]!)], http);
  assert.equal(r[0]!.outcome.kind, 'duplicity');
  const next = await monitorPoll(config([seed]), state, 2001);
  const dup = next.findings.find((f) => f.kind === 'duplicity');
  assert.ok(dup !== undefined, kinds(next.findings).join());
  assert.equal(dup.witness, ws[1]!.name);
  assert.deepEqual(verifyDuplicityProof(decodeDuplicityProof(dup.evidence.duplicity_proof)), { valid: true });
  // …and --all-duplicities finds it by listing.
  const listed = await monitorPoll(config([], { allDuplicities: true }), emptyMonitorState(), 2002);
  assert.ok(listed.findings.some((f) => f.kind === 'duplicity' && f.seed === encodeHex(seed)));
});

void test('rollback: a data dir restored from an older copy is caught across a monitor restart, then proven inconsistent from tiles', async () => {
  const w3 = ws[2]!;
  const seed = new Uint8Array(randomBytes(32));
  const stateFile = join(tmp.dir, 'monitor-state.json');
  // Each poll is a fresh monitor process as far as memory goes: state only via the file.
  const poll = async (now: number) => {
    const doc = readJsonFile(stateFile);
    const state: MonitorState = doc === undefined ? emptyMonitorState() : parseMonitorState(doc);
    const report = await monitorPoll(config([seed]), state, now);
    writeJsonAtomic(stateFile, state);
    return report;
  };
  await cosign(ws, anchorOf(seed, 1, 1));
  assert.deepEqual((await poll(3000)).findings, []);

  await w3.stop();
  const backup = join(tmp.dir, 'w3-backup');
  w3.backup(backup);
  await w3.start();
  await cosign(ws, anchorOf(seed, 2, 2));
  await cosign(ws, anchorOf(seed, 3, 3));
  const before = await poll(3001);
  assert.deepEqual(before.findings, []);
  const highWater = before.witnesses[2]!.logSize!;

  await w3.stop();
  w3.restore(backup);
  await w3.start();
  const rolled = await poll(3002);
  assert.deepEqual(kinds(rolled.findings), [`anchor_rollback ${w3.name}`, `log_rollback ${w3.name}`, `withholding ${w3.name}`]);
  const lr = rolled.findings.find((f) => f.kind === 'log_rollback')!;
  assert.match(lr.message, new RegExp(`log rolled back from size ${highWater} to ${highWater - 2}`));
  const ar = rolled.findings.find((f) => f.kind === 'anchor_rollback')!;
  assert.match(ar.message, /moved back from index 3 to 1/);

  // The restored witness co-signs a second head at index 3 (it forgot the first) …
  await cosign([w3], anchorOf(seed, 2, 2));
  await cosign([w3], anchorOf(seed, 3, 0x33));
  // … and its log grows past the size the monitor saw, on another history.
  let size = 0;
  while (size <= highWater) {
    await cosign([w3], anchorOf(new Uint8Array(randomBytes(32)), 0, 9));
    size = ((await (await fetch(`${w3.url}/health`)).json()) as { log: { size: number } }).log.size;
  }
  const forked = await poll(3003);
  assert.deepEqual(kinds(forked.findings), [
    `disagreement ${ws[0]!.name},${w3.name}`,
    `disagreement ${ws[1]!.name},${w3.name}`,
    `equivocation ${w3.name}`,
    `log_inconsistent ${w3.name}`,
  ]);
  const li = forked.findings.find((f) => f.kind === 'log_inconsistent')!;
  assert.match(li.message, /does not extend the one of size \d+ \(proven from its tiles\)/);
  const ev = li.evidence;
  const older = parseCheckpoint(parseNote(ev.previous).text);
  const newer = parseCheckpoint(parseNote(ev.current).text);
  assert.equal(
    verifyInconsistency(older, newer, {
      oldSize: older.size,
      newSize: newer.size,
      oldRootFromTiles: decodeBase64(ev.old_root_from_tiles, 32),
      proof: ev.consistency_proof.map((h) => decodeBase64(h, 32)),
    }),
    true,
    'the inconsistency evidence verifies offline',
  );
  const eq = forked.findings.find((f) => f.kind === 'equivocation')!;
  assert.match(eq.message, /w3\.test co-signed two heads at index 3/);
  assert.deepEqual(verifyDuplicityProof(decodeDuplicityProof(eq.evidence.duplicity_proof as DuplicityProofWire)), { valid: true });
});

void test('trust on first use without a witness set: a changed key is an alert; a stopped witness is unreachable', async () => {
  const state = emptyMonitorState();
  const cfg: MonitorConfig = { witnesses: [ws[0]!.url], seeds: [], http };
  assert.deepEqual((await monitorPoll(cfg, state, 4000)).findings, []);
  assert.equal(state.witnesses[ws[0]!.name]!.public_key, encodeHex(ws[0]!.publicKey));
  state.witnesses[ws[0]!.name]!.public_key = '11'.repeat(32);
  assert.deepEqual(kinds((await monitorPoll(cfg, state, 4001)).findings), [`key_changed ${ws[0]!.name}`]);
  await ws[0]!.stop();
  try {
    const down = await monitorPoll({ ...cfg, witnesses: [ws[0]!.url] }, emptyMonitorState(), 4002);
    assert.deepEqual(kinds(down.findings), ['unreachable ']);
    assert.equal(down.findings[0]!.severity, 'warning');
  } finally {
    await ws[0]!.start();
  }
});
