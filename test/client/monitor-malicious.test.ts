// The monitor against a malicious witness (issue 16 item 8): a test-side witness on loopback that
// signs whatever it likes with its own (pinned) key — a co-signed anchor its party never signed, a
// duplicity "proof" under a key that is not the party's, forged tiles, two checkpoints of one size
// (a split view), an upper-cased head. Each test is the reproduction of one item; the monitor talks
// HTTP to the fake witnesses exactly as to real ones.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KeyObject } from 'node:crypto';
import { encodeAnchor, encodeDuplicityProof } from '../../src/anchor/codec.ts';
import { makeDuplicityProof } from '../../src/anchor/duplicity.ts';
import { cosignMessage } from '../../src/anchor/messages.ts';
import { parseRegistry } from '../../src/anchor/registry.ts';
import type { Anchor, AnchorWire, DuplicityProofWire } from '../../src/anchor/types.ts';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes, signEd25519 } from '../../src/crypto/ed25519.ts';
import { encodeBase64 } from '../../src/encoding/base64.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { stringifyJson } from '../../src/encoding/json.ts';
import { formatCheckpoint, parseCheckpoint } from '../../src/note/checkpoint.ts';
import { parseNote, signNote } from '../../src/note/signed-note.ts';
import { formatTlogProof } from '../../src/note/tlog-proof.ts';
import { ed25519NoteSigner, ed25519NoteVerifier } from '../../src/note/vkey.ts';
import { hashLeaf } from '../../src/tlog/hash.ts';
import { inclusionProof, memoryHashReader, rootFromLeafHashes } from '../../src/tlog/merkle.ts';
import { buildTile, parseTilePath } from '../../src/tlog/tiles.ts';
import { parseJsonBody } from '../../src/client/http.ts';
import { renderMonitorReport } from '../../src/client/monitor-report.ts';
import {
  emptyMonitorState,
  monitorPoll,
  parseMonitorState,
  type Finding,
  type MonitorConfig,
  type MonitorState,
} from '../../src/client/monitor.ts';
import { verifyCheckpoint } from '../../src/verify/note.ts';
import { makeWitnessSet } from '../../src/verify/witness-set.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';

const alice = edParty(0x09);
const mallory = edParty(0x0a); // a key no registry lists
const registry = parseRegistry({
  parties: [{ id: 'did:keri:EAlice', keys: [{ curve: 'ed25519', public_key: encodeHex(alice.publicKey) }] }],
});
const http = { timeoutMs: 5000, retries: 0 };
const T0 = 1_700_000_000;

/** A witness that signs, under its own key, whatever the test tells it to serve. */
class FakeWitness {
  readonly name: string;
  readonly origin: string;
  readonly key: KeyObject;
  readonly publicKey: Uint8Array;
  /** Leaf hashes of its log. */
  leaves: Uint8Array[] = [];
  /** Per seed: the wire anchor served (possibly tampered) and its leaf. */
  readonly anchors = new Map<string, { wire: AnchorWire; leafIndex: number }>();
  readonly duplicities = new Map<string, DuplicityProofWire>();
  /** When set: served at /log/checkpoint instead of the note of `leaves`. */
  checkpointOverride: string | undefined;
  /** When set: the level-0 tiles are served from these leaves instead (forged tiles). */
  tileLeaves: Uint8Array[] | undefined;
  url = '';
  private server: Server | undefined;

  constructor(n: number) {
    this.name = `m${n}.test`;
    this.origin = `${this.name}/anchors`;
    this.key = ed25519KeyFromSeed(fill(0x70 + n));
    this.publicKey = ed25519PublicKeyBytes(this.key);
  }

  note(leaves: readonly Uint8Array[] = this.leaves): string {
    const text = formatCheckpoint({ origin: this.origin, size: leaves.length, rootHash: rootFromLeafHashes(leaves), extensions: [] });
    return signNote(text, [ed25519NoteSigner(this.origin, this.key)]);
  }

  /** Co-sign and log `anchor` (the witness signs its cosign message); serve `wire` for it. */
  cosign(anchor: Anchor, wire: AnchorWire = encodeAnchor(anchor)): void {
    this.leaves.push(hashLeaf(cosignMessage(anchor)));
    this.anchors.set(encodeHex(anchor.seedId), { wire, leafIndex: this.leaves.length - 1 });
    this.cosigned.set(encodeHex(anchor.seedId), anchor);
  }
  private readonly cosigned = new Map<string, Anchor>();

  body(seed: string): unknown {
    const a = this.anchors.get(seed)!;
    const anchor = this.cosigned.get(seed)!;
    const checkpoint = this.note();
    const proof = inclusionProof(a.leafIndex, this.leaves.length, memoryHashReader(this.leaves));
    return {
      anchor: a.wire,
      cosignature: {
        witness_name: this.name,
        witness_public_key: encodeHex(this.publicKey),
        signature: encodeHex(signEd25519(this.key, cosignMessage(anchor))),
        timestamp: '2023-11-14T22:13:20Z',
      },
      inclusion: {
        log_origin: this.origin,
        leaf_index: a.leafIndex,
        tree_size: this.leaves.length,
        hashes: proof.map(encodeBase64),
        checkpoint,
        tlog_proof: formatTlogProof({ index: a.leafIndex, proof, checkpoint }),
      },
      duplicity: this.duplicities.has(seed),
    };
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0]!;
      const send = (status: number, body: string | Uint8Array, type = 'application/json'): void => {
        res.writeHead(status, { 'content-type': type });
        res.end(body);
      };
      if (path === '/health') {
        send(
          200,
          stringifyJson({
            status: 'ok',
            witness_name: this.name,
            roles: ['anchor'],
            version: 'test',
            log: { origin: this.origin, size: this.leaves.length },
            keys: { witness: encodeHex(this.publicKey), log_vkey: '', cosign_vkey: null },
          }),
        );
      } else if (path === '/log/checkpoint') {
        send(200, this.checkpointOverride ?? this.note(), 'text/plain; charset=utf-8');
      } else if (path.startsWith('/log/tile/')) {
        const tile = parseTilePath(path.slice('/log/'.length));
        if (tile.kind !== 'tile') send(404, '{}');
        else
          send(
            200,
            buildTile(tile, memoryHashReader(tile.level === 0 ? (this.tileLeaves ?? this.leaves) : this.leaves)),
            'application/octet-stream',
          );
      } else if (path.startsWith('/v1/anchor/')) {
        const seed = path.slice('/v1/anchor/'.length);
        if (!this.anchors.has(seed)) send(404, stringifyJson({ code: 'not_found' }));
        else send(200, stringifyJson(this.body(seed)));
      } else if (path.startsWith('/v1/duplicity/')) {
        const proof = this.duplicities.get(path.slice('/v1/duplicity/'.length));
        if (proof === undefined) send(404, stringifyJson({ code: 'not_found' }));
        else send(200, stringifyJson(proof));
      } else {
        send(404, stringifyJson({ code: 'not_found' }));
      }
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      if (this.server === undefined) resolve();
      else
        this.server.close(() => {
          resolve();
        });
    });
  }
}

const started: FakeWitness[] = [];
after(async () => {
  await Promise.all(started.map((w) => w.stop()));
});
let nextWitness = 1;
async function fakes(n: number): Promise<FakeWitness[]> {
  const out: FakeWitness[] = [];
  for (let i = 0; i < n; i++) {
    const w = new FakeWitness(nextWitness++);
    await w.start();
    started.push(w);
    out.push(w);
  }
  return out;
}
let nextSeed = 1;
const newSeed = (): Uint8Array => fill(nextSeed++);
function config(ws: readonly FakeWitness[], seeds: Uint8Array[], over: Partial<MonitorConfig> = {}): MonitorConfig {
  const witnessSet = makeWitnessSet(
    Math.min(2, ws.length),
    ws.map((w) => ({ name: w.name, publicKey: w.publicKey, url: w.url })),
  );
  return { witnesses: ws.map((w) => w.url), witnessSet, registry, seeds, http, ...over };
}
/** What a restarted monitor reads back from its --state file. */
const roundTrip = (state: MonitorState): MonitorState => parseMonitorState(parseJsonBody(stringifyJson(state)));
const kinds = (fs: Finding[]): string[] => fs.map((f) => `${f.kind} ${f.witness ?? ''}`).sort();
const anchorOf = (seed: Uint8Array, index: number, head: number, party = alice): Anchor =>
  signAnchor(party, { seedId: seed, index, head: fill(head), cumulative: BigInt(index), timestamp: T0 + (index % 1000) });
/** A co-signable anchor whose party signature is garbage. */
function unsigned(seed: Uint8Array, index: number, head: number): Anchor {
  const a = anchorOf(seed, 1, head);
  return { ...a, index, sigParty: { ...a.sigParty, signature: fill(0x55, 64) } };
}

void test('8.2: a member serving index 10^12 with a garbage party signature (or under a key no party holds) is a forged_anchor finding, never a high-water mark', async () => {
  const [w1, w2, w3] = await fakes(3);
  const seed = newSeed();
  const seed2 = newSeed();
  for (const w of [w1!, w2!, w3!]) w.cosign(anchorOf(seed, 1, 0x11));
  for (const w of [w1!, w2!]) w.cosign(anchorOf(seed2, 1, 0x21));
  const state = emptyMonitorState();
  const cfg = config([w1!, w2!, w3!], [seed, seed2]);
  assert.deepEqual(
    (await monitorPoll(cfg, state, 1000)).findings.map((f) => f.kind),
    ['withholding'],
    'baseline: w3 lacks seed2',
  );

  // w3 co-signs (validly, under its own key) an anchor at index 10^12 the party never signed,
  // and on seed2 one signed by a key that is in no registry.
  w3!.cosign(unsigned(seed, 1e12, 0x12));
  w3!.cosign(anchorOf(seed2, 1e12, 0x22, mallory));
  const report = await monitorPoll(cfg, state, 1001);
  assert.deepEqual(kinds(report.findings), [`forged_anchor ${w3!.name}`, `forged_anchor ${w3!.name}`]);
  for (const f of report.findings) assert.equal(f.severity, 'alert');
  assert.ok(
    report.findings.some((f) => f.seed === encodeHex(seed) && /party signature does not verify/.test(f.message)),
    report.findings.map((f) => f.message).join('\n'),
  );
  assert.ok(report.findings.some((f) => f.seed === encodeHex(seed2) && /not a key of any party in the registry/.test(f.message)));
  // Nothing of it persists as a high-water mark or an observation: a restarted monitor stays quiet.
  const saved = roundTrip(state);
  assert.equal(saved.witnesses[w3!.name]!.anchors[encodeHex(seed)]!.anchor.index, 1);
  assert.ok(saved.seeds[encodeHex(seed)]!.observations.every((o) => o.anchor.index === 1));
  const again = await monitorPoll(cfg, saved, 1002);
  assert.deepEqual(kinds(again.findings), [`forged_anchor ${w3!.name}`, `forged_anchor ${w3!.name}`]);

  // A state written by the old monitor (the forged mark already in it) is cleaned on load.
  const poisoned = roundTrip(state);
  poisoned.witnesses[w3!.name]!.anchors[encodeHex(seed)] = {
    anchor: w3!.anchors.get(encodeHex(seed))!.wire,
    cosignature: (w3!.body(encodeHex(seed)) as { cosignature: never }).cosignature,
    seen: 1001,
  };
  const cleaned = await monitorPoll(cfg, poisoned, 1003);
  assert.ok(!cleaned.findings.some((f) => f.kind === 'withholding'), kinds(cleaned.findings).join());
});

void test("8.3: a duplicity proof signed by a key that is not the party's is a forged_duplicity finding against the witness, not party duplicity", async () => {
  const [w1, w2] = await fakes(2);
  const seed = newSeed();
  for (const w of [w1!, w2!]) w.cosign(anchorOf(seed, 1, 0x31));
  // A well-formed proof that verifies offline — under mallory's key, not the party's.
  w1!.duplicities.set(
    encodeHex(seed),
    encodeDuplicityProof(makeDuplicityProof(anchorOf(seed, 1, 0x31, mallory), anchorOf(seed, 1, 0x32, mallory))),
  );
  const report = await monitorPoll(config([w1!, w2!], [seed]), emptyMonitorState(), 2000);
  assert.deepEqual(kinds(report.findings), [`forged_duplicity ${w1!.name}`]);
  assert.match(report.findings[0]!.message, /not signed by a key of any party in the registry/);

  // The same witness serving a proof under the party's own key: that is party duplicity.
  w1!.duplicities.set(encodeHex(seed), encodeDuplicityProof(makeDuplicityProof(anchorOf(seed, 1, 0x31), anchorOf(seed, 1, 0x32))));
  const real = await monitorPoll(config([w1!, w2!], [seed]), emptyMonitorState(), 2001);
  assert.deepEqual(kinds(real.findings), [`duplicity ${w1!.name}`]);
});

void test('8.4: forged tiles (hashing to the signed root, lying below it) are tiles_mismatch, not a proven log_inconsistent', async () => {
  const [w1] = await fakes(1);
  for (let i = 0; i < 100; i++) w1!.leaves.push(hashLeaf(fill(i & 0xff, 8)));
  const state = emptyMonitorState();
  const cfg = config([w1!], []);
  assert.deepEqual((await monitorPoll(cfg, state, 3000)).findings, []);
  for (let i = 100; i < 300; i++) w1!.leaves.push(hashLeaf(fill(i & 0xff, 8)));
  // The level-1 tile is honest (the root matches the signed checkpoint); the level-0 tile under
  // it is not: the first 256 leaf hashes are replaced.
  w1!.tileLeaves = w1!.leaves.map((h, i) => (i < 256 ? hashLeaf(fill(0xee, i + 1)) : h));
  const report = await monitorPoll(cfg, state, 3001);
  assert.deepEqual(kinds(report.findings), [`tiles_mismatch ${w1!.name}`]);
  assert.equal(report.findings[0]!.severity, 'alert');
  // Honest tiles again: consistent, the high-water mark moves on.
  w1!.tileLeaves = undefined;
  assert.deepEqual((await monitorPoll(cfg, state, 3002)).findings, []);
  assert.equal(parseCheckpoint(parseNote(state.witnesses[w1!.name]!.checkpoint!).text).size, 300);
});

void test('8.5: a split view — /log/checkpoint and the anchor responses carry two signed checkpoints of one size with different roots — is log_equivocation', async () => {
  const [w1, w2] = await fakes(2);
  const seed = newSeed();
  for (const w of [w1!, w2!]) w.cosign(anchorOf(seed, 1, 0x41));
  // w1 shows the monitor's /log/checkpoint another tree of the same size than the one its anchor
  // response is included in.
  const other = w1!.leaves.map((h, i) => (i === 0 ? hashLeaf(fill(0x99)) : h));
  w1!.checkpointOverride = w1!.note(other);
  const s1 = emptyMonitorState();
  const report = await monitorPoll(config([w1!, w2!], [seed]), s1, 4000);
  assert.deepEqual(kinds(report.findings), [`log_equivocation ${w1!.name}`]);
  const f = report.findings[0]!;
  assert.equal(f.severity, 'alert');
  const ev = f.evidence as { v: string; origin: string; a: string; b: string };
  assert.equal(ev.v, 'anchor-witness/log-equivocation/v1');
  assert.equal(ev.origin, w1!.origin);
  const verifier = [ed25519NoteVerifier(w1!.origin, w1!.publicKey)];
  const a = (await verifyCheckpoint(ev.a, verifier, w1!.origin)).checkpoint;
  const b = (await verifyCheckpoint(ev.b, verifier, w1!.origin)).checkpoint;
  assert.equal(a.size, b.size);
  assert.notEqual(encodeHex(a.rootHash), encodeHex(b.rootHash));
  // The HTML report offers both notes for download, with the commands that check them.
  const page = renderMonitorReport({ state: s1, polls: [report], generatedAt: 4000 });
  assert.match(page, /data-kind="log_equivocation"/);
  assert.match(page, /download="finding-1-log_equivocation-a\.txt"[^>]*>checkpoint a<\/a>/);
  assert.ok(page.includes(`anchor-witness verify checkpoint finding-1-log_equivocation-b.txt --witness-key ${encodeHex(w1!.publicKey)}`));
  // … and the evidence document with the command that proves it offline under the log's vkey.
  assert.match(page, /download="finding-1-log_equivocation-log-equivocation\.json"/);
  assert.ok(
    page.includes(`anchor-witness verify log-equivocation finding-1-log_equivocation-log-equivocation.json --log-vkey ${w1!.origin}+`),
  );

  // Across polls too: the state remembers what it saw; the other view a poll later is caught.
  const [w3, w4] = await fakes(2);
  const seed2 = newSeed();
  for (const w of [w3!, w4!]) w.cosign(anchorOf(seed2, 1, 0x42));
  const state = emptyMonitorState();
  assert.deepEqual((await monitorPoll(config([w3!, w4!], [seed2]), state, 4001)).findings, []);
  w3!.checkpointOverride = w3!.note(w3!.leaves.map((h, i) => (i === 0 ? hashLeaf(fill(0x98)) : h)));
  const restarted = roundTrip(state);
  const later = await monitorPoll(config([w3!, w4!], [seed2]), restarted, 4002);
  assert.deepEqual(kinds(later.findings), [`log_equivocation ${w3!.name}`]);
  // A proven split view is a permanent fact: still reported after the witness goes back to one
  // view, and after a restart.
  w3!.checkpointOverride = undefined;
  assert.deepEqual(kinds((await monitorPoll(config([w3!, w4!], [seed2]), roundTrip(restarted), 4003)).findings), [
    `log_equivocation ${w3!.name}`,
  ]);
});

void test('8.6: a witness serving the same anchor with its head upper-cased is not an equivocation or a disagreement', async () => {
  const [w1, w2] = await fakes(2);
  const seed = newSeed();
  const a = anchorOf(seed, 1, 0xab);
  w1!.cosign(a);
  w2!.cosign(a, { ...encodeAnchor(a), head: encodeHex(a.head).toUpperCase() });
  const state = emptyMonitorState();
  const r0 = await monitorPoll(config([w1!, w2!], [seed]), state, 5000);
  assert.deepEqual(kinds(r0.findings), [], r0.findings.map((f) => f.message).join('\n'));
  // And the same witness switching case between polls is not an equivocation either.
  w2!.anchors.set(encodeHex(seed), { wire: encodeAnchor(a), leafIndex: w2!.anchors.get(encodeHex(seed))!.leafIndex });
  assert.deepEqual(kinds((await monitorPoll(config([w1!, w2!], [seed]), state, 5001)).findings), []);
});

void test("watching seeds without the parties' keys (no registry) is refused: nothing could tell a forged anchor from a real one", async () => {
  const [w1] = await fakes(1);
  const unpinned: MonitorConfig = { ...config([w1!], [newSeed()]) };
  delete unpinned.registry;
  await assert.rejects(monitorPoll(unpinned, emptyMonitorState(), 6000), { code: 'usage' });
  await assert.rejects(monitorPoll({ ...unpinned, seeds: [], allDuplicities: true }, emptyMonitorState(), 6000), { code: 'usage' });
  assert.deepEqual(
    (await monitorPoll({ ...unpinned, seeds: [] }, emptyMonitorState(), 6000)).findings,
    [],
    'the log alone needs no party key',
  );
});
