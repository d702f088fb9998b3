// The size gauges of imported origins are restored in the background after start (src/cosign/role.ts).
// A role stopped while that runs, its store then closed, logged "could not read the cosigned sizes"
// for a store closed by its own shutdown, and kept reading. The loop now ends at stop.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { generateEd25519 } from '../../src/crypto/ed25519.ts';
import { formatVkey } from '../../src/note/vkey.ts';
import { SIG_TYPE_ED25519 } from '../../src/note/signed-note.ts';
import { createCosignRole } from '../../src/cosign/role.ts';
import { StoreUnavailableError } from '../../src/store/errors.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import type { CosignStateStorage } from '../../src/store/types.ts';
import { cosignKeyC, logsDoc, startCosign, WITNESS_NAME } from '../helpers/cosign-harness.ts';
import { tempDir } from '../helpers/tmp.ts';

void test('the cosign role stopped while imported sizes are restored: no warning, no read after stop', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const key = generateEd25519().publicKey;
    const lines = Array.from({ length: 20 }, (_, i) => `vkey ${formatVkey(`shutdown.example/log${i}`, SIG_TYPE_ED25519, key)}\nqpd 24`);
    const list = join(dir, 'list');
    writeFileSync(list, `logs/v0\n${lines.join('\n')}\n`);
    // First start imports the list.
    await (await startCosign({ dir, logsDoc: logsDoc(), logsLists: [list] })).close();

    const store = SqliteStore.open(join(dir, 'witness.db'));
    let reads = 0;
    let release: (() => void) | undefined;
    const gate = new Promise<void>((r) => (release = r));
    // The imported origins' reads wait at the gate, then fail as a closed store does.
    const cosign = new Proxy(store.cosign, {
      get(target, prop, receiver) {
        if (prop === 'cosignedSizes') return undefined; // the per-origin reads of stores without it
        if (prop === 'getOrigin')
          return async (origin: string) => {
            reads++;
            await gate;
            throw new StoreUnavailableError(`store: closed (${origin})`);
          };
        const v: unknown = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    }) as CosignStateStorage;
    const warnings: string[] = [];
    const role = await createCosignRole({
      store: cosign,
      name: WITNESS_NAME,
      cosignKeys: [cosignKeyC],
      logsLists: [list],
      metrics: new Registry(),
      watch: false,
      log: { info: () => undefined, warn: (_o: object, msg: string) => warnings.push(msg) },
    });
    assert.equal(role.logs.current().size, 20);
    role.stop();
    release!();
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(warnings, []);
    assert.equal(reads, 1, 'no read after the role stopped');
    await store.close();
  } finally {
    cleanup();
  }
});
