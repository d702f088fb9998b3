// Client SDK units: witness-set SAIDs, chain rules, seed derivation (SPEC §3.1 vector), party
// state round trip, Retry-After, consistency from tiles, cosignature/v1 checkpoints, party keys.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { sha256 } from '../../src/crypto/sha256.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { stringifyJson } from '../../src/encoding/json.ts';
import { formatCheckpoint, type Checkpoint } from '../../src/note/checkpoint.ts';
import { signNote } from '../../src/note/signed-note.ts';
import { ed25519NoteSigner } from '../../src/note/vkey.ts';
import { memoryHashReader, treeRoot } from '../../src/tlog/merkle.ts';
import { buildTile, type Tile } from '../../src/tlog/tiles.ts';
import { hashLeaf } from '../../src/tlog/hash.ts';
import {
  checkConsistencyFromTiles,
  encodePartyState,
  encodeWitnessSet,
  generatePartyKey,
  initPartyState,
  makeWitnessSet,
  nextAnchorFields,
  parseJsonBody,
  parsePartyState,
  parseWitnessSet,
  partyKeyFromPem,
  partyKeyToPem,
  partySeedId,
  retryAfterMs,
  signNextAnchor,
  verifyCosignedCheckpoint,
  verifyInconsistency,
  witnessSetSaid,
} from '../../src/client/index.ts';
import { fill } from '../helpers/anchors.ts';
import { ed25519Cosigner } from '../../src/note/cosigner.ts';

const key = (b: number) => ed25519PublicKeyBytes(ed25519KeyFromSeed(fill(b)));
const members = [
  { name: 'w2.example.org', publicKey: key(0x42) },
  { name: 'w1.example.org', publicKey: key(0x41), url: 'https://w1.example.org' },
  { name: 'w3.example.org', publicKey: key(0x43), logOrigin: 'w3.example.org/log' },
];

void test('witness set SAID: known answer, order-independent, url outside the digest, threshold inside', async () => {
  const set = makeWitnessSet(2, members);
  const said = await witnessSetSaid(set);
  // Known answer (also in docs/client.md), cross-checked with Python's json.dumps(sort_keys=True,
  // separators=(',', ':')) + hashlib.sha256 + urlsafe_b64encode: members keyed by Ed25519 seeds 0x41, 0x42, 0x43.
  assert.equal(said, 'IFw0M0qVGw4SHgcktXgryb3Kjb8o531JAMm-UOG9yPGi');
  assert.match(said, /^I[A-Za-z0-9_-]{43}$/);
  assert.deepEqual(
    set.members.map((m) => m.name),
    ['w1.example.org', 'w2.example.org', 'w3.example.org'],
  );
  assert.equal(set.members[1]!.logOrigin, 'w2.example.org/anchors');
  assert.equal(await witnessSetSaid(makeWitnessSet(2, [...members].reverse())), said);
  assert.equal(
    await witnessSetSaid(
      makeWitnessSet(
        2,
        members.map((m) => ({ ...m, url: 'https://elsewhere.example' })),
      ),
    ),
    said,
  );
  assert.notEqual(await witnessSetSaid(makeWitnessSet(3, members)), said);
  assert.notEqual(
    await witnessSetSaid(
      makeWitnessSet(
        2,
        members.map((m, i) => (i === 2 ? { ...m, logOrigin: 'w3.example.org/other' } : m)),
      ),
    ),
    said,
  );

  const wire = await encodeWitnessSet(set);
  assert.equal(wire.d, said);
  const back = await parseWitnessSet(parseJsonBody(stringifyJson(wire)));
  assert.equal(await witnessSetSaid(back), said);
  assert.equal(back.members[0]!.url, 'https://w1.example.org');
  const withoutD: Partial<typeof wire> = { ...wire };
  delete withoutD.d;
  assert.equal(await witnessSetSaid(await parseWitnessSet(withoutD)), said);
});

void test('witness set validation', async () => {
  const wire = await encodeWitnessSet(makeWitnessSet(2, members));
  const bad: [unknown, RegExp][] = [
    [{ ...wire, d: 'IAAAA' }, /d is "IAAAA" but the set's SAID is/],
    [{ ...wire, threshold: 0 }, /threshold must be an integer in 1\.\.3/],
    [{ ...wire, threshold: 4 }, /threshold/],
    [{ ...wire, members: [] }, /at least one member/],
    [{ ...wire, members: [wire.members[0], wire.members[0]] }, /duplicate member name/],
    [{ ...wire, members: [wire.members[0], { ...wire.members[1], public_key: wire.members[0]!.public_key }] }, /duplicate member key/],
    [{ ...wire, extra: 1 }, /unknown field "extra"/],
    [{ ...wire, threshold: 1, members: [{ ...wire.members[0], curve: 'p256' }] }, /witness keys are ed25519/],
    [{ ...wire, threshold: 1, members: [{ ...wire.members[0], name: 'no-dot/x' }] }, /not a valid witness name/],
    [{ ...wire, threshold: 1, members: [{ ...wire.members[0], public_key: '00'.repeat(32) }] }, /public_key/],
    [{ ...wire, threshold: 1, members: [{ ...wire.members[0], url: 'ftp://x.example' }] }, /http\(s\) URL/],
  ];
  for (const [doc, re] of bad) await assert.rejects(parseWitnessSet(doc), { code: 'witness_set_invalid', message: re });
});

void test('seed derivation follows the SPEC §3.1 vector; chain rules refuse regressions', () => {
  assert.equal(
    encodeHex(partySeedId({ root: 'root', agent: 'agent', scope: 'ESeal' })),
    '34bd10b6ba98832e3303b89981018793572ce78a82ff45bc4446772e80ca6012',
  );
  assert.equal(
    encodeHex(partySeedId({ root: 'did:keri:root', agent: 'did:keri:agent', scope: 'ESeal' })),
    '34bd10b6ba98832e3303b89981018793572ce78a82ff45bc4446772e80ca6012',
  );
  const chain = { seedId: fill(7), witnessSet: { said: 'S', threshold: 1 } };
  const first = nextAnchorFields(undefined, chain, { head: fill(1), timestamp: 100 });
  assert.deepEqual([first.index, first.cumulative, first.timestamp], [0, 0n, 100]);
  const prev = { ...first, sigParty: { curve: 'ed25519' as const, publicKey: fill(0), signature: fill(0, 64) }, index: 5, cumulative: 50n };
  const next = nextAnchorFields(prev, chain, { head: fill(2), timestamp: 100, addCumulative: 7n });
  assert.deepEqual([next.index, next.cumulative], [6, 57n]);
  assert.equal(nextAnchorFields(prev, chain, { head: fill(2), timestamp: 100, index: 9, cumulative: 50n }).index, 9);
  for (const input of [
    { head: fill(2), timestamp: 100, index: 5 },
    { head: fill(2), timestamp: 100, index: 4 },
    { head: fill(2), timestamp: 100, cumulative: 49n },
    { head: fill(2), timestamp: 99 },
    { head: fill(2, 31), timestamp: 100 },
    { head: fill(2), timestamp: 100, cumulative: 1n << 128n },
  ]) {
    assert.throws(() => nextAnchorFields(prev, chain, input), { code: 'chain_invalid' });
  }
});

void test('party state: round trip, a pending anchor is superseded at a higher index, never replaced', async () => {
  for (const curve of ['ed25519', 'p256'] as const) {
    const k = generatePartyKey(curve);
    const k2 = partyKeyFromPem(partyKeyToPem(k));
    assert.equal(k2.curve, curve);
    assert.equal(encodeHex(k2.publicKey), encodeHex(k.publicKey));
    const s = initPartyState({
      keyFile: '/k.pem',
      key: k,
      party: { agent: 'EAgent', root: 'ERoot', scope: 'EScope' },
      witnessSet: makeWitnessSet(2, members),
    });
    const a = await signNextAnchor(s, k, { head: fill(1), timestamp: 10, cumulative: 1n << 100n });
    const b = await signNextAnchor(s, k, { head: fill(2), timestamp: 11 });
    assert.equal(b.superseded?.index, a.anchor.index);
    assert.equal(b.anchor.index, 1);
    assert.equal(b.anchor.cumulative, 1n << 100n);
    const back = await parsePartyState(parseJsonBody(stringifyJson(await encodePartyState(s))));
    assert.deepEqual(await encodePartyState(back), await encodePartyState(s));
    await assert.rejects(signNextAnchor(back, generatePartyKey(curve), { head: fill(3), timestamp: 12 }), { code: 'party_key_invalid' });
  }
  assert.throws(() => partyKeyFromPem('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----'), { code: 'party_key_invalid' });
});

void test('Retry-After: delta seconds and HTTP dates', () => {
  assert.equal(retryAfterMs('3'), 3000);
  assert.equal(retryAfterMs(' 0 '), 0);
  assert.equal(retryAfterMs('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')), 10_000);
  assert.equal(retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:29:00 GMT')), 0);
  assert.equal(retryAfterMs('soon'), undefined);
  assert.equal(retryAfterMs(null), undefined);
});

function treeOf(n: number, salt: number) {
  const leaves = Array.from({ length: n }, (_, i) => hashLeaf(new Uint8Array([salt, i & 0xff, i >> 8])));
  const read = memoryHashReader(leaves);
  const cp = (size: number): Checkpoint => ({ origin: 'log.example/a', size, rootHash: treeRoot(size, read), extensions: [] });
  const tiles = async (t: Tile) => Promise.resolve(buildTile(t, read));
  return { cp, tiles };
}

void test('consistency from tiles: consistent, inconsistent with offline evidence, tiles that do not match', async () => {
  const a = treeOf(70_000, 1);
  const ok = await checkConsistencyFromTiles(a.cp(300), a.cp(70_000), a.tiles);
  assert.equal(ok.status, 'consistent');
  assert.equal((await checkConsistencyFromTiles(a.cp(0), a.cp(5), a.tiles)).status, 'consistent');
  assert.equal((await checkConsistencyFromTiles(a.cp(5), a.cp(5), a.tiles)).status, 'consistent');

  const b = treeOf(70_000, 2); // another history served under the same origin
  const bad = await checkConsistencyFromTiles(a.cp(300), b.cp(600), b.tiles);
  assert.equal(bad.status, 'inconsistent');
  assert.equal(verifyInconsistency(a.cp(300), b.cp(600), bad.evidence), true);
  assert.equal(verifyInconsistency(b.cp(300), b.cp(600), bad.evidence), false, 'no inconsistency between consistent checkpoints');
  const same = await checkConsistencyFromTiles(a.cp(600), b.cp(600), b.tiles);
  assert.equal(same.status, 'inconsistent');
  const mismatch = await checkConsistencyFromTiles(a.cp(300), a.cp(600), b.tiles);
  assert.equal(mismatch.status, 'tiles_mismatch');

  // size 0 → size 0 where the newer one carries a non-empty root: a signed checkpoint no honest
  // log makes, never "consistent" (issue 16 item 8.7).
  const zeroForged: Checkpoint = { ...a.cp(0), rootHash: a.cp(5).rootHash };
  await assert.rejects(checkConsistencyFromTiles(a.cp(0), zeroForged, a.tiles), { code: 'checkpoint_invalid' });
  assert.equal((await checkConsistencyFromTiles(zeroForged, a.cp(5), a.tiles)).status, 'inconsistent');
});

void test('cosignature/v1: a checkpoint cosigned by witnesses verifies; a missing or altered cosignature does not', async () => {
  const text = formatCheckpoint({ origin: 'log.example/a', size: 3, rootHash: sha256(new Uint8Array([1])), extensions: [] });
  const log = ed25519NoteSigner('log.example/a', ed25519KeyFromSeed(fill(1)));
  const c1 = ed25519Cosigner('w1.example', ed25519KeyFromSeed(fill(2))).noteSigner(1700000000);
  const c2 = ed25519Cosigner('w2.example', ed25519KeyFromSeed(fill(3))).noteSigner(1700000001);
  const note = signNote(text, [log, c1, c2]);
  const r = await verifyCosignedCheckpoint(note, { cosigners: [c1.verifier, c2.verifier], log: [log.verifier] });
  assert.equal(r.logVerified, true);
  assert.deepEqual(r.cosigners, [
    { name: 'w1.example', timestamp: 1700000000n },
    { name: 'w2.example', timestamp: 1700000001n },
  ]);
  const onlyOne = signNote(text, [log, c1]);
  await assert.rejects(verifyCosignedCheckpoint(onlyOne, { cosigners: [c1.verifier, c2.verifier] }), { code: 'cosignature_missing' });
  assert.equal((await verifyCosignedCheckpoint(onlyOne, { cosigners: [c1.verifier, c2.verifier], quorum: 1 })).cosigners.length, 1);
  const lines = note.split('\n');
  const altered = lines
    .map((l) => (l.startsWith('— w2.example ') ? l.slice(0, -3) + (l.at(-3) === 'A' ? 'B' : 'A') + l.slice(-2) : l))
    .join('\n');
  await assert.rejects(verifyCosignedCheckpoint(altered, { cosigners: [c1.verifier, c2.verifier] }), { code: 'cosignature_invalid' });
  await assert.rejects(verifyCosignedCheckpoint(note, { cosigners: [log.verifier] }), { code: 'usage' });
});
