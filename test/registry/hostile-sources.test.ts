// The hostile KEL sources of SPEC §3.5 rev 4 ("Failure isolation", "Aggregate bounds", "Off the
// event loop"; issue 25 items 1–3), each over HTTP with a witness polling its source every second:
// * git: a ~1 KB ref whose events/ is a 20-level binary tree of trees (valid git, fsck clean), as a
//   per-prefix ref and under refs/auths/registry — before: `ls-tree -r` passed the shared 64 MiB
//   cap and every reload failed (and the witness refused to start);
// * dir: and git: a `{}` KEL named after a static-keys party — before: registry_conflict, every
//   reload (and start-up) refused;
// * git: a small repository whose one compressible 8 MiB blob 30 refs share — before: parsed 30
//   times (the witness ran out of memory); now read and parsed once;
// * dir: a valid 8 MiB KEL (icp with 32 keys, kt 1, every event 31 wrong-key signatures and one
//   valid one) — before: ~88 000 Ed25519 verifications on the event loop; now in the worker, and
//   /health p99 over loopback stays under 100 ms while it is evaluated.
// In each, the witness starts with the hostile entry present, and another party's revocation (a
// delegated agent revoked by its root) and rotation apply within one poll.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { anchorRequest } from '../../src/client/party.ts';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { DEFAULT_KEL_LIMITS } from '../../src/keri/index.ts';
import type { RunningWitness } from '../../src/witness/node.ts';
import { edParty, fill, signAnchor, type TestParty } from '../helpers/anchors.ts';
import { KelBuilder, kelFile, signer, type KelSigner } from '../helpers/kel-builder.ts';
import { commit, git, initRepo, seqName, setRef, writeKelRef, writeTree } from '../helpers/kel-git.ts';
import { waitFor } from '../helpers/poll.ts';
import { tempDir } from '../helpers/tmp.ts';
import { get, post, startTestWitness } from '../helpers/witness.ts';

/** The anchor-signing key of a builder signer (same seed as test/helpers/kel-builder.ts's signer()). */
function partyOf(label: string): TestParty {
  const key = ed25519KeyFromSeed(new Uint8Array(createHash('sha256').update(`kel-builder/ed25519/${label}`).digest()));
  return { key, publicKey: ed25519PublicKeyBytes(key) };
}

const LIMITS = { anchors_per_minute: 100_000, new_seeds_per_day: 100_000 };
const staticKey = edParty(0x51);

/** Root R (delegates), its agent A, a plain party M, a static-keys party S. */
function parties() {
  const root = KelBuilder.incept({ signers: [signer('h/root/0')], next: [signer('h/root/1')] });
  const agent = KelBuilder.incept({ signers: [signer('h/agent/0')], next: [signer('h/agent/1')], delegator: root.prefix });
  root.interact([agent.sealOf(0)]);
  const multi = KelBuilder.incept({ signers: [signer('h/m/0')], next: [signer('h/m/1')] });
  const S = 'E' + 'S'.repeat(43);
  const registry = {
    parties: [
      { id: `did:keri:${root.prefix}`, delegates: true, limits: LIMITS },
      { id: `did:keri:${multi.prefix}`, limits: LIMITS },
      { id: `did:keri:${S}`, keys: [{ curve: 'ed25519', public_key: encodeHex(staticKey.publicKey) }], limits: LIMITS },
    ],
  };
  return { root, agent, multi, S, registry };
}

let seedByte = 0;
async function submit(w: RunningWitness, p: TestParty, agent: string, root?: string) {
  seedByte = (seedByte % 250) + 1;
  const anchor = signAnchor(p, {
    seedId: fill(seedByte),
    index: 1,
    head: fill(1),
    cumulative: 1n,
    timestamp: Math.floor(Date.now() / 1000),
  });
  const res = await post(
    `${w.url}/v1/anchor`,
    anchorRequest(anchor, root === undefined ? { agent: `did:keri:${agent}` } : { agent: `did:keri:${agent}`, root: `did:keri:${root}` }),
  );
  return (res.body as { code?: string }).code ?? String(res.status);
}

async function metric(w: RunningWitness, name: string): Promise<number> {
  const line = (await get(`${w.url}/metrics`)).text.split('\n').find((l) => l.startsWith(name + ' '));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

function startWitness(
  dir: string,
  source: string,
  registry: unknown,
  aggregate?: { maxIdentifiers: number; maxTotalBytes: number; maxHeapMb: number },
) {
  return startTestWitness(dir, registry, {
    allowUnderivedSeeds: true,
    kel: { source, pollSeconds: 1, limits: DEFAULT_KEL_LIMITS, ...(aggregate === undefined ? {} : { aggregate }) },
  });
}

/**
 * The parties work with the hostile entry present; then R revokes A and M rotates: after one
 * reload that began after the change, both apply. `publish` writes a builder's KEL to the source.
 */
async function othersStillApply(w: RunningWitness, p: ReturnType<typeof parties>, publish: (b: KelBuilder) => void): Promise<void> {
  assert.equal(await submit(w, partyOf('h/agent/0'), p.agent.prefix, p.root.prefix), '200');
  assert.equal(await submit(w, partyOf('h/m/0'), p.multi.prefix), '200');
  assert.equal(await submit(w, staticKey, p.S), '200');
  p.root.interact([{ d: p.agent.prefix }]);
  p.multi.rotate({ signers: [signer('h/m/1')], next: [signer('h/m/2')] });
  publish(p.root);
  publish(p.multi);
  const n = await metric(w, 'registry_reloads_total');
  // One reload may have begun before the change: the one after it must apply it.
  await waitFor('two reloads after the change', async () => (await metric(w, 'registry_reloads_total')) >= n + 2, 60_000);
  assert.equal(await submit(w, partyOf('h/agent/0'), p.agent.prefix, p.root.prefix), 'delegation_revoked');
  assert.equal(await submit(w, partyOf('h/m/1'), p.multi.prefix), '200');
  assert.equal(await submit(w, partyOf('h/m/0'), p.multi.prefix), 'key_not_current');
  assert.equal(await submit(w, staticKey, p.S), '200');
}

const peakRss = (): number => Math.round(process.resourceUsage().maxRSS / 1024);

function dirPublisher(kels: string) {
  return (b: KelBuilder, text = kelFile(b)): void => {
    const tmp = join(kels, `.${b.prefix}.tmp`);
    writeFileSync(tmp, text);
    renameSync(tmp, join(kels, `${b.prefix}.kel.json`));
  };
}

const gitPublisher = (repo: string) => (b: KelBuilder) => {
  writeKelRef(
    repo,
    b.prefix,
    b.events.map((event, i) => ({ event, attachment: b.attachments[i]! })),
  );
};

/** A tree whose every level holds two copies of the level below: 2^levels leaves from `levels` + 1 small objects. */
function treeBomb(repo: string, levels: number): string {
  const blob = git(repo, ['hash-object', '-w', '--stdin'], '{}');
  let tree = git(repo, ['mktree'], `100644 blob ${blob}\t${seqName(0)}.json\n100644 blob ${blob}\tx.json\n`);
  for (let i = 0; i < levels; i++) tree = git(repo, ['mktree'], `040000 tree ${tree}\ta\n040000 tree ${tree}\tb\n`);
  return tree;
}

void test('git: a tree bomb under events/ (per-prefix ref and registry ref) refuses only that identifier; the others rotate and are revoked within one poll', async (t) => {
  const { dir, cleanup } = tempDir('aw-kel-bomb-');
  try {
    const repo = initRepo(join(dir, 'r.git'));
    const p = parties();
    const publish = gitPublisher(repo);
    for (const b of [p.root, p.agent, p.multi]) publish(b);
    const bomb = treeBomb(repo, 20);
    const X = 'E' + 'X'.repeat(43);
    setRef(repo, `refs/auths/kel/EX/${X}`, commit(repo, git(repo, ['mktree'], `040000 tree ${bomb}\tevents\n`)));
    // The same bomb as an identity of the registry ref.
    const Y = 'E' + 'Y'.repeat(43);
    const yTree = git(repo, ['mktree'], `040000 tree ${bomb}\tevents\n`);
    const l3 = git(repo, ['mktree'], `040000 tree ${yTree}\t${Y}\n`);
    const l2 = git(repo, ['mktree'], `040000 tree ${l3}\tYY\n`);
    const l1 = git(repo, ['mktree'], `040000 tree ${l2}\tEY\n`);
    const v1 = git(repo, ['mktree'], `040000 tree ${l1}\tidentities\n`);
    setRef(repo, 'refs/auths/registry', commit(repo, git(repo, ['mktree'], `040000 tree ${v1}\tv1\n`)));
    git(repo, ['fsck', '--no-progress']);
    const w = await startWitness(dir, `git:${repo}`, p.registry);
    try {
      const invalid = (await get(`${w.url}/metrics`)).text;
      assert.match(invalid, /registry_kel_parties\{status="invalid"\} 2/);
      await othersStillApply(w, p, publish);
      t.diagnostic(`peak RSS ${peakRss()} MiB`);
    } finally {
      await w.close();
    }
  } finally {
    cleanup();
  }
});

for (const kind of ['dir', 'git'] as const) {
  void test(`${kind}: a {} KEL named after a static-keys party is shadowed (counted), never a load error; the witness starts and the others apply within one poll`, async () => {
    const { dir, cleanup } = tempDir(`aw-kel-shadow-${kind}-`);
    try {
      const p = parties();
      let source: string;
      let publish: (b: KelBuilder) => void;
      if (kind === 'dir') {
        const kels = join(dir, 'kels');
        mkdirSync(kels);
        writeFileSync(join(kels, `${p.S}.kel.json`), '{}');
        publish = dirPublisher(kels);
        source = `dir:${kels}`;
      } else {
        const repo = initRepo(join(dir, 'r.git'));
        setRef(repo, `refs/auths/kel/ES/${p.S}`, commit(repo, writeTree(repo, [{ path: `events/${seqName(0)}.json`, content: '{}' }])));
        publish = gitPublisher(repo);
        source = `git:${repo}`;
      }
      for (const b of [p.root, p.agent, p.multi]) publish(b);
      const w = await startWitness(dir, source, p.registry);
      try {
        assert.equal(await metric(w, 'registry_kel_shadowed_total'), 1);
        assert.equal(await metric(w, 'registry_kel_invalid_total{reason="malformed"}'), 1);
        await othersStillApply(w, p, publish);
        assert.equal(await metric(w, 'registry_kel_shadowed_total'), 1, 'counted once per change, not per reload');
        assert.equal(await metric(w, 'registry_reload_failures_total'), 0);
      } finally {
        await w.close();
      }
    } finally {
      cleanup();
    }
  });
}

void test('git: one compressible 8 MiB blob shared by 30 refs is read and parsed once; the witness starts, RSS stays bounded, the others apply within one poll', async (t) => {
  const { dir, cleanup } = tempDir('aw-kel-shared-');
  try {
    const repo = initRepo(join(dir, 'r.git'));
    const p = parties();
    const publish = gitPublisher(repo);
    for (const b of [p.root, p.agent, p.multi]) publish(b);
    // Strict JSON of ~2.8 million empty objects: tiny packed, hundreds of MiB of heap per parse.
    const body = '[' + '{},'.repeat(Math.floor((DEFAULT_KEL_LIMITS.maxBytes - 16) / 3)) + '{}]';
    const blob = git(repo, ['hash-object', '-w', '--stdin'], body);
    git(repo, ['repack', '-adq']);
    const tree = commit(
      repo,
      git(repo, ['mktree'], `040000 tree ${git(repo, ['mktree'], `100644 blob ${blob}\t${seqName(0)}.json\n`)}\tevents\n`),
    );
    for (let i = 0; i < 30; i++) {
      const prefix = `E${String.fromCharCode(97 + (i % 26))}${'Q'.repeat(40)}${String(i).padStart(2, '0')}`;
      setRef(repo, `refs/auths/kel/${prefix.slice(0, 2)}/${prefix}`, tree);
    }
    git(repo, ['gc', '-q']);
    const packed = Number(git(repo, ['count-objects', '-v']).match(/size-pack: (\d+)/)![1]);
    t.diagnostic(`repository pack: ${packed} KiB`);
    const before = peakRss();
    const w = await startWitness(dir, `git:${repo}`, p.registry);
    try {
      assert.equal(await metric(w, 'registry_kel_invalid_total{reason="malformed"}'), 30);
      await othersStillApply(w, p, publish);
      const after = peakRss();
      t.diagnostic(`peak RSS ${before} MiB before start, ${after} MiB after the hostile reloads`);
      // Parsed once per reload in a worker with a 512 MiB heap: far below 30 parses' worth.
      assert.ok(after - before < 1500, `peak RSS grew by ${after - before} MiB`);
    } finally {
      await w.close();
    }
  } finally {
    cleanup();
  }
});

/**
 * A valid KEL of about `bytes` (its dir: file): icp with 32 keys, kt 1, ixns; each event carries
 * one valid signature (index 0) and 31 wrong-key ones (indexes 1–31). A verifier that checks every
 * index does ~88 000 Ed25519 verifications for it; one that stops at the threshold (SPEC §3.5 rev 4
 * "Bounded work per event") one per event — either way off the event loop.
 */
function heavyKel(bytes: number): { builder: KelBuilder; text: string } {
  const keys = Array.from({ length: 32 }, (_, i) => signer(`h/heavy/${i}`));
  const stranger = signer('h/heavy/stranger');
  const wrong = stranger.sign(new Uint8Array([1, 2, 3]));
  const signers: KelSigner[] = keys.map((k, i) => (i === 0 ? k : { key: k.key, sign: () => wrong }));
  const b = KelBuilder.incept({ signers, next: [signer('h/heavy/next')], kt: 1 });
  let size = 200 + JSON.stringify(b.events[0]).length + b.attachments[0]!.length;
  for (;;) {
    const e = b.interact([], signers);
    size += JSON.stringify(e.event).length + e.attachment.length + 6;
    if (size > bytes - 4096) break;
  }
  return { builder: b, text: kelFile(b) };
}

void test('dir: a valid 8 MiB KEL with 31 wrong-key signatures per event is verified off the event loop: /health p99 < 100 ms during the reload; the others apply within one poll', async (t) => {
  const { dir, cleanup } = tempDir('aw-kel-heavy-');
  try {
    const kels = join(dir, 'kels');
    mkdirSync(kels);
    const p = parties();
    const publish = dirPublisher(kels);
    for (const b of [p.root, p.agent, p.multi]) publish(b);
    const heavy = heavyKel(DEFAULT_KEL_LIMITS.maxBytes);
    assert.ok(heavy.text.length <= DEFAULT_KEL_LIMITS.maxBytes && heavy.text.length > 7.5 * 1024 * 1024, `${heavy.text.length} bytes`);
    t.diagnostic(`heavy KEL: ${heavy.builder.events.length} events, ${heavy.text.length} bytes`);
    let w = await startWitness(dir, `dir:${kels}`, p.registry);
    try {
      const accepted = await metric(w, 'registry_kel_parties{status="accepted"}');
      // The heavy KEL arrives: measure /health over loopback until its evaluation is published.
      writeFileSync(join(kels, '.heavy.tmp'), heavy.text);
      renameSync(join(kels, '.heavy.tmp'), join(kels, `${heavy.builder.prefix}.kel.json`));
      const latencies: number[] = [];
      const startedAt = Date.now();
      for (;;) {
        const t0 = performance.now();
        const res = await fetch(`${w.url}/health`);
        await res.arrayBuffer();
        latencies.push(performance.now() - t0);
        if (latencies.length % 20 === 0 && (await metric(w, 'registry_kel_parties{status="accepted"}')) > accepted) break;
        if (Date.now() - startedAt > 180_000) throw new Error('the heavy KEL was not evaluated in 180 s');
        await new Promise((r) => setTimeout(r, 5));
      }
      latencies.sort((a, b) => a - b);
      const p99 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))]!;
      t.diagnostic(
        `/health during the reload: ${latencies.length} requests over ${Date.now() - startedAt} ms, p50 ${latencies[latencies.length >> 1]!.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${latencies.at(-1)!.toFixed(1)} ms; peak RSS ${peakRss()} MiB`,
      );
      assert.ok(latencies.length >= 20);
      assert.ok(p99 < 100, `/health p99 ${p99.toFixed(1)} ms`);
      await othersStillApply(w, p, publish);
      // …and the witness starts with it present.
      await w.close();
      w = await startWitness(dir, `dir:${kels}`, p.registry);
      assert.equal(await metric(w, 'registry_kel_parties{status="accepted"}'), accepted + 1);
      assert.equal(await submit(w, partyOf('h/m/1'), p.multi.prefix), '200');
    } finally {
      await w.close();
    }
  } finally {
    cleanup();
  }
});
