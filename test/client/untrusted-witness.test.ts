// Issue 16 item 8 (client side): every witness is untrusted. Each test is the reproduction of one
// item, with a test-side "malicious witness" (test/helpers/malicious-witness.ts) that mints
// receipts, checkpoints and duplicity proofs under keys of its own choosing:
//   8.1 a receipt for an anchor the party never signed (garbage sig_party, or a key of the witness's
//       own) must not verify — the party key is pinned by the caller;
//   8.3 a 409 whose duplicity proof is signed by another key (or for another seed) is that
//       witness's misbehaviour, never the party's duplicity, and never freezes the chain;
//   8.6 hex is compared as bytes: an upper-cased proof or key is the same value;
//   8.7 a witness set built in code is re-validated (one receipt never counts twice); cosigned
//       checkpoints count witnesses (names), refuse one key under two names, quorum 0 and an origin that is not the log key's
//       name; a size-0 checkpoint with a non-empty root is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ed25519KeyFromSeed } from '../../src/crypto/ed25519.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { stringifyJson } from '../../src/encoding/json.ts';
import { formatCheckpoint } from '../../src/note/checkpoint.ts';
import { signNote } from '../../src/note/signed-note.ts';
import { ed25519NoteSigner } from '../../src/note/vkey.ts';
import { sha256 } from '../../src/crypto/sha256.ts';
import {
  encodePartyState,
  freeze,
  initPartyState,
  interpretAnchorResponse,
  makeWitnessSet,
  verifyAnchorResponse,
  verifyCheckpoint,
  verifyCosignedCheckpoint,
  verifyFinalized,
  verifyReceipt,
  witnessSetSaid,
  type PartyKey,
  type WitnessSet,
} from '../../src/client/index.ts';
import { ed25519NoteVerifier } from '../../src/note/vkey.ts';
import {
  anchorResponse,
  checkpointNote,
  duplicityProof,
  fakeParty,
  fakeWitness,
  garbageSignature,
  mintAnchor,
  receiptFor,
  upperHex,
} from '../helpers/malicious-witness.ts';
import { ed25519Cosigner } from '../../src/note/cosigner.ts';

const alice = fakeParty(0x09);
const mallory = fakeParty(0x0a); // the witness's own party key: in no registry
const alicePin = { curve: alice.curve, publicKey: alice.publicKey };
const fill = (b: number, n = 32): Uint8Array => new Uint8Array(n).fill(b);

void test('8.1 verifyReceipt / verifyAnchorResponse: a receipt minted for an anchor the party never signed is refused under the pinned party key', async () => {
  const w = fakeWitness({ seed: 0x66 });
  const genuine = mintAnchor(alice, { index: 1 });
  const garbage = mintAnchor(alice, { index: 2 }, { signature: garbageSignature() }); // alice's key, signature garbage
  const minted = mintAnchor(mallory, { index: 3 }); // a valid signature, by the witness's own key
  // Every one of them is validly co-signed and logged by the (pinned) witness.
  const receipts = [genuine, garbage, minted].map((a) => receiptFor(w, a));

  assert.equal((await verifyReceipt(genuine, receipts[0]!, w.pin, alicePin)).anchor.index, 1);
  await assert.rejects(verifyReceipt(garbage, receipts[1]!, w.pin, alicePin), { code: 'party_signature_invalid' });
  await assert.rejects(verifyReceipt(minted, receipts[2]!, w.pin, alicePin), {
    code: 'party_key_mismatch',
    message: new RegExp(encodeHex(mallory.publicKey)),
  });
  // A registry entry's current keys: any one may sign; an empty entry or nothing pins nothing.
  const p256 = fakeParty(0, 'p256');
  assert.equal((await verifyReceipt(genuine, receipts[0]!, w.pin, [{ curve: 'p256', publicKey: p256.publicKey }, alicePin])).leafIndex, 0);
  await assert.rejects(verifyReceipt(genuine, receipts[0]!, w.pin, []), { code: 'party_unpinned' });
  await assert.rejects(verifyReceipt(genuine, receipts[0]!, w.pin, undefined as never), { code: 'party_unpinned' });
  // Same key bytes under the other curve tag is not the pinned key: 32 bytes are no P-256 key, so
  // the pin itself is refused (usage, issue 27 item 5), never taken for a verdict about the anchor.
  await assert.rejects(verifyReceipt(genuine, receipts[0]!, w.pin, { curve: 'p256', publicKey: alice.publicKey }), {
    code: 'usage',
  });

  // The whole 200 body, as `verify inclusion` reads it.
  assert.equal((await verifyAnchorResponse(anchorResponse(w, genuine), w.pin, alicePin)).anchor.index, 1);
  await assert.rejects(verifyAnchorResponse(anchorResponse(w, garbage), w.pin, alicePin), { code: 'party_signature_invalid' });
  await assert.rejects(verifyAnchorResponse(anchorResponse(w, minted), w.pin, alicePin), { code: 'party_key_mismatch' });
});

void test('8.1 verifyFinalized: with the party pinned, an anchor minted under another key is not final even when every member co-signed it', async () => {
  const ws = [fakeWitness({ seed: 0x61, name: 'w1.example' }), fakeWitness({ seed: 0x62, name: 'w2.example' })];
  const set = makeWitnessSet(
    2,
    ws.map((w) => w.member),
  );
  const witnessSet = { said: await witnessSetSaid(set), threshold: 2 };
  const minted = mintAnchor(mallory, { witnessSet });
  const receipts = ws.map((w) => receiptFor(w, minted));
  assert.equal((await verifyFinalized(minted, set, receipts)).final, true, 'without a party pin, the witnesses vouch for the key');
  const r = await verifyFinalized(minted, set, receipts, { party: alicePin });
  assert.deepEqual([r.final, r.code], [false, 'party_key_mismatch']);
  const own = mintAnchor(alice, { witnessSet });
  assert.equal(
    (
      await verifyFinalized(
        own,
        set,
        ws.map((w) => receiptFor(w, own)),
        { party: alicePin },
      )
    ).final,
    true,
  );
});

function member(w: ReturnType<typeof fakeWitness>) {
  return { ...w.member, url: 'http://127.0.0.1:1' };
}

void test('8.3 a 409 whose proof is signed by another key, or is for another seed, is the witness misbehaving: no duplicity, no freeze', async () => {
  const w = fakeWitness({ seed: 0x66 });
  const seedId = fill(0x5e);
  const submitted = mintAnchor(alice, { seedId, index: 4 });
  const say409 = (wire: unknown) => interpretAnchorResponse(submitted, member(w), 409, stringifyJson(wire));

  // A proof that verifies offline — by mallory, the witness's own key, for the party's seed and index.
  const foreign = duplicityProof(mallory, { seedId, index: 4 });
  const r1 = await say409(foreign.wire);
  assert.ok(r1.kind === 'invalid_response', r1.kind);
  assert.equal(r1.code, 'duplicity_proof_foreign');
  // A real proof by the party's key, for another seed (another chain of the same party).
  const otherSeed = duplicityProof(alice, { seedId: fill(0x77), index: 4 });
  const r2 = await say409(otherSeed.wire);
  assert.equal(r2.kind === 'invalid_response' && r2.code, 'duplicity_proof_foreign');
  // The party's own fork of this seed: duplicity (also at another index — SPEC §3.3 check 9
  // answers a frozen seed with the stored proof, whatever index is submitted).
  assert.equal((await say409(duplicityProof(alice, { seedId, index: 4 }).wire)).kind, 'duplicity');
  assert.equal((await say409(duplicityProof(alice, { seedId, index: 2 }).wire)).kind, 'duplicity');

  // The chain state refuses to freeze on somebody else's proof.
  const key: PartyKey = { curve: 'ed25519', privateKey: alice.key, publicKey: alice.publicKey };
  const set = makeWitnessSet(1, [w.member]);
  const s = initPartyState({ keyFile: '/k.pem', key, party: { agent: 'did:keri:EAlice' }, witnessSet: set, seedId });
  await assert.rejects(freeze(s, foreign.wire), { code: 'duplicity_proof_foreign' });
  await assert.rejects(freeze(s, otherSeed.wire), { code: 'duplicity_proof_foreign' });
  assert.equal((await encodePartyState(s)).frozen, null);
  await freeze(s, duplicityProof(alice, { seedId, index: 4 }).wire);
  assert.equal((await encodePartyState(s)).frozen?.index, 4);
});

void test('8.6 hex is compared as bytes: an upper-cased 200 body and an upper-cased proof are the same values; the state keeps the canonical form', async () => {
  const w = fakeWitness({ seed: 0x66 });
  const seedId = fill(0x5e);
  const submitted = mintAnchor(alice, { seedId, index: 4, head: fill(0xab) });
  const ok = await interpretAnchorResponse(submitted, member(w), 200, stringifyJson(upperHex(anchorResponse(w, submitted))));
  assert.equal(ok.kind, 'cosigned', JSON.stringify(ok));
  const receipt = receiptFor(w, submitted);
  const upperKey = {
    ...receipt,
    cosignature: { ...receipt.cosignature, witness_public_key: receipt.cosignature.witness_public_key.toUpperCase() },
  };
  assert.equal((await verifyReceipt(submitted, upperKey, w.pin, { curve: 'ed25519', publicKey: alice.publicKey })).leafIndex, 1);

  const proof = duplicityProof(alice, { seedId, index: 4, heads: [fill(0xab), fill(0xcd)] });
  const dup = await interpretAnchorResponse(submitted, member(w), 409, stringifyJson(upperHex(proof.wire)));
  assert.ok(dup.kind === 'duplicity', dup.kind);
  assert.equal(dup.wire.anchor_a.head, 'ab'.repeat(32));
  const key: PartyKey = { curve: 'ed25519', privateKey: alice.key, publicKey: alice.publicKey };
  const s = initPartyState({
    keyFile: '/k.pem',
    key,
    party: { agent: 'did:keri:EAlice' },
    witnessSet: makeWitnessSet(1, [w.member]),
    seedId,
  });
  await freeze(s, upperHex(proof.wire));
  const stored = (await encodePartyState(s)).frozen!;
  assert.deepEqual(
    [stored.seed_id, stored.anchor_a.head, stored.anchor_b.sig_party.public_key],
    [encodeHex(seedId), 'ab'.repeat(32), encodeHex(alice.publicKey)],
  );
});

void test('8.7 verifyFinalized re-validates a set built in code: a duplicated member name or one key under two names never counts one receipt twice', async () => {
  const w1 = fakeWitness({ seed: 0x61, name: 'w1.example' });
  const w2 = fakeWitness({ seed: 0x62, name: 'w2.example' });
  const check = async (set: WitnessSet, receiptsOf: (a: ReturnType<typeof mintAnchor>) => ReturnType<typeof receiptFor>[]) => {
    const anchor = mintAnchor(alice, { witnessSet: { said: await witnessSetSaid(set), threshold: set.threshold } });
    return await verifyFinalized(anchor, set, receiptsOf(anchor));
  };
  // Two entries named w1 (a set built in code, never through makeWitnessSet): one receipt.
  const twice: WitnessSet = { threshold: 2, members: [w1.member, w1.member] };
  const r1 = await check(twice, (a) => [receiptFor(w1, a)]);
  assert.deepEqual([r1.final, r1.code], [false, 'witness_set_invalid']);
  assert.match(r1.reason, /duplicate member name/);
  // One key under two names: the cosignature's witness_name is not signed, so a copy of w1's
  // receipt renamed "w1b.example" would verify for the second name.
  const aliasOf = { ...w1.member, name: 'w1b.example', logOrigin: w1.origin.replace('w1', 'w1b') };
  const alias: WitnessSet = { threshold: 2, members: [w1.member, aliasOf] };
  const r2 = await check(alias, (a) => {
    const r = receiptFor(w1, a);
    return [r, { ...r, cosignature: { ...r.cosignature, witness_name: 'w1b.example' } }];
  });
  assert.deepEqual([r2.final, r2.code], [false, 'witness_set_invalid']);
  assert.match(r2.reason, /duplicate member key/);
  // A threshold of 0 built in code.
  const zero: WitnessSet = { threshold: 0, members: [w1.member] };
  assert.equal((await check(zero, () => [])).code, 'witness_set_invalid');
  // A valid set still works, built in code without makeWitnessSet (unsorted members are fine).
  const fine: WitnessSet = { threshold: 2, members: [w2.member, w1.member] };
  const r3 = await check(fine, (a) => [receiptFor(w1, a), receiptFor(w2, a)]);
  assert.deepEqual([r3.final, r3.valid], [true, 2]);
});

void test('8.7 verifyCosignedCheckpoint: one key under two names counts once (refused), quorum 0 refused, origin must be the log key name', async () => {
  const text = formatCheckpoint({ origin: 'log.example/a', size: 3, rootHash: sha256(new Uint8Array([1])), extensions: [] });
  const log = ed25519NoteSigner('log.example/a', ed25519KeyFromSeed(fill(1)));
  const c1 = ed25519Cosigner('w1.example', ed25519KeyFromSeed(fill(2))).noteSigner(1700000000);
  const c1alias = ed25519Cosigner('w1b.example', ed25519KeyFromSeed(fill(2))).noteSigner(1700000000); // same key
  const c2 = ed25519Cosigner('w2.example', ed25519KeyFromSeed(fill(3))).noteSigner(1700000000);
  // w1's single cosignature, its line copied under the alias name (the signature does not cover the name).
  const note = signNote(text, [log, c1, c1alias]);
  await assert.rejects(verifyCosignedCheckpoint(note, { cosigners: [c1.verifier, c1alias.verifier] }), {
    code: 'usage',
    message: /under two names/,
  });
  await assert.rejects(verifyCosignedCheckpoint(note, { cosigners: [c1.verifier, c1alias.verifier, c2.verifier], quorum: 2 }), {
    code: 'usage',
  });
  // quorum 0 would accept a checkpoint nobody cosigned.
  const bare = signNote(text, [log]);
  await assert.rejects(verifyCosignedCheckpoint(bare, { cosigners: [c1.verifier], quorum: 0 }), { code: 'usage', message: /quorum/ });
  await assert.rejects(verifyCosignedCheckpoint(bare, { cosigners: [c1.verifier], quorum: 1.5 }), { code: 'usage' });
  await assert.rejects(verifyCosignedCheckpoint(bare, { cosigners: [c1.verifier], quorum: 2 }), { code: 'usage' });
  // The checkpoint's origin must be the name of the log key that signed it.
  const other = ed25519NoteSigner('other.example/log', ed25519KeyFromSeed(fill(1)));
  const misnamed = signNote(text, [other, c1]);
  await assert.rejects(verifyCosignedCheckpoint(misnamed, { cosigners: [c1.verifier], log: [other.verifier] }), {
    code: 'checkpoint_wrong_origin',
  });
  // The honest case still verifies.
  assert.equal(
    (await verifyCosignedCheckpoint(signNote(text, [log, c1, c2]), { cosigners: [c1.verifier, c2.verifier], log: [log.verifier] }))
      .cosigners.length,
    2,
  );
});

void test('8.7 a size-0 checkpoint with a non-empty root is refused (0 → 0 is never "consistent" with it)', async () => {
  const w = fakeWitness({ seed: 0x66 });
  const v = ed25519NoteVerifier(w.origin, w.publicKey);
  assert.equal((await verifyCheckpoint(checkpointNote(w, 0), [v], w.origin)).checkpoint.size, 0);
  const forged = signNote(formatCheckpoint({ origin: w.origin, size: 0, rootHash: sha256(new Uint8Array([7])), extensions: [] }), [
    ed25519NoteSigner(w.origin, w.key),
  ]);
  await assert.rejects(verifyCheckpoint(forged, [v], w.origin), { code: 'checkpoint_invalid', message: /size 0/ });
  const c1 = ed25519Cosigner('w1.example', ed25519KeyFromSeed(fill(2))).noteSigner(1700000000);
  const forgedCosigned = signNote(
    formatCheckpoint({ origin: 'log.example/a', size: 0, rootHash: sha256(new Uint8Array([7])), extensions: [] }),
    [c1],
  );
  await assert.rejects(verifyCosignedCheckpoint(forgedCosigned, { cosigners: [c1.verifier] }), { code: 'checkpoint_invalid' });
});
