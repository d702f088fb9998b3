// src/kel-witness/preverify.ts: the signatures of a request are verified on the signature workers
// before its transaction, once per distinct (key, signature), and the §3.5 verifier then gets the
// same answers as its own Ed25519 verifier (a flipped signature stays invalid); what was not sent
// (a P-256 key, another message) is verified on the spot.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes, signEd25519, verifyEd25519 } from '../../src/crypto/ed25519.ts';
import type { IndexedSignature } from '../../src/keri/attachments.ts';
import type { KelKey } from '../../src/keri/types.ts';
import { preverify } from '../../src/kel-witness/preverify.ts';
import { fill } from '../helpers/anchors.ts';

void test('preverify: worker answers equal the verifier, one request per distinct signature, fallback for the rest', async () => {
  const priv = ed25519KeyFromSeed(fill(3));
  const key: KelKey = { curve: 'ed25519', raw: ed25519PublicKeyBytes(priv), qb64: 'D-test' };
  const p256: KelKey = { curve: 'p256', raw: new Uint8Array(33), qb64: '1AAJ-test' };
  const message = new TextEncoder().encode('{"t":"ixn"}');
  const good = signEd25519(priv, message);
  const bad = Uint8Array.from(good);
  bad[5]! ^= 1;
  const sig = (index: number, signature: Uint8Array): IndexedSignature => ({ code: 'A', index, ondex: null, signature });
  const asked: number[] = [];
  const workers = {
    verify: (pk: Uint8Array, m: Uint8Array, s: Uint8Array) => {
      asked.push(s[5]!);
      return Promise.resolve(verifyEd25519(pk, m, s));
    },
  };
  const verify = await preverify(workers, message, [key, p256], [sig(0, good), sig(0, good), sig(0, bad), sig(1, good)]);
  assert.equal(asked.length, 2, 'the good signature once, the flipped one once, nothing for the P-256 key');
  assert.equal(verify(key, message, good), true);
  assert.equal(verify(key, message, bad), false);
  assert.equal(asked.length, 2, 'answered from the workers');
  const other = new TextEncoder().encode('{"t":"rot"}');
  assert.equal(verify(key, other, signEd25519(priv, other)), true, 'another message is verified on the spot');
  assert.equal(verify(p256, message, good), false, 'a P-256 key is verified on the spot');
});
