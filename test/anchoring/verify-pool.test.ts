// The signature pool: same answers as the strict verifier on the calling thread, in batches over
// worker threads, and — for a pool made with a signing key — the signature of a second message on
// the same trip, only when the first signature is valid; ML-DSA-44 verification and signing with
// the pool's ML-DSA-44 keys on the workers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { SignaturePool } from '../../src/anchoring/verify-pool.ts';
import {
  ED25519_SMALL_ORDER_ENCODINGS,
  ed25519PublicKeyBytes,
  generateEd25519,
  signEd25519,
  verifyEd25519,
} from '../../src/crypto/ed25519.ts';
import { generateMlDsa44, verifyMlDsa44 } from '../../src/crypto/ml-dsa.ts';

interface Case {
  publicKey: Uint8Array;
  message: Uint8Array;
  signature: Uint8Array;
  valid: boolean;
}

/** Valid signatures, tampered ones (message, signature, key), and the identity-key forgery. */
function cases(n: number): Case[] {
  const out: Case[] = [];
  for (let i = 0; i < n; i++) {
    const k = generateEd25519();
    const message = randomBytes(1 + (i % 700));
    const signature = signEd25519(k.privateKey, message);
    const publicKey = ed25519PublicKeyBytes(k.privateKey);
    switch (i % 4) {
      case 0:
        out.push({ publicKey, message, signature, valid: true });
        break;
      case 1: {
        const m = Uint8Array.from(message);
        m[0]! ^= 1;
        out.push({ publicKey, message: m, signature, valid: false });
        break;
      }
      case 2: {
        const s = Uint8Array.from(signature);
        s[10]! ^= 0x20;
        out.push({ publicKey, message, signature: s, valid: false });
        break;
      }
      default:
        out.push({
          publicKey: Uint8Array.from(Buffer.from(`01${'00'.repeat(31)}`, 'hex')),
          message,
          signature: Uint8Array.from(Buffer.from(`01${'00'.repeat(63)}`, 'hex')),
          valid: false,
        });
    }
  }
  return out;
}

for (const size of [0, 2]) {
  void test(`pool of ${size} worker(s): verify agrees with the strict verifier, concurrently submitted`, async () => {
    const pool = new SignaturePool(size);
    try {
      const all = cases(200);
      const got = await Promise.all(all.map((c) => pool.verify(c.publicKey, c.message, c.signature)));
      all.forEach((c, i) => {
        assert.equal(got[i], c.valid, `case ${i}`);
        assert.equal(verifyEd25519(c.publicKey, c.message, c.signature), c.valid, `reference, case ${i}`);
      });
    } finally {
      await pool.close();
    }
  });

  void test(`pool of ${size} worker(s): verifyAndSign signs the second message exactly when the first signature is valid`, async () => {
    const signer = generateEd25519();
    const pool = new SignaturePool(size, signer.privateKey);
    try {
      assert.equal(pool.signingPublicKey, Buffer.from(signer.publicKey).toString('hex'));
      const all = cases(120);
      const toSign = all.map((_, i) => randomBytes(i % 5 === 0 ? 0 : 50 + i)); // empty messages too
      const got = await Promise.all(all.map((c, i) => pool.verifyAndSign(c.publicKey, c.message, c.signature, toSign[i]!)));
      all.forEach((c, i) => {
        const r = got[i]!;
        assert.equal(r.valid, c.valid, `case ${i}`);
        if (!c.valid) {
          assert.equal(r.signature, undefined, `no signature for an invalid party signature (case ${i})`);
          return;
        }
        assert.ok(r.signature !== undefined);
        assert.equal(r.signature.length, 64);
        assert.ok(verifyEd25519(signer.publicKey, toSign[i]!, r.signature), `signature over the second message (case ${i})`);
        // Ed25519 is deterministic: the worker's signature is the one this thread would make.
        assert.deepEqual(Buffer.from(r.signature), Buffer.from(signEd25519(signer.privateKey, toSign[i]!)));
      });
    } finally {
      await pool.close();
    }
  });
}

void test('small-order keys are refused before any worker sees them; a pool without a key refuses to sign', async () => {
  const pool = new SignaturePool(1);
  try {
    for (const enc of ED25519_SMALL_ORDER_ENCODINGS) {
      assert.equal(await pool.verify(enc, new Uint8Array(1), new Uint8Array(64)), false);
    }
    const k = generateEd25519();
    const m = randomBytes(10);
    assert.throws(() => pool.verifyAndSign(ed25519PublicKeyBytes(k.privateKey), m, signEd25519(k.privateKey, m), m), /no signing key/);
  } finally {
    await pool.close();
  }
});

for (const size of [0, 2]) {
  void test(`pool of ${size} worker(s): ML-DSA-44 signing (pool keys on the workers, others here) and verification, mixed with Ed25519 items`, async () => {
    const a = generateMlDsa44();
    const b = generateMlDsa44();
    const stranger = generateMlDsa44();
    const ed = generateEd25519();
    const pool = new SignaturePool(size, ed.privateKey, [a.privateKey, b.privateKey]);
    try {
      const messages = Array.from({ length: 12 }, (_, i) => randomBytes(1 + i * 37));
      const keys = [a, b, stranger];
      // one event-loop turn: ML-DSA-44 signs and Ed25519 verify-and-sign items travel together
      const [sigs, eds] = await Promise.all([
        Promise.all(messages.map((m, i) => pool.signMlDsa44(keys[i % 3]!.privateKey, m))),
        Promise.all(messages.map((m) => pool.verifyAndSign(ed.publicKey, m, signEd25519(ed.privateKey, m), m))),
      ]);
      sigs.forEach((s, i) => {
        assert.equal(s.length, 2420);
        assert.equal(verifyMlDsa44(keys[i % 3]!.publicKey, messages[i]!, s), true, `ML-DSA-44 signature ${i}`);
      });
      eds.forEach((r, i) => {
        assert.equal(r.valid, true);
        assert.deepEqual(Buffer.from(r.signature!), Buffer.from(signEd25519(ed.privateKey, messages[i]!)));
      });
      const checks = await Promise.all(
        sigs.flatMap((s, i) => {
          const bad = Uint8Array.from(s);
          bad[i * 100]! ^= 1;
          const pk = keys[i % 3]!.publicKey;
          return [
            pool.verifyMlDsa44(pk, messages[i]!, s),
            pool.verifyMlDsa44(pk, messages[i]!, bad),
            pool.verifyMlDsa44(pk, randomBytes(3), s),
          ];
        }),
      );
      assert.deepEqual(
        checks,
        sigs.flatMap(() => [true, false, false]),
      );
      assert.equal(await pool.verifyMlDsa44(a.publicKey.subarray(1), messages[0]!, sigs[0]!), false);
    } finally {
      await pool.close();
    }
  });
}
