// `anchor-witness serve` with a KEL source as a child process (SPEC §3.5, §9): the flags and their
// AW_* variables reach the node, the first load completes before `listening on`, a file written in
// place is not picked up until SIGHUP (SPEC §3.2 reload rule), and SIGHUP reloads the KEL source.
// KELs: research/upstream-kel.md §4 B1 (test/helpers/kel-vectors.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { anchorRequest } from '../../src/client/party.ts';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { decodeHex } from '../../src/encoding/hex.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { fill, signAnchor, type TestParty } from '../helpers/anchors.ts';
import { kelDocument, MULTI_EVENTS, MULTI_PREFIX, SEEDS } from '../helpers/kel-vectors.ts';
import { spawnServe } from '../helpers/spawn-serve.ts';
import { tempDir } from '../helpers/tmp.ts';
import { get, post } from '../helpers/witness.ts';

const party = (seedHex: string): TestParty => {
  const key = ed25519KeyFromSeed(decodeHex(seedHex, 32));
  return { key, publicKey: ed25519PublicKeyBytes(key) };
};
const oldKey = party(SEEDS.s00_0);
const newKey = party(SEEDS.s00_3);
const MULTI = `did:keri:${MULTI_PREFIX}`;

void test('serve --kel-source (AW_KEL_SOURCE): loaded before listening; an in-place write waits for SIGHUP, which reloads', async () => {
  const { dir, cleanup } = tempDir('aw-kel-serve-');
  try {
    const kels = join(dir, 'kels');
    mkdirSync(kels);
    const file = join(kels, `${MULTI_PREFIX}.kel.json`);
    writeFileSync(file, kelDocument(MULTI_PREFIX, MULTI_EVENTS, 1));
    writeFileSync(join(dir, 'registry.json'), JSON.stringify({ parties: [{ id: MULTI }] }));
    writeNewKeyFile(join(dir, 'w.pem'), ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(1))));
    const w = await spawnServe(
      [
        'serve',
        '--listen',
        '127.0.0.1:0',
        '--data-dir',
        join(dir, 'data'),
        '--key',
        join(dir, 'w.pem'),
        '--name',
        'witness.test/kel',
        '--roles',
        'anchor',
        '--registry',
        join(dir, 'registry.json'),
        '--allow-underived-seeds',
        '--kel-poll-seconds',
        '0',
      ],
      { env: { AW_KEL_SOURCE: `dir:${kels}` } },
    );
    try {
      let seed = 0;
      const submit = async (p: TestParty) => {
        const now = Math.floor(Date.now() / 1000);
        const anchor = signAnchor(p, { seedId: fill(++seed), index: 1, head: fill(1), cumulative: 1n, timestamp: now });
        const r = await post(`${w.url}/v1/anchor`, anchorRequest(anchor, { agent: MULTI }));
        return { status: r.status, code: (r.body as { code?: string }).code ?? null };
      };
      assert.equal((await submit(oldKey)).status, 200);
      assert.equal((await submit(newKey)).code, 'key_not_current');
      // The rotation written in place: not a rename, so no reload yet.
      writeFileSync(file, kelDocument(MULTI_PREFIX, MULTI_EVENTS, 2));
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal((await submit(oldKey)).status, 200);
      w.child.kill('SIGHUP');
      const until = Date.now() + 15_000;
      while ((await submit(newKey)).status !== 200) {
        if (Date.now() > until) throw new Error('SIGHUP did not reload the KEL source');
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal((await submit(oldKey)).code, 'key_not_current');
      const metrics = (await get(`${w.url}/metrics`)).text;
      assert.match(metrics, /^registry_kel_parties\{status="accepted"\} 1$/m);
      assert.match(metrics, /^registry_kel_invalid_total\{reason="rollback"\} 0$/m);
    } finally {
      assert.equal(await w.stop(), 0);
    }
  } finally {
    cleanup();
  }
});
