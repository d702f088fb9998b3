// SPEC §7.3 item 3 last bullet, §1.2 "a bridge pins both sets during the overlap" (issue 30 item 3):
// a real witness-key rotation, not two unrelated witness groups. Three in-process witnesses start
// with K1 keys; each is restarted with `--next-key` K2 (the announcement: receipts then carry
// `cosignature_next` and checkpoints a K2 line), then with `--key` K2 a day later (the completion).
// The bridge pins set A (the K1 keys) and set B (the same names and origins, K2 keys). It mints:
// before (K1 receipts, set A), during (the same receipts judged under set A by `cosignature`, and
// under set B by `cosignature_next`), and after (K2 receipts, set B); the claim `ws` names the set
// each bundle committed to. After the completion a set-A bundle is not final (the K2-only receipts
// do not verify under K1). Once the operator drops set A, a K1 bundle → anchor_witness_set_mismatch.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { decodeJwt } from 'jose';
import { buildTokenRequest } from '../../src/bridge/client.ts';
import { attestationChainDigest, buildChainState } from '../../src/bridge/chain-state.ts';
import { decodeAttestation, type AttestationWire } from '../../src/bridge/attestation.ts';
import { DEFAULT_ANCHOR_SCOPE } from '../../src/bridge/freshness-gate.ts';
import { startBridge, type BridgeConfig, type RunningBridge } from '../../src/bridge/node.ts';
import { keriNonTransferablePrefix } from '../../src/bridge/root.ts';
import { encodeAnchor } from '../../src/anchor/codec.ts';
import { deriveSeedId } from '../../src/anchor/seed.ts';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { decodeHex, encodeHex } from '../../src/encoding/hex.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { encodeFinalizedBundle } from '../../src/verify/finalize.ts';
import { parseReceipt, type Receipt } from '../../src/verify/receipt.ts';
import { makeWitnessSet, witnessSetSaid, type WitnessSet } from '../../src/verify/witness-set.ts';
import { startWitness, type RunningWitness } from '../../src/witness/node.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { tempDir } from '../helpers/tmp.ts';
import { post as postJson } from '../helpers/witness.ts';
import { chain, DEV1, freshNonce, type Key } from './_helpers.ts';

const log = pino({ level: 'silent' });
const nowS = (): number => Math.floor(Date.now() / 1000);
const toJson = (v: unknown): Record<string, unknown> =>
  JSON.parse(JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : x))) as Record<string, unknown>;

/** One witness whose key rotates K1 → K2 across restarts (same name, origin and data dir). */
class RotatingWitness {
  readonly name: string;
  readonly k1: Uint8Array;
  readonly k2: Uint8Array;
  private readonly dir: string;
  private readonly registryFile: string;
  private running: RunningWitness | undefined;

  constructor(base: string, i: number, registry: unknown) {
    this.name = `rot${i}.test`;
    this.dir = join(base, `rot${i}`);
    mkdirSync(this.dir, { recursive: true });
    const k1 = ed25519KeyFromSeed(fill(0x50 + i));
    const k2 = ed25519KeyFromSeed(fill(0x58 + i));
    this.k1 = ed25519PublicKeyBytes(k1);
    this.k2 = ed25519PublicKeyBytes(k2);
    writeNewKeyFile(join(this.dir, 'k1.pem'), ed25519PrivateKeyToPem(k1));
    writeNewKeyFile(join(this.dir, 'k2.pem'), ed25519PrivateKeyToPem(k2));
    this.registryFile = join(this.dir, 'registry.json');
    writeFileSync(this.registryFile, JSON.stringify(registry));
  }

  get url(): string {
    return this.running!.url;
  }

  /** 'k1': K1 alone; 'announce': K1 with --next-key K2; 'complete': --key K2 a day and a second later. */
  async start(stage: 'k1' | 'announce' | 'complete'): Promise<void> {
    await this.stop();
    this.running = await startWitness(
      {
        host: '127.0.0.1',
        port: 0,
        dataDir: join(this.dir, 'data'),
        keyFile: join(this.dir, stage === 'complete' ? 'k2.pem' : 'k1.pem'),
        ...(stage === 'announce' ? { nextKeyFile: join(this.dir, 'k2.pem') } : {}),
        ...(stage === 'complete' ? { rotationNow: () => nowS() + 86_401 } : {}),
        name: this.name,
        roles: ['anchor'],
        registryFile: this.registryFile,
        allowUnderivedSeeds: false,
        dev: false,
        quota: { anchorsPerMinute: 10_000, newSeedsPerDay: 10_000 },
      },
      log,
    );
  }

  async stop(): Promise<void> {
    const r = this.running;
    this.running = undefined;
    await r?.close();
  }
}

void describe('a real K1→K2 witness-key rotation across two pinned --anchor-witness-set files', { timeout: 240_000 }, () => {
  const party = edParty(0x67);
  const did = `did:keri:${keriNonTransferablePrefix(party.publicKey)}`;
  const root: Key = { key: party.key, pub: party.publicKey, hex: encodeHex(party.publicKey), did };
  const t0 = nowS();
  const links: AttestationWire[] = chain(root, [
    { device: DEV1, issuer: did, capabilities: ['deploy'], expiresAt: t0 + 7200, timestamp: t0 - 10 },
  ]);
  const state = buildChainState([attestationChainDigest(links.map((a, i) => decodeAttestation(a, `/${i}`)))]);
  let tmp: { dir: string; cleanup: () => void };
  let ws: RotatingWitness[];
  let setA: WitnessSet;
  let setB: WitnessSet;
  let saidA: string;
  let saidB: string;
  let bridge: RunningBridge;
  let config: BridgeConfig;
  let index = 0;
  const bundles: Record<string, Record<string, unknown>> = {};

  const setFile = async (set: WitnessSet, file: string): Promise<string> => {
    const b = await encodeFinalizedBundle({
      anchor: signAnchor(party, { seedId: new Uint8Array(32), index: 0, head: new Uint8Array(32), cumulative: 1n, timestamp: 0 }),
      witnessSet: set,
      receipts: [],
    });
    writeFileSync(file, JSON.stringify(toJson(b).witness_set));
    return file;
  };

  /** An anchor committing to `set`, sent to all three witnesses; the bundle with their receipts. */
  const finalize = async (set: WitnessSet): Promise<{ bundle: Record<string, unknown>; receipts: Receipt[] }> => {
    index++;
    const anchor = signAnchor(party, {
      seedId: deriveSeedId(did, did, DEFAULT_ANCHOR_SCOPE),
      index,
      head: decodeHex(state.head, 32),
      cumulative: BigInt(index),
      timestamp: nowS(),
      witnessSet: { said: await witnessSetSaid(set), threshold: set.threshold },
    });
    const receipts: Receipt[] = [];
    for (const w of ws) {
      const r = await postJson(`${w.url}/v1/anchor`, {
        anchor: encodeAnchor(anchor),
        party: { agent: did, root: did, scope: DEFAULT_ANCHOR_SCOPE },
      });
      assert.equal(r.status, 200, r.text);
      receipts.push(parseReceipt(r.body));
    }
    return { bundle: toJson(await encodeFinalizedBundle({ anchor, witnessSet: set, receipts })), receipts };
  };

  const token = async (bundle: Record<string, unknown>): Promise<{ status: number; json: Record<string, unknown> }> => {
    const proof = state.chains[0]!;
    const body = buildTokenRequest({
      chain: links,
      rootPublicKey: root.hex,
      audience: 'sts.amazonaws.com',
      issuer: bridge.issuer.issuer,
      deviceKey: DEV1.key,
      iat: nowS(),
      nonce: freshNonce(),
      finalizedAnchor: { bundle, proof: { leaf_index: proof.leaf_index, tree_size: proof.tree_size, hashes: proof.hashes } },
    });
    const r = await fetch(`${bridge.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: r.status, json: (await r.json()) as Record<string, unknown> };
  };

  const mintsWith = async (bundle: Record<string, unknown>, said: string, what: string): Promise<void> => {
    const r = await token(bundle);
    assert.equal(r.status, 200, `${what}: ${JSON.stringify(r.json)}`);
    const claim = decodeJwt(r.json.access_token as string).auths_anchor as { ws: string; k: number; n: number };
    assert.equal(claim.ws, said, `${what}: ws names the set the bundle committed to`);
    assert.deepEqual([claim.k, claim.n], [2, 3], what);
  };

  before(async () => {
    tmp = tempDir('tb-gate-rotation-');
    const registry = { parties: [{ id: did, keys: [{ curve: 'ed25519', public_key: encodeHex(party.publicKey) }] }] };
    ws = [1, 2, 3].map((i) => new RotatingWitness(join(tmp.dir, 'w'), i, registry));
    for (const w of ws) await w.start('k1');
    const members = (k: 'k1' | 'k2') =>
      ws.map((w) => ({ name: w.name, curve: 'ed25519' as const, publicKey: w[k], logOrigin: `${w.name}/anchors` }));
    setA = makeWitnessSet(2, members('k1'));
    setB = makeWitnessSet(2, members('k2'));
    saidA = await witnessSetSaid(setA);
    saidB = await witnessSetSaid(setB);
    config = {
      host: '127.0.0.1',
      port: 0,
      dev: true,
      keyDir: join(tmp.dir, 'keys'),
      rateLimit: null,
      requireFinalizedAnchor: true,
      anchorWitnessSetFiles: [await setFile(setA, join(tmp.dir, 'set-a.json')), await setFile(setB, join(tmp.dir, 'set-b.json'))],
    };
    bridge = await startBridge(config, log);
  });
  after(async () => {
    await bridge.close();
    for (const w of ws) await w.stop();
    tmp.cleanup();
  });

  void it('before the rotation: K1 receipts, set A → token with ws = A', async () => {
    const { bundle, receipts } = await finalize(setA);
    assert.ok(receipts.every((r) => r.cosignature_next === undefined));
    bundles.beforeA = bundle;
    await mintsWith(bundle, saidA, 'before, set A');
  });

  void it('during the overlap: receipts carry cosignature_next; set A counts K1, set B counts K2', async () => {
    for (const w of ws) await w.start('announce');
    const a = await finalize(setA);
    assert.ok(
      a.receipts.every(
        (r) => r.cosignature_next !== undefined && r.cosignature_next.witness_public_key !== r.cosignature.witness_public_key,
      ),
      'every receipt carries cosignature_next by K2',
    );
    await mintsWith(a.bundle, saidA, 'during, set A (cosignature by K1)');
    const b = await finalize(setB);
    assert.deepEqual(
      b.receipts.map((r) => r.cosignature_next?.witness_public_key),
      ws.map((w) => encodeHex(w.k2)),
    );
    bundles.duringB = b.bundle;
    await mintsWith(b.bundle, saidB, 'during, set B (cosignature_next by K2)');
  });

  void it('after the completion: K2 receipts, set B → ws = B; a set-A anchor is not final (K2-only receipts)', async () => {
    for (const w of ws) await w.start('complete');
    const b = await finalize(setB);
    assert.ok(b.receipts.every((r, i) => r.cosignature_next === undefined && r.cosignature.witness_public_key === encodeHex(ws[i]!.k2)));
    await mintsWith(b.bundle, saidB, 'after, set B');
    // the bundle made during the overlap still verifies under set B (its K2 lines)
    await mintsWith(bundles.duringB!, saidB, 'the overlap bundle, set B');
    const a = await finalize(setA);
    const r = await token(a.bundle);
    assert.equal(r.status, 403, JSON.stringify(r.json));
    assert.equal(r.json.code, 'anchor_not_final', JSON.stringify(r.json));
  });

  void it('the operator drops set A: a K1-only bundle → anchor_witness_set_mismatch; set B still mints', async () => {
    await bridge.close();
    bridge = await startBridge({ ...config, anchorWitnessSetFiles: [join(tmp.dir, 'set-b.json')] }, log);
    const r = await token(bundles.beforeA!);
    assert.equal(r.status, 403, JSON.stringify(r.json));
    assert.equal(r.json.code, 'anchor_witness_set_mismatch', JSON.stringify(r.json));
    await mintsWith(bundles.duringB!, saidB, 'set B alone');
  });
});
