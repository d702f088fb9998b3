// SPEC §3.1 known-answer vectors (full values in research/upstream-witness.md §2.2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeHex } from '../../src/encoding/hex.ts';
import { partyMessage, cosignMessage } from '../../src/anchor/messages.ts';
import { deriveSeedId } from '../../src/anchor/seed.ts';
import { verifyPartySignature } from '../../src/anchor/party-signature.ts';
import { decodeAnchor, encodeAnchor } from '../../src/anchor/codec.ts';
import { hashLeaf } from '../../src/tlog/hash.ts';
import { stringifyJson } from '../../src/encoding/json.ts';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes, signEd25519 } from '../../src/crypto/ed25519.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';

const SEED_ID = '34bd10b6ba98832e3303b89981018793572ce78a82ff45bc4446772e80ca6012';

void test('seed derivation vector', () => {
  assert.equal(encodeHex(deriveSeedId('did:keri:root', 'did:keri:agent', 'ESeal')), SEED_ID);
});

void test('party message, party signature, leaf and cosignature vectors', () => {
  const party = edParty(0x09);
  assert.equal(encodeHex(party.publicKey), 'fd1724385aa0c75b64fb78cd602fa1d991fdebf76b13c58ed702eac835e9f618');
  const anchor = signAnchor(party, {
    seedId: deriveSeedId('did:keri:root', 'did:keri:agent', 'ESeal'),
    index: 1,
    head: fill(0x01),
    cumulative: 100n,
    timestamp: 1700000001,
    witnessSet: { said: 'EWitSet', threshold: 2 },
  });
  assert.equal(
    Buffer.from(partyMessage(anchor)).toString(),
    `{"cumulative":"100","head":"${'01'.repeat(32)}","index":1,"seedId":"${SEED_ID}","ts":1700000001,"v":"auths-anchor/party/v1","witnessSet":{"said":"EWitSet","threshold":2}}`,
  );
  assert.equal(
    encodeHex(anchor.sigParty.signature),
    'f6440aa83c50ee7cbe0633115a5e330bd6e264aa0441aa3cd5d788420db0044071d2992bfe666ad0e276ae76c2bee6cb144fa7181ce7df37389ca794ac316e09',
  );
  assert.equal(verifyPartySignature(anchor), true);
  assert.equal(encodeHex(hashLeaf(cosignMessage(anchor))), '23d621c544d6be4c1179d21db944a0d38c89c2f7d30d9750b8c4c6ef9b3855e2');
  const witness = ed25519KeyFromSeed(fill(0x01));
  assert.equal(encodeHex(ed25519PublicKeyBytes(witness)), '8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c');
  assert.equal(
    encodeHex(signEd25519(witness, cosignMessage(anchor))),
    'bb8313d3c4c1c260f120e65e04c82cc34f0e8717e329ec8607603555422d7d0b39b6a2b3a6e1bbc672b3752d7a6b4bac2b38f2ab29b96072ce29b7abbc144e05',
  );
  // The wire form round-trips and the timestamp is the SPEC's.
  const wire = encodeAnchor(anchor);
  assert.equal(wire.timestamp, '2023-11-14T22:13:21Z');
  assert.deepEqual(decodeAnchor(wire), anchor);
});

void test('tampering any signed field breaks the party signature', () => {
  const party = edParty(0x09);
  const a = signAnchor(party, { seedId: fill(7), index: 3, head: fill(1), cumulative: 5n, timestamp: 1700000000 });
  assert.equal(verifyPartySignature(a), true);
  assert.equal(verifyPartySignature({ ...a, cumulative: 6n }), false);
  assert.equal(verifyPartySignature({ ...a, index: 4 }), false);
  assert.equal(verifyPartySignature({ ...a, timestamp: 1700000001 }), false);
  assert.equal(verifyPartySignature({ ...a, head: fill(2) }), false);
  assert.equal(verifyPartySignature({ ...a, witnessSet: { said: 'EWitSet', threshold: 3 } }), false);
});

void test('decodeAnchor enforces canonical forms', () => {
  const party = edParty(0x09);
  const wire = encodeAnchor(signAnchor(party, { seedId: fill(7), index: 3, head: fill(1), cumulative: 5n, timestamp: 1700000000 }));
  const bad = [
    { ...wire, cumulative: '05' },
    { ...wire, cumulative: '340282366920938463463374607431768211456' },
    { ...wire, cumulative: -1 },
    { ...wire, timestamp: '2023-02-30T00:00:00Z' },
    { ...wire, seed_id: '00' },
    { ...wire, index: 1.5 },
    { ...wire, witness_set: { said: '', threshold: 1 } },
    { ...wire, witness_set: { said: 'x', threshold: 0 } },
    { ...wire, sig_party: { ...wire.sig_party, public_key: '02' + '11'.repeat(32) } },
    { ...wire, sig_party: { ...wire.sig_party, curve: 'p256' as const } },
  ];
  for (const w of bad) assert.throws(() => decodeAnchor(w), { code: 'malformed_anchor' }, stringifyJson(w));
  // Upper-case hex and a decimal-string cumulative are accepted and normalised.
  const upper = decodeAnchor({ ...wire, head: wire.head.toUpperCase(), cumulative: '5' });
  assert.equal(encodeAnchor(upper).head, wire.head);
  assert.equal(encodeAnchor(upper).cumulative, 5n);
});
