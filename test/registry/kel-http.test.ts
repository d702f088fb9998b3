// A witness whose parties' keys come from KELs (SPEC §3.5), over HTTP, with a dir: source and with
// a git: source: the agent's current key is co-signed; a pending delegated rotation keeps the old
// key; once the delegator anchors it the new key is accepted and the old one refused
// (key_not_current); a rolled-back copy keeps the newer state, also across a restart (kel_tips →
// 503 registry_behind); a revoked agent is delegation_revoked. KELs: research/upstream-kel.md §4
// (keripy fixtures and the derived continuation), see test/helpers/kel-vectors.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { decodeHex, encodeHex } from '../../src/encoding/hex.ts';
import { anchorRequest, signAnchor as signAnchorWith } from '../../src/client/party.ts';
import { generateP256 } from '../../src/crypto/p256.ts';
import { KelBuilder, kelFile, p256Signer, signer } from '../helpers/kel-builder.ts';
import { DEFAULT_KEL_LIMITS } from '../../src/keri/index.ts';
import type { RunningWitness } from '../../src/witness/node.ts';
import { fill, signAnchor, type TestParty } from '../helpers/anchors.ts';
import { initRepo, writeKelRef } from '../helpers/kel-git.ts';
import {
  AGENT_EVENTS,
  AGENT_PREFIX,
  kelDocument,
  MULTI_EVENTS,
  MULTI_PREFIX,
  ROOT_EVENTS,
  ROOT_PREFIX,
  SEEDS,
  type VectorEvent,
} from '../helpers/kel-vectors.ts';
import { tempDir } from '../helpers/tmp.ts';
import { get, post, startTestWitness } from '../helpers/witness.ts';
import { waitFor } from '../helpers/poll.ts';

const party = (seedHex: string): TestParty => {
  const key = ed25519KeyFromSeed(decodeHex(seedHex, 32));
  return { key, publicKey: ed25519PublicKeyBytes(key) };
};
const dipKey = party(SEEDS.s11_0);
const drtKey = party(SEEDS.s11_1);
const multiOld = party(SEEDS.s00_0);
const multiNew = party(SEEDS.s00_3);

const AGENT = `did:keri:${AGENT_PREFIX}`;
const ROOT = `did:keri:${ROOT_PREFIX}`;
const MULTI = `did:keri:${MULTI_PREFIX}`;
const LIMITS = { anchors_per_minute: 100_000, new_seeds_per_day: 100_000 };
const REGISTRY = {
  parties: [
    { id: ROOT, delegates: true, limits: LIMITS },
    { id: MULTI, limits: LIMITS },
  ],
};

let seedByte = 0;
/** A new anchor on a fresh seed (underived seeds allowed), signed by `signer`. */
async function submit(w: RunningWitness, signer: TestParty, agent = AGENT, root: string | null = ROOT) {
  seedByte++;
  const now = Math.floor(Date.now() / 1000);
  const anchor = signAnchor(signer, { seedId: fill(seedByte), index: 1, head: fill(1), cumulative: 1n, timestamp: now });
  const res = await post(`${w.url}/v1/anchor`, anchorRequest(anchor, root === null ? { agent } : { agent, root }));
  const body = res.body as { code?: string; detail?: string };
  return { status: res.status, code: body.code ?? null, detail: body.detail ?? '', retryAfter: res.headers.get('retry-after') };
}

async function metric(w: RunningWitness, name: string): Promise<number> {
  const text = (await get(`${w.url}/metrics`)).text;
  const line = text.split('\n').find((l) => l.startsWith(name + ' '));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

/** The witness has published a reload: registry_reloads_total went past `after`. */
const reloaded = async (w: RunningWitness, after: number): Promise<void> =>
  waitFor('a registry reload', async () => (await metric(w, 'registry_reloads_total')) > after);

function start(dir: string, source: string, pollSeconds: number): Promise<RunningWitness> {
  return startTestWitness(dir, REGISTRY, {
    allowUnderivedSeeds: true,
    kel: { source, pollSeconds, limits: DEFAULT_KEL_LIMITS },
  });
}

/** The whole scenario, on any source: `publish(prefix, events, n)` makes the first n events current there. */
async function scenario(
  dir: string,
  source: string,
  pollSeconds: number,
  publish: (prefix: string, events: readonly VectorEvent[], n: number) => void,
) {
  publish(ROOT_PREFIX, ROOT_EVENTS, 2);
  publish(AGENT_PREFIX, AGENT_EVENTS, 1);
  publish(MULTI_PREFIX, MULTI_EVENTS, 1);
  let w = await start(dir, source, pollSeconds);
  try {
    // The dip is anchored by ROOT's ixn: the dip's key is current.
    assert.deepEqual((await submit(w, dipKey)).status, 200);
    assert.equal((await submit(w, drtKey)).code, 'key_not_current');
    // A party of its own (icp, 3 keys, kt 2): any one current key signs.
    assert.deepEqual(await submit(w, multiOld, MULTI, null), { status: 200, code: null, detail: '', retryAfter: null });
    assert.equal((await submit(w, dipKey, AGENT, MULTI)).code, 'delegation_mismatch');

    // The drt is published, the delegator has not anchored it yet: pending, the old key stays current.
    let n = await metric(w, 'registry_reloads_total');
    publish(AGENT_PREFIX, AGENT_EVENTS, 2);
    publish(MULTI_PREFIX, MULTI_EVENTS, 2);
    await reloaded(w, n);
    await waitFor('the pending drt', async () => (await metric(w, 'registry_kel_parties{status="pending"}')) === 1);
    assert.equal((await submit(w, dipKey)).status, 200);
    assert.equal((await submit(w, drtKey)).code, 'key_not_current');
    // The plain rotation of MULTI is in force at once.
    await waitFor('the rotation of MULTI', async () => (await submit(w, multiNew, MULTI, null)).status === 200);
    assert.equal((await submit(w, multiOld, MULTI, null)).code, 'key_not_current');

    // ROOT anchors the drt (ixn2): the new key is current, the old one is refused.
    publish(ROOT_PREFIX, ROOT_EVENTS, 3);
    await waitFor('the anchored drt', async () => (await metric(w, 'registry_kel_parties{status="accepted"}')) === 3);
    assert.equal((await submit(w, drtKey)).status, 200);
    const old = await submit(w, dipKey);
    assert.equal(old.code, 'key_not_current');

    // A rolled-back copy of the agent's KEL: refused (rollback), the newer state stays in force.
    n = await metric(w, 'registry_kel_invalid_total{reason="rollback"}');
    publish(AGENT_PREFIX, AGENT_EVENTS, 1);
    await waitFor('the rollback', async () => (await metric(w, 'registry_kel_invalid_total{reason="rollback"}')) > n);
    assert.equal((await submit(w, drtKey)).status, 200);
    assert.equal((await submit(w, dipKey)).code, 'key_not_current');

    // Across a restart the store's kel_tips row (s=1) is newer than what the old copy gives: 503.
    await w.close();
    w = await start(dir, source, pollSeconds);
    for (const k of [drtKey, dipKey]) {
      const r = await submit(w, k);
      assert.equal(r.status, 503);
      assert.equal(r.code, 'registry_behind');
      assert.equal(r.retryAfter, '30');
    }
    // The full copy again: the newer state is derived and used.
    n = await metric(w, 'registry_reloads_total');
    publish(AGENT_PREFIX, AGENT_EVENTS, 2);
    await reloaded(w, n);
    await waitFor('the agent state', async () => (await submit(w, drtKey)).status === 200);
    assert.equal((await submit(w, dipKey)).code, 'key_not_current');

    // ROOT revokes the agent (ixn3, seal {d: AGENT}): refused whether or not party.root is given.
    publish(ROOT_PREFIX, ROOT_EVENTS, 4);
    await waitFor('the revocation', async () => (await submit(w, drtKey)).code === 'delegation_revoked');
    assert.equal((await submit(w, drtKey, AGENT, null)).code, 'delegation_revoked');

    // The status page shows the counts.
    const page = await get(w.url, { accept: 'text/html' });
    assert.match(page.text, /id="kel-accepted">3</);
  } finally {
    await w.close();
  }
}

void test('dir: source over HTTP: current key, pending drt, anchored drt, rollback (also across a restart), revocation', async () => {
  const { dir, cleanup } = tempDir('aw-kel-dir-');
  try {
    const kels = join(dir, 'kels');
    mkdirSync(kels);
    // Files are replaced by rename (the watched directory's debounce picks it up, no poll).
    await scenario(dir, `dir:${kels}`, 0, (prefix, events, n) => {
      const tmp = join(kels, `.${prefix}.tmp`);
      writeFileSync(tmp, kelDocument(prefix, events, n));
      renameSync(tmp, join(kels, `${prefix}.kel.json`));
    });
  } finally {
    cleanup();
  }
});

void test('git: source over HTTP: the same with refs/auths/kel/<s1>/<prefix> commits, polled every second', async () => {
  const { dir, cleanup } = tempDir('aw-kel-git-');
  try {
    const repo = initRepo(join(dir, 'kels.git'));
    await scenario(dir, `git:${repo}`, 1, (prefix, events, n) => {
      writeKelRef(repo, prefix, events.slice(0, n));
    });
  } finally {
    cleanup();
  }
});

void test('start-up: --kel-source needs --registry; an entry with keys that also has a KEL starts (shadowed); an unreadable source refuses to start', async () => {
  const { dir, cleanup } = tempDir('aw-kel-start-');
  try {
    const kels = join(dir, 'kels');
    mkdirSync(kels);
    writeFileSync(join(kels, `${ROOT_PREFIX}.kel.json`), kelDocument(ROOT_PREFIX, ROOT_EVENTS, 1));
    const kel = { source: `dir:${kels}`, pollSeconds: 0, limits: DEFAULT_KEL_LIMITS };
    const code = (c: string) => (e: unknown) => (e as { code?: string }).code === c;
    await assert.rejects(startTestWitness(dir, REGISTRY, { kel, registryFile: undefined }), code('registry_required'));
    const conflict = { parties: [{ id: ROOT, keys: [{ curve: 'ed25519', public_key: encodeHex(dipKey.publicKey) }] }] };
    const shadowing = await startTestWitness(dir, conflict, { kel });
    await shadowing.close();
    await assert.rejects(
      startTestWitness(dir, REGISTRY, { kel: { ...kel, source: `dir:${join(dir, 'missing')}` } }),
      code('kel_source_unreadable'),
    );
    await assert.rejects(startTestWitness(dir, REGISTRY, { kel: { ...kel, source: `svn:${kels}` } }), code('invalid_kel_source'));
  } finally {
    cleanup();
  }
});

void test('a source that cannot be read as a whole counts registry_reload_failures_total and keeps every state', async () => {
  const { dir, cleanup } = tempDir('aw-kel-fail-');
  try {
    const kels = join(dir, 'kels');
    mkdirSync(kels);
    writeFileSync(join(kels, `${ROOT_PREFIX}.kel.json`), kelDocument(ROOT_PREFIX, ROOT_EVENTS, 2));
    writeFileSync(join(kels, `${AGENT_PREFIX}.kel.json`), kelDocument(AGENT_PREFIX, AGENT_EVENTS, 1));
    const w = await start(dir, `dir:${kels}`, 1);
    try {
      assert.equal((await submit(w, dipKey)).status, 200);
      renameSync(kels, join(dir, 'kels-away'));
      await waitFor('a failed reload', async () => (await metric(w, 'registry_reload_failures_total')) > 0);
      assert.equal((await submit(w, dipKey)).status, 200);
      const page = await get(w.url, { accept: 'text/html' });
      assert.match(page.text, /failed/);
    } finally {
      await w.close();
    }
  } finally {
    cleanup();
  }
});

void test('a delegated agent with a P-256 key (KELs from the builder): its anchors are co-signed; another root is delegation_mismatch', async () => {
  const { dir, cleanup } = tempDir('aw-kel-p256-');
  try {
    const kels = join(dir, 'kels');
    mkdirSync(kels);
    const agentKey = generateP256();
    const root = KelBuilder.incept({ signers: [signer('p256-root/0')], next: [signer('p256-root/1')] });
    const agent = KelBuilder.incept({
      signers: [p256Signer(agentKey.privateKey)],
      next: [signer('p256-agent/1', 'p256')],
      delegator: root.prefix,
    });
    root.interact([agent.sealOf(0)]);
    writeFileSync(join(kels, `${root.prefix}.kel.json`), kelFile(root));
    writeFileSync(join(kels, `${agent.prefix}.kel.json`), kelFile(agent, true)); // attachments as upstream's hex
    const w = await startTestWitness(
      dir,
      { parties: [{ id: root.prefix, delegates: true }] },
      { allowUnderivedSeeds: true, kel: { source: `dir:${kels}`, pollSeconds: 0, limits: DEFAULT_KEL_LIMITS } },
    );
    try {
      const now = Math.floor(Date.now() / 1000);
      const anchor = signAnchorWith(agentKey.privateKey, 'p256', {
        seedId: fill(0x77),
        index: 1,
        head: fill(1),
        cumulative: 1n,
        timestamp: now,
        witnessSet: { said: 'EWitSet', threshold: 1 },
      });
      const agentId = `did:keri:${agent.prefix}`;
      let r = await post(`${w.url}/v1/anchor`, anchorRequest(anchor, { agent: agentId, root: `did:keri:${root.prefix}` }));
      assert.equal(r.status, 200, r.text);
      r = await post(`${w.url}/v1/anchor`, anchorRequest(anchor, { agent: agentId, root: ROOT }));
      assert.equal((r.body as { code: string }).code, 'delegation_mismatch');
    } finally {
      await w.close();
    }
  } finally {
    cleanup();
  }
});
