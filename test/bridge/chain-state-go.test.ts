// SPEC §7.3 test 5 (rev 4): Go `golang.org/x/mod/sumdb/tlog.CheckRecord` (test/bridge/go-inclusion,
// built with Debian's golang-go and golang-golang-x-mod-dev, as the other Go interop tests) checks
// every inclusion proof `token-bridge chain-state build` computes — the §7.2 known answer C1–C3, the
// upstream fixture chains of research/upstream-bridge.md §3.6, and trees of 1…17 chains — and
// refuses a proof with one hash flipped, a wrong leaf index and a wrong tree size (the check can
// fail). Skipped, saying why, when Go or x/mod is not installed.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { decodeAttestation, attestationSignedBytes } from '../../src/bridge/attestation.ts';
import { buildChainState, chainDigest, type ChainStateDocument } from '../../src/bridge/chain-state.ts';
import { tempDir } from '../helpers/tmp.ts';
import { VECTORS } from './_helpers.ts';

const run = promisify(execFile);
const GOPATH = '/usr/share/gocode';
const SOURCE = join(import.meta.dirname, 'go-inclusion', 'main.go');
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const C1 = [utf8('{}')];
const C2 = [utf8('{}'), utf8('[]')];
const C3 = [utf8('x')];

async function goMissing(): Promise<string | null> {
  try {
    await run('go', ['version'], { timeout: 10_000 });
  } catch {
    return 'go is not installed (apt-get install golang-go golang-golang-x-mod-dev)';
  }
  if (!existsSync(join(GOPATH, 'src/golang.org/x/mod/sumdb/tlog')))
    return `golang.org/x/mod is not under ${GOPATH} (apt-get install golang-golang-x-mod-dev)`;
  return null;
}

async function check(bin: string, state: ChainStateDocument): Promise<string[]> {
  const child = execFile(bin, [], { timeout: 30_000 });
  const out = new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (b: Buffer) => {
      text += b.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(text);
      else reject(new Error(`go-inclusion exit ${String(code)}: ${text}`));
    });
  });
  child.stdin!.end(JSON.stringify(state));
  return (await out).trim().split('\n');
}

void test('Go x/mod tlog.CheckRecord accepts every chain-state proof and refuses tampered ones', async (t) => {
  const missing = await goMissing();
  if (missing !== null) {
    t.diagnostic(`skipped: ${missing}`);
    t.skip(missing);
    return;
  }
  const { dir, cleanup } = tempDir('tb-go-incl-');
  try {
    const env = { ...process.env, GO111MODULE: 'off', GOPATH, GOFLAGS: '', GOCACHE: join(tmpdir(), 'anchor-witness-gocache') };
    const bin = join(dir, 'go-inclusion');
    await run('go', ['build', '-o', bin, SOURCE], { env, cwd: dir, timeout: 180_000 });

    const fixture = VECTORS.repo_fixture_attestation.attestation;
    const derived = VECTORS.derived_two_link_chain.attestation_chain;
    const bytesOf = (a: Record<string, unknown>, i: number) => attestationSignedBytes(decodeAttestation(a, `/${i}`));
    const upstream = [[bytesOf(fixture, 0)], [bytesOf(derived[0]!, 0)], [bytesOf(derived[0]!, 0), bytesOf(derived[1]!, 1)]];

    const known = buildChainState([C1, C2, C3].map((c) => chainDigest(c)));
    assert.equal(known.head, '0367493dff97c03e0a18c2a79de64c380c232e889ba81a8d48e0fcf738ec6bbb');
    const trees: ChainStateDocument[] = [known, buildChainState(upstream.map((c) => chainDigest(c)))];
    for (let m = 1; m <= 17; m++)
      trees.push(buildChainState(Array.from({ length: m }, (_, i) => chainDigest([utf8(`chain ${i} of ${m}`)]))));
    for (const s of trees) {
      assert.deepEqual(
        await check(bin, s),
        s.chains.map((_, i) => `OK ${i}`),
        `tree of ${s.tree_size}`,
      );
    }

    // Tampered: one proof hash flipped, a wrong leaf index, a wrong tree size → refused by Go.
    const good = trees.find((s) => s.tree_size === 5)!;
    const flip = (b64: string): string => {
      const b = Buffer.from(b64, 'base64');
      b[0]! ^= 1;
      return b.toString('base64');
    };
    const c0 = good.chains[0]!;
    const tampered = {
      ...good,
      chains: [
        { ...c0, hashes: [flip(c0.hashes[0]!), ...c0.hashes.slice(1)] },
        { ...c0, leaf_index: 1 },
        { ...good.chains[4]!, digest: c0.digest },
      ],
    };
    const lines = await check(bin, tampered);
    assert.equal(lines.length, 3);
    for (const l of lines) assert.match(l, /^FAIL /);
    const wrongSize = await check(bin, { ...good, tree_size: 6 });
    assert.ok(
      wrongSize.some((l) => l.startsWith('FAIL ')),
      wrongSize.join('\n'),
    );
  } finally {
    cleanup();
  }
});
