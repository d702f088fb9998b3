// SPEC §5 (rev 4): an origin's stored state is bound to the log key set it was cosigned under.
// Issue 25 item 9: a list naming an origin the operator removed from --logs, with another key,
// re-imported it and cosigning resumed from the state made under the old key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ed25519KeyFromSeed } from '../../src/crypto/ed25519.ts';
import { forgetCosignOrigin } from '../../src/cli/cosign-commands.ts';
import { formatAddCheckpointRequest } from '../../src/note/tlog-witness.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { SyntheticLog, logsDoc, seq, startCosign, type CosignHarness } from '../helpers/cosign-harness.ts';
import { tempDir } from '../helpers/tmp.ts';

const ORIGIN = 'rotating.example/log';
const k1 = new SyntheticLog(ORIGIN, ed25519KeyFromSeed(seq(0x11)));
const k2 = new SyntheticLog(ORIGIN, ed25519KeyFromSeed(seq(0x22)));

const metric = async (h: CosignHarness, name: string): Promise<string[]> =>
  (await h.get('/metrics')).text.split('\n').filter((l) => l.startsWith(name));

void test('a list naming a removed origin with another key does not re-import it; with its own key it resumes', async () => {
  const { dir, cleanup } = tempDir();
  try {
    let h = await startCosign({ dir, logsDoc: logsDoc({ origin: ORIGIN, keys: [k1.vkey] }) });
    try {
      assert.equal((await h.post(k1.request(0, 7))).status, 200);
    } finally {
      await h.close();
    }
    // Removed from --logs; a list names it under K2.
    const list = join(dir, 'list');
    writeFileSync(list, `logs/v0\nvkey ${k2.vkey}\nqpd 86400\n`);
    h = await startCosign({ dir, logsDoc: logsDoc(), logsLists: [list] });
    try {
      assert.equal(h.role.logs.current().has(ORIGIN), false, 'not re-imported under another key');
      assert.deepEqual(await h.store.cosign.listImportedLogs(), []);
      assert.deepEqual(await metric(h, 'logs_list_conflicts_total'), [`logs_list_conflicts_total{source="${list}"} 1`]);
      const r = await h.post(formatAddCheckpointRequest(7, k2.proof(7, 9), k2.checkpoint(9)));
      assert.equal(r.status, 404);
      assert.equal((await h.store.cosign.getOrigin(ORIGIN))?.size, 7);
      // The same list with the old key: imported again, and the state resumes.
      writeFileSync(list, `logs/v0\nvkey ${k1.vkey}\nqpd 86400\n`);
      const read = await h.role.lists.read(h.role.lists.sources[0]!);
      assert.deepEqual(read.added, [ORIGIN]);
      assert.equal((await h.post(k1.request(7, 9))).status, 200);
    } finally {
      await h.close();
    }
  } finally {
    cleanup();
  }
});

void test('--logs: an overlapping key set is an update (counted); a disjoint one is a conflict (404) until cosign forget', async () => {
  const { dir, cleanup } = tempDir();
  try {
    let h = await startCosign({ dir, logsDoc: logsDoc({ origin: ORIGIN, keys: [k1.vkey] }) });
    try {
      assert.equal((await h.post(k1.request(0, 3))).status, 200);
      assert.deepEqual((await h.store.cosign.getOrigin(ORIGIN))?.logKeys, [k1.vkey]);
    } finally {
      await h.close();
    }
    // Rotation with an overlap: {K1, K2}, then {K2}; the state continues under each.
    for (const keys of [[k1.vkey, k2.vkey], [k2.vkey]]) {
      h = await startCosign({ dir, logsDoc: logsDoc({ origin: ORIGIN, keys }) });
      try {
        assert.deepEqual((await h.store.cosign.getOrigin(ORIGIN))?.logKeys, keys, 'recorded at load');
        assert.deepEqual(await metric(h, 'cosign_origin_key_updates_total'), [`cosign_origin_key_updates_total{origin="${ORIGIN}"} 1`]);
      } finally {
        await h.close();
      }
    }
    h = await startCosign({ dir, logsDoc: logsDoc({ origin: ORIGIN, keys: [k2.vkey] }) });
    try {
      assert.equal((await h.post(k2.request(3, 5))).status, 200, 'K2 resumes the state from size 3');
    } finally {
      await h.close();
    }
    // A disjoint set while the state is non-empty: not served, logged and counted; no evidence is
    // taken from the other key's checkpoints (a root for size 5 that the state never saw).
    const k3 = new SyntheticLog(ORIGIN, ed25519KeyFromSeed(seq(0x33)));
    h = await startCosign({ dir, logsDoc: logsDoc({ origin: ORIGIN, keys: [k3.vkey] }) });
    try {
      for (const body of [k3.request(0, 2), k3.request(5, 6), formatAddCheckpointRequest(5, [], k3.checkpoint(5, new Uint8Array(32)))]) {
        const r = await h.post(body);
        assert.equal(r.status, 404, r.text);
        assert.match(r.text, /cosign forget/);
      }
      assert.deepEqual(await h.store.cosign.listEvidence(ORIGIN), []);
      assert.deepEqual(await metric(h, 'cosign_origin_key_conflicts_total'), [`cosign_origin_key_conflicts_total{origin="${ORIGIN}"} 1`]);
      assert.deepEqual(await metric(h, 'cosign_add_checkpoint_total{origin="' + ORIGIN + '",outcome="origin_key_conflict"}'), [
        `cosign_add_checkpoint_total{origin="${ORIGIN}",outcome="origin_key_conflict"} 3`,
      ]);
      assert.equal((await h.store.cosign.getOrigin(ORIGIN))?.size, 5);
    } finally {
      await h.close();
    }
    // cosign forget (the witness stopped): deletes the state; K3 starts from size 0.
    const store = SqliteStore.open(join(dir, 'witness.db'));
    try {
      const { lines } = await forgetCosignOrigin(store.cosign, ORIGIN);
      assert.deepEqual(lines, [`deleted the state of ${ORIGIN}: cosigned up to size 5`]);
      assert.deepEqual((await forgetCosignOrigin(store.cosign, ORIGIN)).lines, [`nothing stored for ${ORIGIN}`]);
    } finally {
      await store.close();
    }
    h = await startCosign({ dir, logsDoc: logsDoc({ origin: ORIGIN, keys: [k3.vkey] }) });
    try {
      assert.equal((await h.post(k3.request(0, 2))).status, 200);
      assert.deepEqual(await metric(h, 'cosign_origin_key_conflicts_total'), []);
    } finally {
      await h.close();
    }
  } finally {
    cleanup();
  }
});

void test('a list never changes a served origin’s keys nor switches it off', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const list = join(dir, 'list');
    writeFileSync(list, `logs/v0\nvkey ${k2.vkey}\norigin ${ORIGIN}\nqpd 10\n`);
    const h = await startCosign({ dir, logsDoc: logsDoc({ origin: ORIGIN, keys: [k1.vkey] }), logsLists: [list] });
    try {
      assert.equal((await h.post(k1.request(0, 3))).status, 200);
      const r = await h.role.lists.read(h.role.lists.sources[0]!);
      assert.equal(r.plan?.conflicts.length, 1);
      assert.equal((await h.post(k1.request(3, 4))).status, 200);
      assert.equal((await h.post(formatAddCheckpointRequest(4, k2.proof(4, 5), k2.checkpoint(5)))).status, 403);
    } finally {
      await h.close();
    }
  } finally {
    cleanup();
  }
});
