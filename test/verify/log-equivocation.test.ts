// Log-equivocation evidence through the portable verifier (src/verify/log-equivocation.ts, SPEC
// §6.1): both kinds proven under the log key, every way to make it prove nothing refused with its
// code, and the WebCrypto consistency check agreeing with src/tlog/merkle.ts on every (old, new)
// pair of a 33-leaf tree, both for valid proofs and for proofs with one hash changed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeBase64 } from '../../src/encoding/base64.ts';
import { SIG_TYPE_ED25519 } from '../../src/note/signed-note.ts';
import { formatVkey } from '../../src/note/vkey.ts';
import { hashLeaf } from '../../src/tlog/hash.ts';
import { consistencyProof, memoryHashReader, treeRoot, verifyConsistency } from '../../src/tlog/merkle.ts';
import { LOG_EQUIVOCATION_V, noteKeyFromVkey, verifyLogEquivocation } from '../../src/verify/index.ts';
import { consistencyFailure } from '../../src/verify/merkle.ts';
import { fill } from '../helpers/anchors.ts';
import { appendLeaf, checkpointNote, fakeWitness } from '../helpers/malicious-witness.ts';

const w = fakeWitness({ seed: 0x31, name: 'log.test' });
for (let i = 0; i < 12; i++) appendLeaf(w, fill(i, 4));
const fork = { ...w, leaves: w.leaves.map((h, i) => (i === 2 ? hashLeaf(fill(0x99, 4)) : h)) };
const key = noteKeyFromVkey(formatVkey(w.origin, SIG_TYPE_ED25519, w.publicKey));
const doc = (a: string, b: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  v: LOG_EQUIVOCATION_V,
  origin: w.origin,
  a,
  b,
  ...extra,
});

void test('same size, two roots, both signed by the log key: proven; the same root, another key or origin, or a bad shape: refused', async () => {
  const k = [await key];
  const r = await verifyLogEquivocation(doc(checkpointNote(w, 12), checkpointNote(fork, 12)), k);
  assert.equal(r.kind, 'same_size');
  assert.equal(r.origin, w.origin);
  assert.deepEqual([r.a.size, r.b.size], [12, 12]);
  await assert.rejects(verifyLogEquivocation(doc(checkpointNote(w, 12), checkpointNote(w, 12)), k), {
    code: 'log_equivocation_invalid',
  });
  const other = fakeWitness({ seed: 0x32, name: 'log.test' });
  other.leaves = fork.leaves;
  await assert.rejects(verifyLogEquivocation(doc(checkpointNote(w, 12), checkpointNote(other, 12)), k), {
    code: 'checkpoint_invalid',
    message: /^checkpoint b: /,
  });
  await assert.rejects(verifyLogEquivocation({ ...doc(checkpointNote(w, 12), checkpointNote(fork, 12)), origin: 'elsewhere' }, k), {
    code: 'checkpoint_wrong_origin',
  });
  for (const bad of [
    null,
    [],
    { ...doc('x', 'y'), v: 'anchor-witness/log-equivocation/v2' },
    { ...doc('x', 'y'), extra: 1 },
    { ...doc('x', 'y'), a: 1 },
    doc('x', 'y', { old_root_from_tiles: 'AAAA', consistency_proof: [] }),
  ])
    await assert.rejects(verifyLogEquivocation(bad, k), { code: 'malformed_response' });
});

void test('two sizes: proven only with a consistency proof from the root the smaller size has in the larger tree', async () => {
  const k = [await key];
  // The fork's size-7 checkpoint against the honest size-12 tree.
  const read = memoryHashReader(w.leaves);
  const proof = consistencyProof(7, 12, read).map(encodeBase64);
  const oldRoot = encodeBase64(treeRoot(7, read));
  const ev = doc(checkpointNote(fork, 7), checkpointNote(w, 12), { old_root_from_tiles: oldRoot, consistency_proof: proof });
  const r = await verifyLogEquivocation(ev, k);
  assert.equal(r.kind, 'inconsistent');
  // Order does not matter: b may be the smaller.
  assert.equal((await verifyLogEquivocation({ ...ev, a: ev.b, b: ev.a }, k)).kind, 'inconsistent');
  // An honest pair (the real size-7 root) is consistent: nothing proven.
  await assert.rejects(verifyLogEquivocation({ ...ev, a: checkpointNote(w, 7) }, k), { code: 'log_equivocation_invalid' });
  // A proof that does not lead to the larger root, or none at all.
  await assert.rejects(verifyLogEquivocation({ ...ev, consistency_proof: [...proof].reverse() }, k), { code: 'log_equivocation_invalid' });
  await assert.rejects(verifyLogEquivocation(doc(checkpointNote(fork, 7), checkpointNote(w, 12)), k), {
    code: 'log_equivocation_invalid',
    message: /needs old_root_from_tiles and consistency_proof/,
  });
});

void test('consistencyFailure (WebCrypto) agrees with src/tlog verifyConsistency on every pair of sizes up to 33, valid and with one hash changed', async () => {
  const leaves = Array.from({ length: 33 }, (_, i) => hashLeaf(fill(i, 3)));
  const read = memoryHashReader(leaves);
  let checked = 0;
  for (let n = 1; n <= 33; n++) {
    const newRoot = treeRoot(n, read);
    for (let m = 1; m <= n; m++) {
      const oldRoot = treeRoot(m, read);
      const proof = consistencyProof(m, n, read);
      assert.equal(await consistencyFailure(m, n, oldRoot, newRoot, proof), null, `${m} → ${n}`);
      if (proof.length > 0) {
        const bad = proof.map((h, i) => (i === proof.length - 1 ? hashLeaf(h) : h));
        assert.equal((await consistencyFailure(m, n, oldRoot, newRoot, bad)) === null, verifyConsistency(m, n, oldRoot, newRoot, bad));
        assert.notEqual(await consistencyFailure(m, n, oldRoot, newRoot, bad), null);
      }
      checked++;
    }
  }
  assert.equal(checked, (33 * 34) / 2);
});
