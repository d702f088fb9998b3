// SPEC §7.2 "Commitment" and §7.3 test 5 (rev 4): the chain digest, the RFC 6962 tree over chain
// digests and the inclusion proofs, checked against the SPEC's known answer and recomputed
// independently with Python's hashlib (no code shared with src/) over C1–C3 and the upstream fixture
// chains of research/upstream-bridge.md §3.6.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { attestationSignedBytes, decodeAttestation } from '../../src/bridge/attestation.ts';
import { buildChainState, chainDigest, chainInclusionFailure } from '../../src/bridge/chain-state.ts';
import { decodeHex, encodeHex } from '../../src/encoding/hex.ts';
import { VECTORS } from './_helpers.ts';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tokenBridgeProgram } from '../../src/cli/token-bridge.ts';
import { finalizedAnchorMember } from '../../src/cli/token-bridge-gate.ts';
import { tempDir } from '../helpers/tmp.ts';

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const C1 = [utf8('{}')];
const C2 = [utf8('{}'), utf8('[]')];
const C3 = [utf8('x')];

const PY = String.raw`
import hashlib, json, sys, base64
def sha(*parts):
    h = hashlib.sha256()
    for p in parts: h.update(p)
    return h.digest()
def digest(links):
    return sha(b"auths-bridge/chain/v1\n", bytes([len(links)]), *[sha(l) for l in links])
def mth(leaves):
    if len(leaves) == 1: return sha(b"\x00", leaves[0])
    k = 1
    while k * 2 < len(leaves): k *= 2
    return sha(b"\x01", mth(leaves[:k]), mth(leaves[k:]))
def path(i, leaves):
    if len(leaves) == 1: return []
    k = 1
    while k * 2 < len(leaves): k *= 2
    if i < k: return path(i, leaves[:k]) + [mth(leaves[k:])]
    return path(i - k, leaves[k:]) + [mth(leaves[:k])]
chains = [[bytes.fromhex(x) for x in c] for c in json.load(sys.stdin)]
ds = [digest(c) for c in chains]
print(json.dumps({"digests": [d.hex() for d in ds], "head": mth(ds).hex(),
                  "proofs": [[base64.b64encode(h).decode() for h in path(i, ds)] for i in range(len(ds))]}))
`;

function python(chains: Uint8Array[][]): { digests: string[]; head: string; proofs: string[][] } {
  const out = execFileSync('python3', ['-c', PY], { input: JSON.stringify(chains.map((c) => c.map((l) => encodeHex(l)))) });
  return JSON.parse(out.toString()) as { digests: string[]; head: string; proofs: string[][] };
}

void describe('chain commitment (SPEC §7.2)', () => {
  void it('the known answer: D1–D3, the head and the proof for leaf 1 of 3', () => {
    const ds = [C1, C2, C3].map((c) => chainDigest(c));
    assert.deepEqual(
      ds.map((d) => encodeHex(d)),
      [
        '5f7e0bc6423be514905ce52896d78765646b3c37c84e7bbc396393cdf90c7b61',
        '484a2748bf600ece46a0ac388f410851f7687a5de177f264a1992887c6770f8d',
        'fadc0078b45e4af811ccf6aec067ace228862c12bf06db7233067f27579f87b0',
      ],
    );
    const state = buildChainState(ds);
    assert.equal(state.head, '0367493dff97c03e0a18c2a79de64c380c232e889ba81a8d48e0fcf738ec6bbb');
    assert.deepEqual(state.chains[1]!.hashes, [
      'BqzRzrp4QSdUGtStfC62DuBAN0RPbBSIFB8nMRxPTVU=',
      'GhNv77glCWh5UbrMoahFSEvjFoWmJ5JXTWy9YG11kvs=',
    ]);
    for (const c of state.chains) assert.equal(chainInclusionFailure(decodeHex(c.digest, 32), c, decodeHex(state.head, 32)), null);
  });

  void it('python hashlib recomputes C1–C3 and the upstream fixture chains (digests, head, every proof)', () => {
    const fixture = VECTORS.repo_fixture_attestation.attestation;
    const derived = VECTORS.derived_two_link_chain.attestation_chain;
    const bytesOf = (a: Record<string, unknown>, i: number) => attestationSignedBytes(decodeAttestation(a, `/${i}`));
    const upstream = [[bytesOf(fixture, 0)], [bytesOf(derived[0]!, 0)], [bytesOf(derived[0]!, 0), bytesOf(derived[1]!, 1)]];
    // the signed bytes are the ones research/upstream-bridge.md §3.6 prints
    assert.equal(new TextDecoder().decode(upstream[0]![0]), VECTORS.repo_fixture_attestation.canonical_bytes_utf8);
    assert.equal(new TextDecoder().decode(upstream[2]![1]), VECTORS.derived_two_link_chain.canonical_bytes_utf8[1]);
    for (const chains of [[C1, C2, C3], upstream, [...upstream, C1, C2, C3]]) {
      const py = python(chains);
      const state = buildChainState(chains.map((c) => chainDigest(c)));
      assert.deepEqual(
        state.chains.map((c) => c.digest),
        py.digests,
      );
      assert.equal(state.head, py.head);
      assert.deepEqual(
        state.chains.map((c) => c.hashes),
        py.proofs,
      );
    }
  });

  void it('a chain outside the tree, a wrong index, a forged path or an over-long proof is refused', () => {
    const ds = [C1, C2, C3].map((c) => chainDigest(c));
    const state = buildChainState(ds);
    const head = decodeHex(state.head, 32);
    const p = state.chains[1]!;
    assert.match(String(chainInclusionFailure(chainDigest([utf8('y')]), p, head)), /not at leaf 1/);
    assert.notEqual(chainInclusionFailure(ds[1]!, { ...p, leaf_index: 0 }, head), null);
    assert.notEqual(chainInclusionFailure(ds[1]!, { ...p, hashes: [p.hashes[1]!, p.hashes[0]!] }, head), null);
    assert.notEqual(chainInclusionFailure(ds[1]!, { ...p, hashes: Array<string>(21).fill(p.hashes[0]!) }, head), null);
    assert.notEqual(chainInclusionFailure(ds[1]!, { ...p, tree_size: 2 ** 20 + 1 }, head), null);
    assert.throws(() => chainDigest([]));
    assert.throws(() => chainDigest(Array<Uint8Array>(9).fill(utf8('x'))));
  });
});

void describe('token-bridge chain-state build and credentials --chain-state', () => {
  void it('builds the tree over the chain files in order; credentials finds the presented chain and its proof', async () => {
    const t = tempDir('tb-cs-');
    try {
      const fixture = [VECTORS.repo_fixture_attestation.attestation];
      const derived = VECTORS.derived_two_link_chain.attestation_chain;
      writeFileSync(join(t.dir, 'a.json'), JSON.stringify(fixture));
      writeFileSync(join(t.dir, 'b.json'), JSON.stringify(derived));
      let out = '';
      const program = tokenBridgeProgram({ out: (s) => (out += s) });
      program.exitOverride();
      await program.parseAsync(['chain-state', 'build', '--chain', join(t.dir, 'a.json'), '--chain', join(t.dir, 'b.json')], {
        from: 'user',
      });
      const state = JSON.parse(out) as ReturnType<typeof buildChainState>;
      const bytes = (c: Record<string, unknown>[]) => c.map((a, i) => attestationSignedBytes(decodeAttestation(a, `/${i}`)));
      const py = python([bytes(fixture), bytes(derived)]);
      assert.equal(state.v, 'auths-bridge/chain-state/v1');
      assert.equal(state.head, py.head);
      assert.equal(state.tree_size, 2);
      writeFileSync(join(t.dir, 'state.json'), out);
      writeFileSync(join(t.dir, 'bundle.json'), '{"v":"anchor-witness/finalized/v1"}');
      const member = finalizedAnchorMember({ finalizedAnchor: join(t.dir, 'bundle.json'), chainState: join(t.dir, 'state.json') }, derived);
      assert.deepEqual(member?.proof, { leaf_index: 1, tree_size: 2, hashes: py.proofs[1] });
      assert.throws(
        () => finalizedAnchorMember({ finalizedAnchor: join(t.dir, 'bundle.json'), chainState: join(t.dir, 'state.json') }, [derived[0]]),
        {
          code: 'invalid_option',
        },
      );
    } finally {
      t.cleanup();
    }
  });
});
