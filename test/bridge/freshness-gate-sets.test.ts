// SPEC §7.2 Flags (rev 4) and §1.2: two pinned --anchor-witness-set files during a witness-set
// change — a bundle final under either set mints and the claim `ws` names the set matched; a set
// pinned by neither is anchor_witness_set_mismatch. And (issue 30 item 3) the gate on PostgreSQL:
// two bridge replicas on one database share the anchor floor — a newer anchor pushed to one
// refuses the older head at the other (anchor_superseded) — and with the database down the gate
// answers 503 store_unavailable, never a token. Also SPEC §7.3 tests 4 and 6 not covered in
// freshness-gate.test.ts: another seed's receipt counts zero, WebCrypto failing → no token,
// /anchor-floor 404 without the gate and 503 anchor_floor_full at a row cap of 1. Real in-process
// witnesses over loopback.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { decodeJwt } from 'jose';
import { startBridge, type BridgeConfig, type RunningBridge } from '../../src/bridge/node.ts';
import { buildTokenRequest } from '../../src/bridge/client.ts';
import { attestationChainDigest, buildChainState, type ChainStateDocument } from '../../src/bridge/chain-state.ts';
import { decodeAttestation, type AttestationWire } from '../../src/bridge/attestation.ts';
import { keriNonTransferablePrefix } from '../../src/bridge/root.ts';
import { DEFAULT_ANCHOR_SCOPE } from '../../src/bridge/freshness-gate.ts';
import { encodeAnchor } from '../../src/anchor/codec.ts';
import { deriveSeedId } from '../../src/anchor/seed.ts';
import { decodeHex, encodeHex } from '../../src/encoding/hex.ts';
import { encodeFinalizedBundle } from '../../src/verify/finalize.ts';
import { witnessSetSaid, type WitnessSet } from '../../src/verify/witness-set.ts';
import { parseReceipt, type Receipt } from '../../src/verify/receipt.ts';
import { edParty, signAnchor, type TestParty } from '../helpers/anchors.ts';
import { setOf, startWitnesses, type TestWitness } from '../helpers/client-witnesses.ts';
import { pgSkip, startPgServer, type PgServer } from '../helpers/pg-server.ts';
import { post as postJson } from '../helpers/witness.ts';
import { tempDir } from '../helpers/tmp.ts';
import { chain, DEV1, DEV2, freshNonce, type Key } from './_helpers.ts';

const log = pino({ level: 'silent' });
const now = (): number => Math.floor(Date.now() / 1000);
const toJson = (v: unknown): Record<string, unknown> =>
  JSON.parse(JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : x))) as Record<string, unknown>;

/** A party (agent = root = its did:keri:B… prefix) with its device chains and a finalize helper. */
function partyOf(byte: number) {
  const party: TestParty = edParty(byte);
  const did = `did:keri:${keriNonTransferablePrefix(party.publicKey)}`;
  const root: Key = { key: party.key, pub: party.publicKey, hex: encodeHex(party.publicKey), did };
  const deviceChain = (device: Key): AttestationWire[] => {
    const t = now();
    return chain(root, [{ device, issuer: did, capabilities: ['deploy'], expiresAt: t + 3600, timestamp: t - 10 }]);
  };
  return {
    party,
    did,
    root,
    deviceChain,
    registryEntry: { id: did, keys: [{ curve: 'ed25519', public_key: encodeHex(party.publicKey) }] },
  };
}
type Party = ReturnType<typeof partyOf>;
const digestOf = (c: AttestationWire[]) => attestationChainDigest(c.map((a, i) => decodeAttestation(a, `/${i}`)));

async function finalize(
  p: Party,
  index: number,
  head: string,
  set: WitnessSet,
  from: readonly TestWitness[],
): Promise<Record<string, unknown>> {
  const anchor = signAnchor(p.party, {
    seedId: deriveSeedId(p.did, p.did, DEFAULT_ANCHOR_SCOPE),
    index,
    head: decodeHex(head, 32),
    cumulative: BigInt(index + 1),
    timestamp: now(),
    witnessSet: { said: await witnessSetSaid(set), threshold: set.threshold },
  });
  const receipts: Receipt[] = [];
  for (const w of from) {
    const r = await postJson(`${w.url}/v1/anchor`, {
      anchor: encodeAnchor(anchor),
      party: { agent: p.did, root: p.did, scope: DEFAULT_ANCHOR_SCOPE },
    });
    assert.equal(r.status, 200, r.text);
    receipts.push(parseReceipt(r.body));
  }
  return toJson(await encodeFinalizedBundle({ anchor, witnessSet: set, receipts }));
}

async function writeSetFile(p: Party, set: WitnessSet, file: string): Promise<void> {
  const b = await encodeFinalizedBundle({
    anchor: signAnchor(p.party, { seedId: new Uint8Array(32), index: 0, head: new Uint8Array(32), cumulative: 1n, timestamp: 0 }),
    witnessSet: set,
    receipts: [],
  });
  writeFileSync(file, JSON.stringify(toJson(b).witness_set));
}

async function token(
  bridge: RunningBridge,
  p: Party,
  c: AttestationWire[],
  device: Key,
  bundle: Record<string, unknown>,
  proof: ChainStateDocument['chains'][number],
): Promise<{ status: number; json: Record<string, unknown> }> {
  const body = buildTokenRequest({
    chain: c,
    rootPublicKey: p.root.hex,
    audience: 'sts.amazonaws.com',
    issuer: bridge.issuer.issuer,
    deviceKey: device.key,
    iat: now(),
    nonce: freshNonce(),
    finalizedAnchor: { bundle, proof: { leaf_index: proof.leaf_index, tree_size: proof.tree_size, hashes: proof.hashes } },
  });
  const r = await fetch(`${bridge.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
}

void describe('two pinned --anchor-witness-set (a witness-set change): either set mints, ws names it', { timeout: 180_000 }, () => {
  const p = partyOf(0x61);
  const q = partyOf(0x63);
  const A = p.deviceChain(DEV1);
  const state = buildChainState([digestOf(A)]);
  let tmp: { dir: string; cleanup: () => void };
  let ws: TestWitness[];
  let oldSet: WitnessSet;
  let newSet: WitnessSet;
  let bridge: RunningBridge;

  before(async () => {
    tmp = tempDir('tb-gate-sets-');
    ws = await startWitnesses(join(tmp.dir, 'w'), 4, { parties: [p.registryEntry, q.registryEntry] });
    oldSet = setOf(ws.slice(0, 3), 2);
    newSet = setOf(ws.slice(1, 4), 2);
    await writeSetFile(p, oldSet, join(tmp.dir, 'old.json'));
    await writeSetFile(p, newSet, join(tmp.dir, 'new.json'));
    bridge = await startBridge(
      {
        host: '127.0.0.1',
        port: 0,
        dev: true,
        keyDir: join(tmp.dir, 'keys'),
        rateLimit: null,
        requireFinalizedAnchor: true,
        anchorWitnessSetFiles: [join(tmp.dir, 'old.json'), join(tmp.dir, 'new.json')],
        anchorFloorMaxSeeds: 1,
      },
      log,
    );
  });
  after(async () => {
    await bridge.close();
    await Promise.all(ws.map((w) => w.stop()));
    tmp.cleanup();
  });

  void it('a bundle final under the old set mints with ws = the old SAID; under the new set with ws = the new SAID', async () => {
    const viaOld = await finalize(p, 1, state.head, oldSet, [ws[0]!, ws[1]!]);
    const r1 = await token(bridge, p, A, DEV1, viaOld, state.chains[0]!);
    assert.equal(r1.status, 200, JSON.stringify(r1.json));
    assert.equal((decodeJwt(r1.json.access_token as string).auths_anchor as { ws: string }).ws, await witnessSetSaid(oldSet));
    // the new set: w4 is only in it; w1 only in the old one
    const viaNew = await finalize(p, 2, state.head, newSet, [ws[2]!, ws[3]!]);
    const r2 = await token(bridge, p, A, DEV1, viaNew, state.chains[0]!);
    assert.equal(r2.status, 200, JSON.stringify(r2.json));
    const claim = decodeJwt(r2.json.access_token as string).auths_anchor as { ws: string; k: number; n: number };
    assert.equal(claim.ws, await witnessSetSaid(newSet));
    assert.equal(claim.n, 2);
  });

  void it("a receipt of a member outside the matched set counts zero (w1's receipt under the new set)", async () => {
    const b = await finalize(p, 3, state.head, newSet, [ws[0]!, ws[3]!]);
    const r = await token(bridge, p, A, DEV1, b, state.chains[0]!);
    assert.equal(r.status, 403);
    assert.equal(r.json.code, 'anchor_not_final', JSON.stringify(r.json));
  });

  void it("another seed's receipt counts zero (upstream's witness_quorum bug)", async () => {
    const mine = await finalize(p, 5, state.head, oldSet, [ws[0]!]);
    const QA = q.deviceChain(DEV1);
    const theirs = await finalize(q, 5, buildChainState([digestOf(QA)]).head, oldSet, [ws[1]!]);
    const mixed = { ...mine, receipts: [...(mine.receipts as unknown[]), ...(theirs.receipts as unknown[])] };
    const r = await token(bridge, p, A, DEV1, mixed, state.chains[0]!);
    assert.equal(r.status, 403);
    assert.equal(r.json.code, 'anchor_not_final', JSON.stringify(r.json));
  });

  void it('WebCrypto failing (subtle.verify stubbed to throw) → no token', async () => {
    const b = await finalize(p, 6, state.head, oldSet, [ws[0]!, ws[1]!]);
    const subtle = globalThis.crypto.subtle as unknown as { verify: (...a: unknown[]) => Promise<boolean> };
    const had = Object.prototype.hasOwnProperty.call(subtle, 'verify');
    const original = subtle.verify;
    subtle.verify = () => Promise.reject(new Error('stubbed: WebCrypto unavailable'));
    try {
      const r = await token(bridge, p, A, DEV1, b, state.chains[0]!);
      assert.notEqual(r.status, 200, JSON.stringify(r.json));
      assert.equal(r.json.access_token, undefined);
    } finally {
      if (had) subtle.verify = original;
      else delete (subtle as { verify?: unknown }).verify;
    }
    // and with WebCrypto back, the same bundle mints
    const ok = await token(bridge, p, A, DEV1, b, state.chains[0]!);
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
  });

  void it('--anchor-floor-max-seeds 1: a second seed → 503 anchor_floor_full on /token and /anchor-floor, no token', async () => {
    const QA = q.deviceChain(DEV1);
    const qs = buildChainState([digestOf(QA)]);
    const b = await finalize(q, 7, qs.head, oldSet, [ws[0]!, ws[1]!]);
    const r = await token(bridge, q, QA, DEV1, b, qs.chains[0]!);
    assert.equal(r.status, 503, JSON.stringify(r.json));
    assert.equal(r.json.code, 'anchor_floor_full');
    const pushed = await fetch(`${bridge.url}/anchor-floor`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ root: q.did, bundle: b }),
    });
    assert.equal(pushed.status, 503);
    assert.equal(((await pushed.json()) as { code: string }).code, 'anchor_floor_full');
  });

  void it('a set pinned by neither file → anchor_witness_set_mismatch', async () => {
    const other = setOf([ws[0]!, ws[3]!], 2);
    const b = await finalize(p, 8, state.head, other, [ws[0]!, ws[3]!]);
    const r = await token(bridge, p, A, DEV1, b, state.chains[0]!);
    assert.equal(r.status, 403);
    assert.equal(r.json.code, 'anchor_witness_set_mismatch', JSON.stringify(r.json));
  });
});

void describe('the gate on PostgreSQL: two bridge replicas share the anchor floor', { skip: pgSkip(), timeout: 180_000 }, () => {
  const p = partyOf(0x62);
  const A = p.deviceChain(DEV1);
  const B = p.deviceChain(DEV2);
  const state = buildChainState([digestOf(A), digestOf(B)]);
  let tmp: { dir: string; cleanup: () => void };
  let ws: TestWitness[];
  let set: WitnessSet;
  let server: PgServer;
  let replicas: RunningBridge[] = [];

  const pushFloor = async (bridge: RunningBridge, bundle: Record<string, unknown>) => {
    const r = await fetch(`${bridge.url}/anchor-floor`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ root: p.did, bundle }),
    });
    return { status: r.status, json: (await r.json()) as Record<string, unknown> };
  };

  before(async () => {
    tmp = tempDir('tb-gate-pg-');
    server = await startPgServer();
    ws = await startWitnesses(join(tmp.dir, 'w'), 3, { parties: [p.registryEntry] });
    set = setOf(ws, 2);
    await writeSetFile(p, set, join(tmp.dir, 'set.json'));
    const config: BridgeConfig = {
      host: '127.0.0.1',
      port: 0,
      keyDir: join(tmp.dir, 'keys'),
      issuer: 'https://bridge.example',
      rateLimit: null,
      store: await server.createDatabase('tbgate'),
      requireFinalizedAnchor: true,
      anchorWitnessSetFiles: [join(tmp.dir, 'set.json')],
    };
    replicas = [await startBridge(config, log)];
    replicas.push(await startBridge(config, log));
  });
  after(async () => {
    for (const r of replicas) await r.close();
    await Promise.all(ws.map((w) => w.stop()));
    await server.stop();
    tmp.cleanup();
  });

  void it('a fresh bundle mints at both; a device-less tree pushed to one → anchor_superseded at the other', async () => {
    const [one, two] = replicas as [RunningBridge, RunningBridge];
    assert.equal(one.nonces.kind, 'postgres');
    const old = await finalize(p, 1, state.head, set, ws.slice(0, 2));
    for (const b of [one, two]) {
      const r = await token(b, p, B, DEV2, old, state.chains[1]!);
      assert.equal(r.status, 200, JSON.stringify(r.json));
    }
    const revoked = buildChainState([digestOf(A)]);
    const newer = await finalize(p, 2, revoked.head, set, ws.slice(1, 3));
    const pushed = await pushFloor(one, newer);
    assert.equal(pushed.status, 200, JSON.stringify(pushed.json));
    const r = await token(two, p, B, DEV2, old, state.chains[1]!);
    assert.equal(r.status, 403, JSON.stringify(r.json));
    assert.equal(r.json.code, 'anchor_superseded');
    const ok = await token(two, p, A, DEV1, newer, revoked.chains[0]!);
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
  });

  void it('the database down → 503 store_unavailable, never a token', async () => {
    const [, two] = replicas as [RunningBridge, RunningBridge];
    const revoked = buildChainState([digestOf(A)]);
    const fresh = await finalize(p, 3, revoked.head, set, ws.slice(0, 2));
    server.halt();
    try {
      const r = await token(two, p, A, DEV1, fresh, revoked.chains[0]!);
      assert.equal(r.status, 503, JSON.stringify(r.json));
      assert.equal(r.json.code, 'store_unavailable');
      assert.equal(r.json.access_token, undefined);
    } finally {
      server.resume();
    }
  });
});

void describe('POST /anchor-floor without the gate', () => {
  void it('is 404', async () => {
    const t = tempDir('tb-gate-off-');
    const bridge = await startBridge({ host: '127.0.0.1', port: 0, dev: true, keyDir: join(t.dir, 'keys'), rateLimit: null }, log);
    try {
      const r = await fetch(`${bridge.url}/anchor-floor`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.equal(r.status, 404);
    } finally {
      await bridge.close();
      t.cleanup();
    }
  });
});
