// SPEC §1.3 "A peer's --logs {K1}→{K1,K2}→{K2} keeps its state" (§5 rev 4: an overlapping key set
// is an update). The peer cosigns a witness log that rotates its key with an overlap: K1-only
// checkpoints, then overlap checkpoints carrying K1's and K2's lines (K1's first, as the node signs
// them), then K2-only ones. The operator's --logs entry moves {K1} → {K1,K2} (a reload, SIGHUP's
// path) → {K2} (a restart). The origin's stored size carries through every step (no reset, no
// `cosign forget`), overlap checkpoints are cosigned under {K1} (before the operator adds K2),
// {K1,K2} and {K2}, and once --logs names K2 alone a K1-only checkpoint is refused (403).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ed25519KeyFromSeed } from '../../src/crypto/ed25519.ts';
import { ed25519NoteSigner } from '../../src/note/vkey.ts';
import { signNote } from '../../src/note/signed-note.ts';
import { formatAddCheckpointRequest } from '../../src/note/tlog-witness.ts';
import { SyntheticLog, logsDoc, seq, startCosign, type CosignHarness } from '../helpers/cosign-harness.ts';
import { tempDir } from '../helpers/tmp.ts';

const ORIGIN = 'witness.example/w9/anchors';
const k1 = new SyntheticLog(ORIGIN, ed25519KeyFromSeed(seq(0x51)));
const k2 = new SyntheticLog(ORIGIN, ed25519KeyFromSeed(seq(0x52)));

/** An overlap checkpoint: K1's line, then K2's (one tree: both logs hold the same leaves). */
const overlap = (oldSize: number, size: number): string =>
  formatAddCheckpointRequest(
    oldSize,
    k1.proof(oldSize, size),
    signNote(k1.text(size), [ed25519NoteSigner(ORIGIN, k1.key), ed25519NoteSigner(ORIGIN, k2.key)]),
  );

const size = async (h: CosignHarness): Promise<number | undefined> => (await h.store.cosign.getOrigin(ORIGIN))?.size;
const metric = async (h: CosignHarness, name: string): Promise<string[]> =>
  (await h.get('/metrics')).text.split('\n').filter((l) => l.startsWith(name));

void test('a peer whose --logs goes {K1} → {K1,K2} → {K2} keeps the origin’s state and cosigns every stage', async () => {
  const { dir, cleanup } = tempDir();
  try {
    let h = await startCosign({ dir, logsDoc: logsDoc({ origin: ORIGIN, keys: [k1.vkey] }) });
    try {
      assert.equal((await h.post(k1.request(0, 3))).status, 200);
      // The witness announced K2: its checkpoints carry both lines; the peer still names K1 alone.
      let r = await h.post(overlap(3, 4));
      assert.equal(r.status, 200, r.text);
      // The operator adds K2 (reload, as SIGHUP does): an update, the state continues.
      writeFileSync(join(dir, 'logs.json'), JSON.stringify(logsDoc({ origin: ORIGIN, keys: [k1.vkey, k2.vkey] })));
      assert.equal(h.role.logs.reload(), true);
      r = await h.post(overlap(4, 6));
      assert.equal(r.status, 200, r.text);
      assert.equal(await size(h), 6);
      assert.deepEqual((await h.store.cosign.getOrigin(ORIGIN))?.logKeys, [k1.vkey, k2.vkey]);
      // Both lines are kept with the state; a replay of the stored checkpoint is answered.
      assert.equal((await h.post(overlap(6, 6))).status, 200);
      assert.deepEqual(await metric(h, 'cosign_origin_key_conflicts_total'), []);
    } finally {
      await h.close();
    }
    // The witness completed: K2 alone signs. The operator names K2 alone (a restart).
    h = await startCosign({ dir, logsDoc: logsDoc({ origin: ORIGIN, keys: [k2.vkey] }) });
    try {
      assert.equal(await size(h), 6, 'no reset');
      assert.deepEqual(await metric(h, 'cosign_origin_key_updates_total'), [`cosign_origin_key_updates_total{origin="${ORIGIN}"} 1`]);
      let r = await h.post(overlap(6, 7)); // a late overlap checkpoint still verifies by its K2 line
      assert.equal(r.status, 200, r.text);
      r = await h.post(k2.request(7, 9));
      assert.equal(r.status, 200, r.text);
      assert.equal(await size(h), 9);
      // K1 is no longer a key of the log for this peer.
      r = await h.post(k1.request(9, 10));
      assert.equal(r.status, 403, r.text);
      assert.deepEqual(await metric(h, 'cosign_origin_key_conflicts_total'), []);
    } finally {
      await h.close();
    }
  } finally {
    cleanup();
  }
});
