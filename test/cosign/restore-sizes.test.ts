// The cosign_origin_size gauges are restored at start for every known origin. With a logs/v0 list
// of 40 000 logs that was one getOrigin per origin: 40 000 sequential round trips to PostgreSQL in
// the background, competing with the first minute's requests (issue 28, the witness-network
// profile). A store with cosignedSizes now answers for all of them in one read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { generateEd25519 } from '../../src/crypto/ed25519.ts';
import { formatVkey } from '../../src/note/vkey.ts';
import { SIG_TYPE_ED25519 } from '../../src/note/signed-note.ts';
import { createCosignRole } from '../../src/cosign/role.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import type { CosignStateStorage } from '../../src/store/types.ts';
import { cosignKeyC, WITNESS_NAME } from '../helpers/cosign-harness.ts';
import { fill } from '../helpers/anchors.ts';
import { tempDir } from '../helpers/tmp.ts';

void test('the size gauges of 300 imported origins are restored from one read, not one getOrigin per origin', async () => {
  const { dir, cleanup } = tempDir();
  const store = SqliteStore.open(join(dir, 'witness.db'));
  try {
    const key = generateEd25519().publicKey;
    const origins = Array.from({ length: 300 }, (_, i) => `sizes.example/log${i}`);
    const list = join(dir, 'list');
    writeFileSync(list, `logs/v0\n${origins.map((o) => `vkey ${formatVkey(o, SIG_TYPE_ED25519, key)}\nqpd 24`).join('\n')}\n`);
    // A first start imports the list; then two of the origins are cosigned.
    const first = await createCosignRole({
      store: store.cosign,
      name: WITNESS_NAME,
      cosignKeys: [cosignKeyC],
      logsLists: [list],
      watch: false,
    });
    assert.equal(first.logs.current().size, 300);
    first.stop();
    for (const [i, size] of [
      [7, 12],
      [250, 3],
    ] as const) {
      const o = origins[i]!;
      assert.equal(
        await store.cosign.updateOrigin(0, {
          origin: o,
          size,
          root: fill(size),
          checkpoint: `${o}\n${size}\n`,
          cosignatures: '',
          lastTime: 1,
        }),
        true,
      );
    }
    let reads = 0;
    const counted = new Proxy(store.cosign, {
      get(target, prop, receiver) {
        if (prop === 'getOrigin')
          return (origin: string) => {
            reads++;
            return target.getOrigin(origin);
          };
        const v: unknown = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    }) as CosignStateStorage;
    const registry = new Registry();
    const role = await createCosignRole({
      store: counted,
      name: WITNESS_NAME,
      cosignKeys: [cosignKeyC],
      logsLists: [list],
      metrics: registry,
      watch: false,
    });
    try {
      assert.equal(role.logs.current().size, 300);
      const gauge = async () => (await registry.getSingleMetric('cosign_origin_size')!.get()).values;
      for (let i = 0; i < 100 && (await gauge()).length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      const values = await gauge();
      assert.deepEqual(
        values.map((v) => [v.labels.origin, v.value]).sort(),
        [
          [origins[250], 3],
          [origins[7], 12],
        ].sort(),
      );
      assert.equal(reads, 0, `${reads} getOrigin calls to restore the gauges`);
    } finally {
      role.stop();
    }
  } finally {
    await store.close();
    cleanup();
  }
});
