// Issue 30, the freshness gate's cost. (1) The gate remembers final verdicts of its expensive pure
// part (G2's SAID, G8's signatures and proofs) by bundle content (src/bridge/gate-verdicts.ts). The
// reproduction: the same bundle presented again after the floor moved past it, or after the clock
// moved past its freshness window, must still be refused — anchor_superseded and anchor_stale — even
// though its verdict is in the cache (the hit counter shows the cached verdict was consulted). The
// same sequence without the cache gives the same answers. (2) G4 on the database's clock (SPEC §7
// rev 4): with PostgreSQL the anchor's age is judged on the time the nonce read took from the
// database, not on this replica's clock — a replica 40 s ahead mints on an anchor 30 s old that its
// own clock calls 70 s old (freshness 60 s), a replica 40 s behind mints on one 280 s ahead that its
// clock calls 320 s ahead, and refuses one 80 s old that its clock calls 40 s old. Real in-process
// witnesses over loopback.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { buildTokenRequest } from '../../src/bridge/client.ts';
import { attestationChainDigest, buildChainState, type ChainStateDocument } from '../../src/bridge/chain-state.ts';
import { decodeAttestation, type AttestationWire } from '../../src/bridge/attestation.ts';
import { BridgeError } from '../../src/bridge/errors.ts';
import { DEFAULT_ANCHOR_SCOPE } from '../../src/bridge/freshness-gate.ts';
import { GateVerdictCache, type GateVerdict } from '../../src/bridge/gate-verdicts.ts';
import { startBridge, type RunningBridge } from '../../src/bridge/node.ts';
import { MemoryNonceStore } from '../../src/bridge/nonces.ts';
import { keriNonTransferablePrefix } from '../../src/bridge/root.ts';
import { TokenService } from '../../src/bridge/service.ts';
import { generateSigningKeyPem, loadSigningKey, type SigningKey } from '../../src/bridge/signing.ts';
import { encodeAnchor } from '../../src/anchor/codec.ts';
import { checkEd25519PublicKey } from '../../src/crypto/ed25519-strict.ts';
import { deriveSeedId } from '../../src/anchor/seed.ts';
import { decodeHex, encodeHex } from '../../src/encoding/hex.ts';
import { encodeFinalizedBundle } from '../../src/verify/finalize.ts';
import { parseReceipt, type Receipt } from '../../src/verify/receipt.ts';
import { witnessSetSaid, type WitnessSet } from '../../src/verify/witness-set.ts';
import { edParty, signAnchor } from '../helpers/anchors.ts';
import { setOf, startWitnesses, type TestWitness } from '../helpers/client-witnesses.ts';
import { pgSkip, startPgServer, type PgServer } from '../helpers/pg-server.ts';
import { tempDir } from '../helpers/tmp.ts';
import { post as postJson } from '../helpers/witness.ts';
import { AUD, chain, DEV1, DEV2, freshNonce, ISSUER, policy, wire, type Key } from './_helpers.ts';

const log = pino({ level: 'silent' });
const toJson = (v: unknown): Record<string, unknown> =>
  JSON.parse(JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : x))) as Record<string, unknown>;

function partyOf(byte: number) {
  const party = edParty(byte);
  const did = `did:keri:${keriNonTransferablePrefix(party.publicKey)}`;
  const root: Key = { key: party.key, pub: party.publicKey, hex: encodeHex(party.publicKey), did };
  const deviceChain = (device: Key): AttestationWire[] => {
    const t = Math.floor(Date.now() / 1000);
    return chain(root, [{ device, issuer: did, capabilities: ['deploy'], expiresAt: t + 7200, timestamp: t - 10 }]);
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
  timestamp = Math.floor(Date.now() / 1000),
): Promise<Record<string, unknown>> {
  const anchor = signAnchor(p.party, {
    seedId: deriveSeedId(p.did, p.did, DEFAULT_ANCHOR_SCOPE),
    index,
    head: decodeHex(head, 32),
    cumulative: BigInt(index + 1),
    timestamp,
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

function tokenRequest(
  p: Party,
  c: AttestationWire[],
  device: Key,
  bundle: Record<string, unknown>,
  proof: ChainStateDocument['chains'][number],
  iat: number,
): Record<string, unknown> {
  return wire(
    buildTokenRequest({
      chain: c,
      rootPublicKey: p.root.hex,
      audience: AUD,
      issuer: ISSUER,
      deviceKey: device.key,
      iat,
      nonce: freshNonce(),
      finalizedAnchor: { bundle, proof: { leaf_index: proof.leaf_index, tree_size: proof.tree_size, hashes: proof.hashes } },
    }),
  );
}

void describe('a cached gate verdict never lets a superseded or stale anchor through', { timeout: 120_000 }, () => {
  const p = partyOf(0x65);
  const A = p.deviceChain(DEV1);
  const B = p.deviceChain(DEV2);
  const both = buildChainState([digestOf(A), digestOf(B)]);
  const revoked = buildChainState([digestOf(A)]);
  let tmp: { dir: string; cleanup: () => void };
  let ws: TestWitness[];
  let set: WitnessSet;
  let key: SigningKey;
  let old: Record<string, unknown>;
  let newer: Record<string, unknown>;

  before(async () => {
    tmp = tempDir('tb-gate-cache-');
    ws = await startWitnesses(join(tmp.dir, 'w'), 3, { parties: [p.registryEntry] });
    set = setOf(ws, 2);
    key = await loadSigningKey(await generateSigningKeyPem('ES256'));
    old = await finalize(p, 1, both.head, set, ws.slice(0, 2));
    newer = await finalize(p, 2, revoked.head, set, ws.slice(1, 3)); // B's device left the tree
  });
  after(async () => {
    await Promise.all(ws.map((w) => w.stop()));
    tmp.cleanup();
  });

  /** The same requests against a fresh service; each step's answer ('200' or the code) and the cache's hit count after it. */
  async function run(verdicts: GateVerdictCache | undefined): Promise<{ answers: string[]; hits: number[] }> {
    let shift = 0;
    const clock = (): number => Date.now() + shift;
    const svc = new TokenService({
      policy: policy({ startedAt: Date.now() - 3_600_000 }),
      trustedRoots: () => undefined,
      signingKey: () => key,
      nonces: new MemoryNonceStore(),
      now: clock,
      gate: {
        sets: [{ set, said: await witnessSetSaid(set) }],
        freshnessSeconds: 600,
        scope: DEFAULT_ANCHOR_SCOPE,
        ...(verdicts === undefined ? {} : { verdicts }),
      },
    });
    const answers: string[] = [];
    const hits: number[] = [];
    const step = async (f: () => Promise<unknown>): Promise<void> => {
      try {
        await f();
        answers.push('200');
      } catch (e) {
        if (!(e instanceof BridgeError)) throw e;
        answers.push(e.code);
      }
      hits.push(verdicts?.hits ?? 0);
    };
    const iat = (): number => Math.floor(clock() / 1000);
    await step(() => svc.exchange(tokenRequest(p, B, DEV2, old, both.chains[1]!, iat()))); // verified in full
    await step(() => svc.exchange(tokenRequest(p, B, DEV2, old, both.chains[1]!, iat()))); // the same bundle again
    await step(() => svc.anchorFloor({ root: p.did, bundle: newer })); // the party pushes the revocation
    await step(() => svc.exchange(tokenRequest(p, B, DEV2, old, both.chains[1]!, iat()))); // the revoked device, old bundle
    await step(() => svc.exchange(tokenRequest(p, A, DEV1, newer, revoked.chains[0]!, iat()))); // the kept device, new bundle
    shift += 601_000; // past --anchor-freshness 600 s
    await step(() => svc.exchange(tokenRequest(p, A, DEV1, newer, revoked.chains[0]!, iat())));
    return { answers, hits };
  }

  const expected = ['200', '200', '200', 'anchor_superseded', '200', 'anchor_stale'];

  void it('with the cache: the hits show the verdicts were remembered, and G6/G4 still refuse', async () => {
    const cache = new GateVerdictCache();
    const { answers, hits } = await run(cache);
    assert.deepEqual(answers, expected);
    // miss, hit, miss (the pushed bundle), hit (yet superseded), hit (the pushed bundle), hit (yet stale)
    assert.deepEqual(hits, [0, 1, 1, 2, 3, 4]);
    assert.equal(cache.size, 2);
  });

  void it('without the cache: the same answers', async () => {
    assert.deepEqual((await run(undefined)).answers, expected);
  });

  void it('a refused bundle is not remembered: one not final stays refused and uncached', async () => {
    const cache = new GateVerdictCache();
    const single = await finalize(p, 3, revoked.head, set, ws.slice(0, 1)); // 1 of 3
    const svc = new TokenService({
      policy: policy({ startedAt: Date.now() - 3_600_000 }),
      trustedRoots: () => undefined,
      signingKey: () => key,
      nonces: new MemoryNonceStore(),
      gate: { sets: [{ set, said: await witnessSetSaid(set) }], freshnessSeconds: 600, scope: DEFAULT_ANCHOR_SCOPE, verdicts: cache },
    });
    for (let i = 0; i < 2; i++) {
      const now = Math.floor(Date.now() / 1000);
      await assert.rejects(
        svc.exchange(tokenRequest(p, A, DEV1, single, revoked.chains[0]!, now)),
        (e: unknown) => e instanceof BridgeError && e.code === 'anchor_not_final',
      );
    }
    assert.equal(cache.size, 0);
    assert.equal(cache.hits, 0);
  });
});

void describe(
  "G4 on the database's clock: replicas 40 s ahead and behind on one PostgreSQL store",
  { skip: pgSkip(), timeout: 180_000 },
  () => {
    const p = partyOf(0x66);
    const A = p.deviceChain(DEV1);
    const state = buildChainState([digestOf(A)]);
    let tmp: { dir: string; cleanup: () => void };
    let ws: TestWitness[];
    let set: WitnessSet;
    let server: PgServer;
    let ahead: RunningBridge;
    let behind: RunningBridge;

    before(async () => {
      tmp = tempDir('tb-gate-dbclock-');
      server = await startPgServer();
      ws = await startWitnesses(join(tmp.dir, 'w'), 3, { parties: [p.registryEntry] });
      set = setOf(ws, 2);
      const b = await encodeFinalizedBundle({
        anchor: signAnchor(p.party, { seedId: new Uint8Array(32), index: 0, head: new Uint8Array(32), cumulative: 1n, timestamp: 0 }),
        witnessSet: set,
        receipts: [],
      });
      writeFileSync(join(tmp.dir, 'set.json'), JSON.stringify(toJson(b).witness_set));
      const base = {
        host: '127.0.0.1',
        port: 0,
        keyDir: join(tmp.dir, 'keys'),
        issuer: ISSUER,
        rateLimit: null,
        store: await server.createDatabase('tbdbclock'),
        storeDatabaseClock: Date.now, // stands in for the server's now(): the real clock
        requireFinalizedAnchor: true,
        anchorWitnessSetFiles: [join(tmp.dir, 'set.json')],
        anchorFreshnessSeconds: 60,
      };
      ahead = await startBridge({ ...base, clock: () => Date.now() + 40_000 }, log);
      behind = await startBridge({ ...base, clock: () => Date.now() - 40_000 }, log);
    });
    after(async () => {
      await ahead.close();
      await behind.close();
      await Promise.all(ws.map((w) => w.stop()));
      await server.stop();
      tmp.cleanup();
    });

    const token = async (bridge: RunningBridge, bundle: Record<string, unknown>): Promise<string> => {
      const body = tokenRequest(p, A, DEV1, bundle, state.chains[0]!, Math.floor(Date.now() / 1000));
      const r = await fetch(`${bridge.url}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json = (await r.json()) as { code?: string };
      return r.status === 200 ? '200' : `${r.status} ${String(json.code)}`;
    };

    void it('the anchor age is judged on the database time the nonce read returned, not the replica clock', async () => {
      const t = Math.floor(Date.now() / 1000);
      // oldest first (the witnesses see one seed's anchors in time order)
      const eighty = await finalize(p, 1, state.head, set, ws.slice(0, 2), t - 80);
      const thirty = await finalize(p, 2, state.head, set, ws.slice(0, 2), t - 30);
      const ahead280 = await finalize(p, 3, state.head, set, ws.slice(0, 2), t + 280);
      // the replica 40 s behind calls it 40 s old: on its own clock it would mint
      assert.equal(await token(behind, eighty), '403 anchor_stale');
      // the replica 40 s ahead calls it 70 s old: on its own clock it would refuse (anchor_stale)
      assert.equal(await token(ahead, thirty), '200');
      // the replica 40 s behind calls it 320 s ahead: on its own clock anchor_future
      assert.equal(await token(behind, ahead280), '200');
    });
  },
);

void describe('the pieces: the bounded verdict cache and the remembered on-curve test', () => {
  void it('GateVerdictCache: least recently used out first, bounded; no key for a document without canonical JSON', () => {
    const c = new GateVerdictCache(2);
    const v = (said: string): GateVerdict => ({ said, valid: 2, bundle: {} as GateVerdict['bundle'] });
    const [ka, kb, kc] = [{ a: 1 }, { b: 1 }, { c: 1 }].map((d) => c.keyOf(d));
    assert.equal(c.keyOf({ b: 1, a: 2 }), c.keyOf({ a: 2, b: 1 }), 'the key is of the canonical form');
    c.set(ka, v('A'));
    c.set(kb, v('B'));
    assert.equal(c.get(ka)?.said, 'A'); // A is now the most recently used
    c.set(kc, v('C')); // evicts B
    assert.equal(c.size, 2);
    assert.equal(c.get(kb), undefined);
    assert.deepEqual([c.get(ka)?.said, c.get(kc)?.said], ['A', 'C']);
    assert.equal(c.keyOf({ n: 1n }), undefined, 'a bigint has no JSON form: never cached');
    c.set(undefined, v('X'));
    assert.equal(c.size, 2);
  });

  void it('checkEd25519PublicKey answers the same on repeated calls (valid, not on the curve, small order)', () => {
    const valid = decodeHex('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a', 32); // RFC 8032 test 1
    // y = 2: (y² − 1)/(d·y² + 1) is not a square mod p
    const offCurve = new Uint8Array(32);
    offCurve[0] = 2;
    const identity = new Uint8Array(32);
    identity[0] = 1;
    for (let i = 0; i < 3; i++) {
      assert.doesNotThrow(() => {
        checkEd25519PublicKey(valid);
      });
      assert.throws(
        () => {
          checkEd25519PublicKey(offCurve);
        },
        { code: 'not_on_curve' },
      );
      assert.throws(
        () => {
          checkEd25519PublicKey(identity);
        },
        { code: 'small_order_key' },
      );
    }
  });
});
