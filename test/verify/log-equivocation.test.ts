// Log-equivocation evidence through the portable verifier (src/verify/log-equivocation.ts, SPEC
// §6.1): both kinds proven under the log key, every way to make it prove nothing refused with its
// code, and the WebCrypto consistency check agreeing with src/tlog/merkle.ts on every (old, new)
// pair of a 33-leaf tree, both for valid proofs and for proofs with one hash changed.
import assert from 'node:assert/strict';
import { encodeBase64 } from '../../src/encoding/base64.ts';
import { SIG_TYPE_ED25519 } from '../../src/note/signed-note.ts';
import { ed25519NoteSigner, formatVkey } from '../../src/note/vkey.ts';
import { hashLeaf } from '../../src/tlog/hash.ts';
import { consistencyProof, memoryHashReader, treeRoot, verifyConsistency } from '../../src/tlog/merkle.ts';
import { LOG_EQUIVOCATION_V, noteKeyFromVkey, verifyLogEquivocation } from '../../src/verify/index.ts';
import { consistencyFailure } from '../../src/verify/merkle.ts';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fill } from '../helpers/anchors.ts';
import { runClientCli } from '../helpers/client-cli-run.ts';
import { tempDir } from '../helpers/tmp.ts';
import { appendLeaf, checkpointNote, fakeWitness } from '../helpers/malicious-witness.ts';
import { bothBackends } from '../helpers/crypto-backends.ts';

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

bothBackends(
  'same size, two roots, both signed by the log key: proven; the same root, another key or origin, or a bad shape: refused',
  async () => {
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
  },
);

bothBackends(
  'issue 25 item 16: a checkpoint signed by a pinned key of another name, carrying the honest origin, proves nothing (SDK and CLI)',
  async () => {
    // The reproduction: a verifier pins two logs' keys (a second --log-vkey). The other log's
    // operator signs a forked checkpoint that carries the honest log's origin; beside an honest
    // checkpoint of that size, it "proved" that the honest log equivocated.
    const evil = fakeWitness({ seed: 0x33, name: 'evil.test' });
    const honestVkey = formatVkey(w.origin, SIG_TYPE_ED25519, w.publicKey);
    const evilVkey = formatVkey(evil.origin, SIG_TYPE_ED25519, evil.publicKey);
    const forged = checkpointNote(fork, 12, [ed25519NoteSigner(evil.origin, evil.key)]);
    assert.match(forged, new RegExp(`^${w.origin.replace(/[.]/g, '\\.')}\n12\n`), 'the forged note carries the honest origin');
    const ev = doc(checkpointNote(w, 12), forged);
    const both = [await key, await noteKeyFromVkey(evilVkey)];
    await assert.rejects(verifyLogEquivocation(ev, both), {
      code: 'checkpoint_wrong_origin',
      message: /^checkpoint b: signed only by "evil\.test\/anchors", not by a key of log "log\.test\/anchors"/,
    });
    await assert.rejects(verifyLogEquivocation({ ...ev, a: ev.b, b: ev.a }, both), {
      code: 'checkpoint_wrong_origin',
      message: /^checkpoint a: /,
    });
    // The foreign key alone pinned, both notes its own under the honest origin: the same.
    const forgedToo = checkpointNote(w, 12, [ed25519NoteSigner(evil.origin, evil.key)]);
    await assert.rejects(verifyLogEquivocation(doc(forgedToo, forged), [both[1]!]), { code: 'checkpoint_wrong_origin' });
    // The two-size form too (the forged note as the smaller one).
    const read = memoryHashReader(w.leaves);
    const twoSizes = doc(checkpointNote(fork, 7, [ed25519NoteSigner(evil.origin, evil.key)]), checkpointNote(w, 12), {
      old_root_from_tiles: encodeBase64(treeRoot(7, read)),
      consistency_proof: consistencyProof(7, 12, read).map(encodeBase64),
    });
    await assert.rejects(verifyLogEquivocation(twoSizes, both), { code: 'checkpoint_wrong_origin' });
    // The honest log's own fork, under the same two pins, is still proven.
    assert.equal((await verifyLogEquivocation(doc(checkpointNote(w, 12), checkpointNote(fork, 12)), both)).kind, 'same_size');

    // `anchor-witness verify log-equivocation FILE --log-vkey HONEST --log-vkey OTHER`: refused (exit 1), not "PROVEN".
    const tmp = tempDir('aw-log-equivocation-');
    try {
      const file = join(tmp.dir, 'evidence.json');
      writeFileSync(file, JSON.stringify(ev));
      const run = await runClientCli(['verify', 'log-equivocation', file, '--log-vkey', honestVkey, '--log-vkey', evilVkey]);
      assert.equal(run.code, 1, run.stdout);
      assert.doesNotMatch(run.stdout, /PROVEN/);
      assert.match(run.stderr, /^INVALID checkpoint_wrong_origin: checkpoint b: signed only by "evil\.test\/anchors"/);
      writeFileSync(file, JSON.stringify(doc(checkpointNote(w, 12), checkpointNote(fork, 12))));
      const proven = await runClientCli(['verify', 'log-equivocation', file, '--log-vkey', honestVkey, '--log-vkey', evilVkey]);
      assert.equal(proven.code, 0, proven.stderr);
      assert.match(proven.stdout, /LOG EQUIVOCATION PROVEN: log log\.test\/anchors/);
    } finally {
      tmp.cleanup();
    }
  },
);

bothBackends('two sizes: proven only with a consistency proof from the root the smaller size has in the larger tree', async () => {
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

bothBackends(
  'consistencyFailure (WebCrypto) agrees with src/tlog verifyConsistency on every pair of sizes up to 33, valid and with one hash changed',
  async () => {
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
  },
);
