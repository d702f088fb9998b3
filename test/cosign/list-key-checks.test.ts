// SPEC §5.5 (rev 4): a vkey is checked only for an entry that this read would import (after
// --logs-list-max-new and --logs-list-max-origins), and results are cached by vkey text across
// reads. Issue 25 item 6: every fetch checked the key of every entry with an unknown origin,
// deferred and refused ones included, uncached (~0.33 ms each: ~2 min of CPU per 32 MiB list).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateEd25519 } from '../../src/crypto/ed25519.ts';
import { LogListImporter } from '../../src/cosign/list-import.ts';
import { listSource } from '../../src/cosign/list-source.ts';
import { resolveLogKey, type LogKeyResult } from '../../src/cosign/log-keys.ts';
import { SIG_TYPE_ED25519 } from '../../src/note/signed-note.ts';
import { formatVkey } from '../../src/note/vkey.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { tempDir } from '../helpers/tmp.ts';

const vkeyOf = (name: string): string => formatVkey(name, SIG_TYPE_ED25519, generateEd25519().publicKey);
/** A vkey whose key ID does not match its key (invalid: found only by checking the key). */
const badVkeyOf = (name: string): string => vkeyOf(name).replace(/\+[0-9a-f]{8}\+/, '+00000000+');

async function withImporter(
  limits: { maxNew: number; maxOrigins: number },
  fn: (x: { importer: LogListImporter; write: (text: string) => void; checks: () => number }) => Promise<void>,
): Promise<void> {
  const { dir, cleanup } = tempDir();
  const store = SqliteStore.open(join(dir, 'w.db'));
  let checks = 0;
  const path = join(dir, 'list');
  writeFileSync(path, 'logs/v0\n');
  try {
    const importer = new LogListImporter({
      store: store.cosign,
      sources: [listSource(path, false)],
      limits,
      resolveKey: (v: string): LogKeyResult => {
        checks++;
        return resolveLogKey(v);
      },
    });
    await importer.start();
    await fn({
      importer,
      write: (t) => {
        writeFileSync(path, t);
      },
      checks: () => checks,
    });
  } finally {
    await store.close();
    cleanup();
  }
}

const listOf = (vkeys: readonly string[]): string => `logs/v0\n${vkeys.map((v) => `vkey ${v}\nqpd 10\n`).join('')}`;

void test('list key checks: only the entries a read imports; deferred and refused entries cost no key check', async () => {
  const N = 400;
  const vkeys = Array.from({ length: N }, (_, i) => vkeyOf(`n${i}.example/log`));
  await withImporter({ maxNew: 3, maxOrigins: 5 }, async ({ importer, write, checks }) => {
    write(listOf(vkeys));
    const source = importer.sources[0]!;
    let r = await importer.read(source);
    assert.deepEqual(r.added, ['n0.example/log', 'n1.example/log', 'n2.example/log']);
    assert.deepEqual([r.plan?.deferred, r.plan?.overLimit], [2, N - 5]);
    assert.equal(checks(), 3, `checked ${checks()} keys for 3 imports (was one per entry: ${N})`);
    r = await importer.read(source);
    assert.deepEqual(r.added, ['n3.example/log', 'n4.example/log']);
    assert.equal(checks(), 5);
    // At --logs-list-max-origins: an unchanged list costs its parse, no key check.
    for (let i = 0; i < 3; i++) {
      r = await importer.read(source);
      assert.deepEqual([r.added, r.plan?.overLimit], [[], N - 5]);
    }
    assert.equal(checks(), 5);
  });
});

void test('list key checks: invalid keys are cached by vkey text and skipped before --logs-list-max-new', async () => {
  const bad = Array.from({ length: 4 }, (_, i) => badVkeyOf(`bad${i}.example/log`));
  const good = Array.from({ length: 6 }, (_, i) => vkeyOf(`good${i}.example/log`));
  await withImporter({ maxNew: 3, maxOrigins: 1000 }, async ({ importer, write, checks }) => {
    write(listOf([...bad, ...good]));
    const source = importer.sources[0]!;
    let r = await importer.read(source);
    // The first three candidates are checked: all invalid, skipped (their slots are lost this read).
    assert.deepEqual(r.added, []);
    assert.deepEqual(
      r.plan?.skipped.map((s) => s.code),
      ['invalid_vkey', 'invalid_vkey', 'invalid_vkey'],
    );
    assert.equal(checks(), 3);
    // Next read: those three are skipped from the cache (no check, no slot); bad3 and two good ones are checked.
    r = await importer.read(source);
    assert.deepEqual(r.added, ['good0.example/log', 'good1.example/log']);
    assert.equal(r.plan?.skipped.length, 4);
    assert.equal(checks(), 6);
    r = await importer.read(source);
    assert.deepEqual(r.added, ['good2.example/log', 'good3.example/log', 'good4.example/log']);
    assert.equal(checks(), 9);
    r = await importer.read(source);
    assert.deepEqual(r.added, ['good5.example/log']);
    assert.equal(checks(), 10);
    // Unchanged list, everything imported or known invalid: no key check at all.
    r = await importer.read(source);
    assert.deepEqual([r.added, r.plan?.skipped.length], [[], 4]);
    assert.equal(checks(), 10);
  });
});
