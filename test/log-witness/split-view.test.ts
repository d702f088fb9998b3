// The witness network catches a node that equivocates on its own log (SPEC §4.1, §6.1), end to
// end on loopback: three real anchor witnesses cosign each other's logs (quorum 2); node A runs
// with the test-only fault hook (programmatic API only, never the CLI) and signs a second
// checkpoint at its published size with another root. Its peers refuse to cosign it and keep
// serving the consistent checkpoint. A then shows the forked checkpoint to one party — modelled
// by a loopback server standing in for the view A gave that party, serving the forked note at the
// monitoring endpoint GET /<sha256(origin)>/checkpoint, which the operator names with --peer
// beside the real peers. The real `anchor-witness monitor --once` CLI reports log_equivocation and
// writes the evidence file; `verify log-equivocation` accepts it under A's log vkey and refuses a
// one-byte-tampered copy and another log key. After A grows on, the same forked view (now smaller
// than A's published checkpoint) is proven inconsistent from A's own tiles.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseJsonBody } from '../../src/client/http.ts';
import { emptyMonitorState, monitorPoll, type Finding } from '../../src/client/monitor.ts';
import { ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { sha256Hex } from '../../src/crypto/sha256.ts';
import { encodeBase64 } from '../../src/encoding/base64.ts';
import { parseCheckpoint, type Checkpoint } from '../../src/note/checkpoint.ts';
import { parseNote, SIG_TYPE_ED25519 } from '../../src/note/signed-note.ts';
import { formatVkey, parseVkey } from '../../src/note/vkey.ts';
import type { LogEquivocationEvidence } from '../../src/verify/log-equivocation.ts';
import { runClientCli, type CliRun } from '../helpers/client-cli-run.ts';
import { FakeWitnessServer } from '../helpers/fake-witness-server.ts';
import { anchorAt, makePeer, monitoringCheckpoint, publishedCheckpoint, startPeer, type Peer } from '../helpers/log-witness-peers.ts';
import { until } from '../helpers/poll.ts';
import { fakeWitness } from '../helpers/malicious-witness.ts';
import { tempDir } from '../helpers/tmp.ts';

const tmp = tempDir('aw-split-view-');
let A: Peer, B: Peer, C: Peer;
/** The view A showed one party: serves A's forked checkpoint at the monitoring endpoint. */
let shown: FakeWitnessServer;
/** A's forked checkpoint (signed by A's log key alone), set by the first test. */
let fork: { note: string; cp: Checkpoint } | undefined;

const others = (p: Peer): Peer[] => [A, B, C].filter((q) => q !== p);

/** Every peer made so far, whatever part of before() ran: a node left running would keep this process alive. */
const made: Peer[] = [];
before(async () => {
  shown = await new FakeWitnessServer(fakeWitness({ seed: 0x5c, name: 'shown-view.test' })).start();
  for (const i of [1, 2, 3]) made.push(await makePeer(i, tmp.dir));
  [A, B, C] = made as [Peer, Peer, Peer];
  await startPeer(A, others(A), { testOnlyFaultHooks: true });
  await startPeer(B, others(B));
  await startPeer(C, others(C));
});
after(async () => {
  await shown.stop();
  for (const p of made) await p.node?.close();
  tmp.cleanup();
});

/** Anchor `n` at A and wait until A publishes that size (cosigned by B and C). */
async function growAndPublish(n: number): Promise<{ text: string; cp: Checkpoint }> {
  const size = await anchorAt(A, n);
  return until(`A to publish size ${size}`, async () => {
    const p = await publishedCheckpoint(A);
    return p.cp.size === size ? p : undefined;
  });
}

/** `anchor-witness monitor --once --json` (the findings) as an operator watching A with its peers and the shown view. */
async function monitorOnce(evidenceDir: string): Promise<{ run: CliRun; findings: Finding[] }> {
  const run = await monitorRun(evidenceDir, ['--json']);
  return { run, findings: (parseJsonBody(run.stdout) as { findings: Finding[] }).findings };
}

/** `anchor-witness monitor --once` watching A (quorum 2 of B, C) with --peer B, C and the shown view; it must exit 1. */
async function monitorRun(evidenceDir: string, extra: string[]): Promise<CliRun> {
  const run = await runClientCli([
    'monitor',
    '--once',
    ...extra,
    '--retries',
    '0',
    '--witness',
    A.url,
    '--peer',
    [B.url, C.url, shown.url].join(','),
    '--log-vkey',
    A.logVkey,
    '--log-cosigner',
    B.cosignVkey,
    '--log-cosigner',
    C.cosignVkey,
    '--log-quorum',
    '2',
    '--evidence-dir',
    evidenceDir,
  ]);
  assert.equal(run.code, 1, `monitor exits 1 on a finding: ${run.stderr}`);
  return run;
}

/** The one evidence file in `dir`: its path and document. */
function evidenceFile(dir: string): { file: string; ev: LogEquivocationEvidence } {
  const files = readdirSync(dir);
  assert.equal(files.length, 1, files.join(', '));
  const file = join(dir, files[0]!);
  return { file, ev: parseJsonBody(readFileSync(file, 'utf8')) as LogEquivocationEvidence };
}

const verifyEvidence = (file: string, vkey: string): Promise<CliRun> =>
  runClientCli(['verify', 'log-equivocation', file, '--log-vkey', vkey]);

/** A copy of `file` with one byte changed: the character at `offset` into the first occurrence of `needle`. */
function tamperedCopy(file: string, needle: string, offset: number, name: string): string {
  const original = readFileSync(file);
  const at = original.indexOf(needle);
  assert.ok(at >= 0, `${needle} is in the evidence file`);
  const bytes = Buffer.from(original);
  bytes[at + offset] = bytes[at + offset] === 0x41 ? 0x42 : 0x41; // 'A' or 'B': still base64, still valid JSON
  const copy = join(tmp.dir, name);
  writeFileSync(copy, bytes);
  assert.equal(bytes.filter((b, k) => b !== original[k]).length, 1);
  return copy;
}

/** A vkey for A's origin under another key (B's witness key): the right name, the wrong log. */
const impostorVkey = (): string => formatVkey(A.origin, SIG_TYPE_ED25519, ed25519PublicKeyBytes(B.witnessKey));

void test('a node made to sign a second checkpoint at its published size: peers refuse it; monitor --once reports log_equivocation; verify log-equivocation accepts the evidence, refuses it tampered or under another log key', async () => {
  const published = await growAndPublish(3);
  const byPeer = await Promise.all(others(A).map((o) => monitoringCheckpoint(o, A.origin)));
  for (const m of byPeer) {
    assert.equal(m.status, 200, m.text);
    assert.equal(parseNote(m.text).text, parseNote(published.text).text, 'each peer cosigned what A publishes');
  }

  // The fault hook: a second checkpoint at the same size, another root, signed by A's log key, offered to every peer.
  const forked = await A.node!.testHooks!.forkLogCheckpoint();
  fork = { note: forked.note, cp: parseCheckpoint(parseNote(forked.note).text) };
  assert.equal(fork.cp.origin, A.origin);
  assert.equal(fork.cp.size, published.cp.size);
  assert.notDeepEqual(fork.cp.rootHash, published.cp.rootHash);
  assert.deepEqual(
    forked.replies.map((r) => r.url).sort(),
    others(A)
      .map((o) => `${o.url}/`)
      .sort(),
  );
  for (const r of forked.replies) {
    assert.equal(r.cosigned, false, r.url);
    assert.ok(r.status === 409 || r.status === 422, `${r.url}: status ${r.status}`);
  }
  // The peers' monitoring endpoints still serve exactly what they served before; A publishes the consistent checkpoint.
  assert.deepEqual(await Promise.all(others(A).map((o) => monitoringCheckpoint(o, A.origin))), byPeer);
  assert.equal((await publishedCheckpoint(A)).text, published.text);

  // A shows the forked checkpoint to one party; the operator names that view with --peer beside B and C.
  shown.monitoring.set(A.origin, fork.note);
  const dir = join(tmp.dir, 'evidence-same-size');
  const { run, findings } = await monitorOnce(dir);
  assert.deepEqual(
    findings.map((f) => f.kind),
    ['log_equivocation'],
    `only the split view (A's published checkpoint is quorum-cosigned, B and C agree with it): ${run.stdout}`,
  );
  const f = findings[0]!;
  assert.equal(f.severity, 'alert');
  assert.deepEqual(f.witness!.split(',').sort(), [A.name, `peer ${new URL(shown.url).host}`].sort());
  assert.match(f.message, new RegExp(`two checkpoints of log ${A.origin} at size ${published.cp.size} with different roots`));
  assert.ok(shown.requests.includes(`/${sha256Hex(A.origin)}/checkpoint`), 'the shown view was read at the monitoring endpoint');

  const { file, ev } = evidenceFile(dir);
  assert.deepEqual(ev, f.evidence, 'the file is the finding’s evidence');
  assert.equal(ev.v, 'anchor-witness/log-equivocation/v1');
  assert.equal(ev.origin, A.origin);
  assert.deepEqual([ev.a, ev.b].sort(), [published.text, fork.note].sort(), 'the two signed notes, as served');
  assert.equal(ev.consistency_proof, undefined);

  const ok = await verifyEvidence(file, A.logVkey);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, new RegExp(`^OK LOG EQUIVOCATION PROVEN: log ${A.origin} signed two trees of size ${published.cp.size} `));

  // One byte changed in either note's root (the fork's, then A's published one): refused.
  for (const [cp, name] of [
    [fork.cp, 'tampered-fork-root.json'],
    [published.cp, 'tampered-published-root.json'],
  ] as const) {
    const bad = await verifyEvidence(tamperedCopy(file, encodeBase64(cp.rootHash), 5, name), A.logVkey);
    assert.equal(bad.code, 1, `${name}: ${bad.stdout}`);
    assert.match(bad.stderr, /^INVALID checkpoint_invalid: checkpoint [ab]: /, name);
  }
  const wrongKey = await verifyEvidence(file, impostorVkey());
  assert.equal(wrongKey.code, 1, wrongKey.stdout);
  assert.match(wrongKey.stderr, /^INVALID checkpoint_invalid: checkpoint a: /);

  // Without polling A at all (its key pinned by --log-vkey): what its peers cosigned against the shown view.
  const peersOnly = await monitorPoll(
    { witnesses: [], seeds: [], http: { timeoutMs: 5000, retries: 0 }, peers: [B.url, C.url, shown.url], logKeys: [parseVkey(A.logVkey)] },
    emptyMonitorState(),
    Math.floor(Date.now() / 1000),
  );
  assert.deepEqual(
    peersOnly.findings.map((x) => x.kind),
    ['log_equivocation'],
  );
  const proven = peersOnly.findings[0]!;
  assert.ok(proven.kind === 'log_equivocation');
  const sides = [proven.evidence.a, proven.evidence.b];
  assert.ok(sides.includes(fork.note), 'the shown view is one side');
  assert.ok(
    sides.some((n) => byPeer.some((m) => m.text === n)),
    'a peer-cosigned checkpoint (B’s or C’s) is the other',
  );
});

void test('the forked view kept at the old size after the node grew on: monitor proves it inconsistent from the node’s own tiles; the proof verifies, tampered it is refused', async () => {
  assert.ok(fork !== undefined, 'the first test forked A');
  const grown = await growAndPublish(2);
  assert.ok(grown.cp.size > fork.cp.size);
  // The shown view still serves the size-3 fork: of another size than A's published checkpoint,
  // so only A's tiles can prove that it is not a prefix of A's log.
  const dir = join(tmp.dir, 'evidence-from-tiles');
  const { run, findings } = await monitorOnce(dir);
  assert.deepEqual(
    findings.map((f) => f.kind),
    ['log_equivocation'],
    run.stdout,
  );
  const f = findings[0]!;
  assert.deepEqual(f.witness!.split(','), [`peer ${new URL(shown.url).host}`, A.name], 'the smaller (shown) view first');
  assert.match(
    f.message,
    new RegExp(`size ${fork.cp.size} and .* size ${grown.cp.size}.*does not extend the smaller \\(proven from the tiles of ${A.name}\\)`),
  );

  const { file, ev } = evidenceFile(dir);
  assert.deepEqual(ev, f.evidence);
  // The human output (no --json) shows both checkpoints and names the same file, rewritten in place.
  const human = await monitorRun(dir, []);
  assert.match(human.stdout, /^ALERT log_equivocation: /m);
  assert.ok(human.stdout.includes(`evidence written to ${file} (check it with: anchor-witness verify log-equivocation`), human.stdout);
  assert.deepEqual(evidenceFile(dir).ev, ev);
  assert.equal(ev.a, fork.note);
  assert.equal(ev.b, grown.text);
  assert.ok(ev.consistency_proof !== undefined && ev.consistency_proof.length > 0);
  // The root A's tiles give for its first 3 leaves is the one A published at size 3, not the fork's.
  assert.notEqual(ev.old_root_from_tiles, encodeBase64(fork.cp.rootHash));

  const ok = await verifyEvidence(file, A.logVkey);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /^OK LOG EQUIVOCATION PROVEN: .*the larger does not extend the smaller \(consistency proof\)/);

  // One byte changed in a proof hash: the proof no longer leads to the larger root.
  const bad = await verifyEvidence(tamperedCopy(file, ev.consistency_proof[0]!, 5, 'tampered-proof.json'), A.logVkey);
  assert.equal(bad.code, 1, bad.stdout);
  assert.match(bad.stderr, /^INVALID log_equivocation_invalid: /);
  const wrongKey = await verifyEvidence(file, impostorVkey());
  assert.equal(wrongKey.code, 1, wrongKey.stdout);
  assert.match(wrongKey.stderr, /^INVALID checkpoint_invalid: /);
});
