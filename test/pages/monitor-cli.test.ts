// `anchor-witness monitor --html FILE`: the report is written after the poll, self-contained, with
// the seed's chart and the finding (a withholding witness) and its evidence.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeAnchor } from '../../src/anchor/codec.ts';
import { deriveSeedId } from '../../src/anchor/seed.ts';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem } from '../../src/crypto/ed25519.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { META_CSP } from '../../src/pages/layout.ts';
import { escapeHtml } from '../../src/pages/html.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { tempDir } from '../helpers/tmp.ts';
import { post, startTestWitness } from '../helpers/witness.ts';

const CLI = join(import.meta.dirname, '..', 'helpers', 'client-cli.ts');

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
    });
  });
}

void test('monitor --once --html writes a self-contained report with the chart and the finding', { timeout: 30_000 }, async () => {
  const tmp = tempDir('aw-pages-cli-');
  const alice = edParty(0x09);
  const registry = {
    parties: [{ id: 'did:keri:EAlice', delegator: 'did:keri:ERoot', keys: [{ curve: 'ed25519', public_key: encodeHex(alice.publicKey) }] }],
  };
  mkdirSync(join(tmp.dir, 'w1'));
  mkdirSync(join(tmp.dir, 'w2'));
  const k2 = join(tmp.dir, 'w2.pem');
  writeNewKeyFile(k2, ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(0x02))));
  const w1 = await startTestWitness(join(tmp.dir, 'w1'), registry, { name: 'w1.pages.test' });
  const w2 = await startTestWitness(join(tmp.dir, 'w2'), registry, { name: 'w2.pages.test', keyFile: k2 });
  try {
    const seedId = deriveSeedId('did:keri:ERoot', 'did:keri:EAlice', 'CLI');
    const anchor = signAnchor(alice, { seedId, index: 1, head: fill(0x31), cumulative: 10n, timestamp: 1_700_000_001 });
    const r = await post(`${w1.url}/v1/anchor`, {
      anchor: encodeAnchor(anchor),
      party: { agent: 'did:keri:EAlice', root: 'did:keri:ERoot', scope: 'CLI' },
    });
    assert.equal(r.status, 200, r.text);
    const seed = encodeHex(seedId);
    const html = join(tmp.dir, 'report.html');
    // Watching a seed needs the parties' keys: without --registry it is a usage error (exit 2).
    const unpinned = await run(['monitor', '--once', '--witness', `${w1.url},${w2.url}`, '--seed', seed]);
    assert.equal(unpinned.code, 2, unpinned.stderr);
    assert.match(unpinned.stderr, /--seed and --all-duplicities need --registry FILE/);
    const registryFile = join(tmp.dir, 'registry.json');
    writeFileSync(registryFile, JSON.stringify(registry));
    const res = await run([
      'monitor',
      '--once',
      '--witness',
      `${w1.url},${w2.url}`,
      '--registry',
      registryFile,
      '--seed',
      seed,
      '--state',
      join(tmp.dir, 'state.json'),
      '--html',
      html,
    ]);
    assert.equal(res.code, 1, res.stderr); // w2 withholds: a finding
    assert.match(res.stdout, /ALERT withholding/);
    const page = readFileSync(html, 'utf8');
    assert.equal(statSync(html).mode & 0o777, 0o644);
    assert.ok(page.includes(`<meta http-equiv="Content-Security-Policy" content="${escapeHtml(META_CSP)}">`));
    assert.ok(page.includes(`id="seed-${seed}"`));
    assert.match(page, /<article class="finding alert" id="finding-1" data-kind="withholding">/);
    assert.match(page, /<a download="finding-1-withholding-evidence\.json" href="data:application\/json;charset=utf-8;base64,/);
    assert.doesNotMatch(page, /<script|<link rel="stylesheet"|src="http/i);
  } finally {
    await w1.close();
    await w2.close();
    tmp.cleanup();
  }
});
