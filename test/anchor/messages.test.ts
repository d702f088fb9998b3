// The party and cosign messages are written in canonical key order directly (src/anchor/messages.ts);
// here they must equal the generic RFC 8785 canonicalization of the SPEC §3.1 objects, built
// independently, for random anchors and hostile witness-set SAIDs (quotes, backslashes, controls,
// non-ASCII, astral characters, U+2028), extreme integers and both curves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import { canonicalBytes } from '../../src/encoding/jcs.ts';
import { cosignMessage, partyMessage } from '../../src/anchor/messages.ts';
import type { Anchor } from '../../src/anchor/types.ts';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

function specObject(a: Anchor, v: string, withSigParty: boolean): Record<string, unknown> {
  const o: Record<string, unknown> = {
    v,
    seedId: hex(a.seedId),
    index: a.index,
    head: hex(a.head),
    cumulative: a.cumulative.toString(10),
    ts: a.timestamp,
    witnessSet: { said: a.witnessSet.said, threshold: a.witnessSet.threshold },
  };
  if (withSigParty) o.sigParty = { curve: a.sigParty.curve, publicKey: hex(a.sigParty.publicKey), signature: hex(a.sigParty.signature) };
  return o;
}

const SAIDS = [
  'EWitSet',
  '"quoted"',
  'back\\slash',
  'tab\tnew\nline\u0000\u001f\u007f',
  'é ü ß 漢字',
  '😀 astral',
  'line\u2028sep\u2029',
  '</script>',
  'a'.repeat(128),
];

function randomAnchor(i: number): Anchor {
  const p256 = i % 3 === 0;
  return {
    seedId: randomBytes(32),
    index: [0, 1, 2 ** 53 - 1, randomInt(0, 2 ** 40)][i % 4]!,
    head: randomBytes(32),
    cumulative: [0n, 1n, 2n ** 128n - 1n, BigInt(randomInt(0, 2 ** 47))][i % 4]!,
    timestamp: [0, 1700000001, 253402300799, -62135596800, randomInt(0, 2 ** 40)][i % 5]!,
    witnessSet: { said: SAIDS[i % SAIDS.length]!, threshold: [1, 2, 2 ** 53 - 1][i % 3]! },
    sigParty: { curve: p256 ? 'p256' : 'ed25519', publicKey: randomBytes(p256 ? 33 : 32), signature: randomBytes(64) },
  };
}

void test('party and cosign messages equal the generic JCS of the SPEC §3.1 objects', () => {
  for (let i = 0; i < 2000; i++) {
    const a = randomAnchor(i);
    assert.deepEqual(
      Buffer.from(partyMessage(a)),
      Buffer.from(canonicalBytes(specObject(a, 'auths-anchor/party/v1', false))),
      `party message, case ${i}`,
    );
    assert.deepEqual(
      Buffer.from(cosignMessage(a)),
      Buffer.from(canonicalBytes(specObject(a, 'auths-anchor/cosign/v1', true))),
      `cosign message, case ${i}`,
    );
  }
});

void test('a lone surrogate in the SAID is refused, as JCS refuses it', () => {
  const a = { ...randomAnchor(1), witnessSet: { said: 'x\ud800y', threshold: 1 } };
  assert.throws(() => partyMessage(a), { code: 'jcs_unsupported_value' });
  assert.throws(() => cosignMessage(a), { code: 'jcs_unsupported_value' });
});
