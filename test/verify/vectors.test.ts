// Known-answer vectors through the verifier SDK (WebCrypto), the same ones the server-side
// modules are tested with: SPEC §3.1 (test/anchor/vectors.test.ts: party signature, leaf hash and
// witness cosignature of the reference anchor), the signed-note spec example and the litewitness
// and geomys checkpoints (test/note/signed-note.test.ts, research §1.1, §3.3), and the
// cosignature/v1 vectors (test/note/cosignature.test.ts). Sources are named there.
import assert from 'node:assert/strict';
import * as v from '../../src/verify/index.ts';
import { bothBackends } from '../helpers/crypto-backends.ts';

const hex = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, 'hex'));
const SEED_ID = '34bd10b6ba98832e3303b89981018793572ce78a82ff45bc4446772e80ca6012';
const WIRE: v.AnchorWire = {
  seed_id: SEED_ID,
  index: 1,
  head: '01'.repeat(32),
  cumulative: 100,
  timestamp: '2023-11-14T22:13:21Z',
  witness_set: { said: 'EWitSet', threshold: 2 },
  sig_party: {
    curve: 'ed25519',
    public_key: 'fd1724385aa0c75b64fb78cd602fa1d991fdebf76b13c58ed702eac835e9f618',
    signature:
      'f6440aa83c50ee7cbe0633115a5e330bd6e264aa0441aa3cd5d788420db0044071d2992bfe666ad0e276ae76c2bee6cb144fa7181ce7df37389ca794ac316e09',
  },
};

bothBackends('SPEC §3.1: party signature, leaf hash and witness cosignature of the reference anchor', async () => {
  const anchor = v.decodeResponseAnchor(WIRE);
  assert.equal(await v.verifyPartySignature(anchor), true);
  assert.equal(
    Buffer.from(await v.hashLeaf(v.anchorLogEntry(anchor))).toString('hex'),
    '23d621c544d6be4c1179d21db944a0d38c89c2f7d30d9750b8c4c6ef9b3855e2',
  );
  const witnessKey = hex('8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c');
  const cosig = hex(
    'bb8313d3c4c1c260f120e65e04c82cc34f0e8717e329ec8607603555422d7d0b39b6a2b3a6e1bbc672b3752d7a6b4bac2b38f2ab29b96072ce29b7abbc144e05',
  );
  assert.equal(await v.verifyEd25519(witnessKey, v.anchorLogEntry(anchor), cosig), true);
  for (const tampered of [
    { ...anchor, cumulative: 101n },
    { ...anchor, index: 2 },
    { ...anchor, timestamp: anchor.timestamp + 1 },
    { ...anchor, witnessSet: { said: 'EWitSet', threshold: 3 } },
  ]) {
    assert.equal(await v.verifyPartySignature(tampered), false);
  }
});

bothBackends('signed-note spec example and litewitness / geomys checkpoints', async () => {
  const spec = await v.noteKeyFromVkey('example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k');
  const note =
    'This is an example message.\n\n— example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n';
  assert.equal((await v.verifyNote(note, [spec])).text, 'This is an example message.\n');
  await assert.rejects(v.verifyNote(note.replace('example message', 'exemple message'), [spec]), { code: 'note_invalid' });
  await assert.rejects(v.noteKeyFromVkey('example.com/bar+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k'), { code: 'key_invalid' });

  const origin = 'sigsum.org/v1/tree/4d6d8825a6bb689d459628312889dfbb0bcd41b5211d9e1ce768b0ff0309e562';
  const lw = await v.noteKeyFromVkey(`${origin}+5202289b+Af/cLU2Y5BJNP+r3iMDC+av9eWCD0fBJVDfzAux5zxAP`);
  const { checkpoint } = await v.verifyCheckpoint(
    `${origin}\n1\nKgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n— ${origin} UgIom7fPZTqpxWWhyjWduBvTvGVqsokMbqTArsQilegKoFBJQjUFAmQ0+YeSPM3wfUQMFSzVnnNuWRTYrajXpNUbIQY=\n`,
    [lw],
    origin,
  );
  assert.equal(checkpoint.size, 1);
  const geomys = await v.noteKeyFromVkey('geomys.org/witness/test-log+c0787ff4+AeMb5VOzy60PTGdGmLPxOKGAa0jNyDGsgv2rnprGju1t');
  const g = await v.verifyCheckpoint(
    'geomys.org/witness/test-log\n1\nBCml5C32yqMcl0gjTrcSOeNVx59oPnSdytBzDGBO5k0=\n\n— geomys.org/witness/test-log wHh/9BPsoBNr2x0Ol3qPBYasIN0HI2ZiBg5ac0v3LQq/7F+YO7U4oWbDeJn1VaWVrlbSEM30Gr7WWYQjj2SBxRoJ/Ao=\n',
    [geomys],
  );
  assert.equal(g.checkpoint.origin, 'geomys.org/witness/test-log');
});

bothBackends('cosignature/v1 vectors: a cosigned checkpoint verifies with the log key and the witness key', async () => {
  const log = await v.noteKeyFromVkey('example.com/log+01882cac+ASVDuS/xCVURR2rcg2nbbdyTNmWhGXjdoUBO4QZsqVWd');
  const witness = await v.noteKeyFromVkey('witness.example/w1+e75f6532+BAOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4');
  const note = [
    'example.com/log\n3\n1Pksj7uJcg6ztVZ3x9fvrd/rENEaGoSguo8aIzN/qpU=\n\n',
    '— example.com/log AYgsrE/ez4/BhHEe4UBKQHGthuzE+YCMq5nfqTEDvgtHUzlv1vwdYEWyDe6tF/l2ODx37u1cJKECMSuVvzaIINOTAgY=\n',
    '— witness.example/w1 519lMgAAAABlU/EAYZ6u2iYaCM2WgDyyFQck4Op4QA7FWwiBFn4VWmoq2n7G4bwnmLJVQMd24K0/GaLg2A8MIYOpoBos4ha/phuYCg==\n',
  ].join('');
  const r = await v.verifyCosignedCheckpoint(note, { cosigners: [witness], log: [log] });
  assert.deepEqual([r.checkpoint.size, r.logVerified, r.cosigners], [3, true, [{ name: 'witness.example/w1', timestamp: 1700000000n }]]);
  const flipped = note.replace('519lMgAAAABlU/EAYZ6u', '519lMgAAAABlU/EAYZ6v');
  await assert.rejects(v.verifyCosignedCheckpoint(flipped, { cosigners: [witness], log: [log] }), { code: 'cosignature_invalid' });
  await assert.rejects(v.verifyCosignedCheckpoint(note, { cosigners: [log] }), { code: 'usage' });
});
