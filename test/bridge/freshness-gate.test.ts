// SPEC §7.2 / §7.3 tests 3, 4 and 6 (rev 4): the witness-finalized freshness gate end to end, over
// loopback, with three real in-process witnesses (threshold 2) co-signing the party's chain-state
// anchors. The root is the non-transferable did:keri:B… prefix of the party key (agent = root).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { startBridge, type RunningBridge } from '../../src/bridge/node.ts';
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
import { post as postJson } from '../helpers/witness.ts';
import { tempDir } from '../helpers/tmp.ts';
import { chain, DEV1, DEV2, DEV3, freshNonce, type Key } from './_helpers.ts';

const log = pino({ level: 'silent' });
const PARTY = edParty(0x51);
const ROOT_DID = `did:keri:${keriNonTransferablePrefix(PARTY.publicKey)}`;
const ROOT_KEY: Key = { key: PARTY.key, pub: PARTY.publicKey, hex: encodeHex(PARTY.publicKey), did: ROOT_DID };
const OTHER = edParty(0x52);
const OTHER_DID = `did:keri:${keriNonTransferablePrefix(OTHER.publicKey)}`;

let tmp: { dir: string; cleanup: () => void };
let ws: TestWitness[];
let set: WitnessSet;
let said: string;
let bridge: RunningBridge;
const now = (): number => Math.floor(Date.now() / 1000);

const toJson = (v: unknown): Record<string, unknown> =>
  JSON.parse(JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : x))) as Record<string, unknown>;

/** Chains of the party's devices: A ends at DEV1, B at DEV2 (both one link from the root). */
function deviceChain(device: Key, root: Key = ROOT_KEY, did = ROOT_DID): AttestationWire[] {
  const t = now();
  return chain(root, [{ device, issuer: did, capabilities: ['deploy'], expiresAt: t + 3600, timestamp: t - 10 }]);
}
const digestOf = (c: AttestationWire[]) => attestationChainDigest(c.map((a, i) => decodeAttestation(a, `/${i}`)));

/** Anchor `state.head` at `index` for (root, agent) and collect receipts from `from`; the finalized bundle. */
async function finalize(
  index: number,
  head: Uint8Array,
  from: readonly TestWitness[],
  o: { party?: TestParty; root?: string; timestamp?: number } = {},
): Promise<Record<string, unknown>> {
  const party = o.party ?? PARTY;
  const root = o.root ?? ROOT_DID;
  const anchor = signAnchor(party, {
    seedId: deriveSeedId(root, root, DEFAULT_ANCHOR_SCOPE),
    index,
    head,
    cumulative: BigInt(index + 1),
    timestamp: o.timestamp ?? now(),
    witnessSet: { said, threshold: 2 },
  });
  const receipts: Receipt[] = [];
  for (const w of from) {
    const r = await postJson(`${w.url}/v1/anchor`, {
      anchor: encodeAnchor(anchor),
      party: { agent: root, root, scope: DEFAULT_ANCHOR_SCOPE },
    });
    assert.equal(r.status, 200, r.text);
    receipts.push(parseReceipt(r.body));
  }
  return toJson(await encodeFinalizedBundle({ anchor, witnessSet: set, receipts }));
}

async function token(
  c: AttestationWire[],
  device: Key,
  bundle: Record<string, unknown> | undefined,
  proof: ChainStateDocument['chains'][number] | undefined,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const body = buildTokenRequest({
    chain: c,
    rootPublicKey: ROOT_KEY.hex,
    audience: 'sts.amazonaws.com',
    issuer: bridge.issuer.issuer,
    deviceKey: device.key,
    iat: now(),
    nonce: freshNonce(),
    ...(bundle === undefined
      ? {}
      : { finalizedAnchor: { bundle, proof: { leaf_index: proof!.leaf_index, tree_size: proof!.tree_size, hashes: proof!.hashes } } }),
  });
  const r = await fetch(`${bridge.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
}

async function pushFloor(bundle: Record<string, unknown>): Promise<{ status: number; json: Record<string, unknown> }> {
  const r = await fetch(`${bridge.url}/anchor-floor`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ root: ROOT_DID, bundle }),
  });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
}

void describe('freshness gate end to end (SPEC §7.2): three witnesses, threshold 2', { timeout: 180_000 }, () => {
  const A = deviceChain(DEV1);
  const B = deviceChain(DEV2);
  let state: ChainStateDocument;

  before(async () => {
    tmp = tempDir('tb-gate-');
    const registry = {
      parties: [
        { id: ROOT_DID, keys: [{ curve: 'ed25519', public_key: encodeHex(PARTY.publicKey) }] },
        { id: OTHER_DID, keys: [{ curve: 'ed25519', public_key: encodeHex(OTHER.publicKey) }] },
      ],
    };
    ws = await startWitnesses(join(tmp.dir, 'w'), 3, registry);
    set = setOf(ws, 2);
    said = await witnessSetSaid(set);
    const setFile = join(tmp.dir, 'set.json');
    writeFileSync(
      setFile,
      JSON.stringify(
        toJson(
          await encodeFinalizedBundle({
            anchor: signAnchor(PARTY, { seedId: new Uint8Array(32), index: 0, head: new Uint8Array(32), cumulative: 1n, timestamp: 0 }),
            witnessSet: set,
            receipts: [],
          }),
        ).witness_set,
      ),
    );
    state = buildChainState([digestOf(A), digestOf(B)]);
    bridge = await startBridge(
      {
        host: '127.0.0.1',
        port: 0,
        dev: true,
        keyDir: join(tmp.dir, 'keys'),
        rateLimit: null,
        requireFinalizedAnchor: true,
        anchorWitnessSetFiles: [setFile],
        anchorFreshnessSeconds: 60,
        anchorFloorRate: { rps: 0.001, burst: 3 },
      },
      log,
    );
  });
  after(async () => {
    await bridge.close();
    await Promise.all(ws.map((w) => w.stop()));
    tmp.cleanup();
  });

  let bundle0: Record<string, unknown>;

  void it('an anchor older than --anchor-freshness → anchor_stale', async () => {
    const stale = await finalize(0, decodeHex(state.head, 32), ws.slice(0, 2), { timestamp: now() - 120 });
    assert.equal((await token(A, DEV1, stale, state.chains[0])).json.code, 'anchor_stale');
  });

  void it('a fresh bundle (2 of 3) mints, with auths_anchor; jose verifies it', async () => {
    bundle0 = await finalize(1, decodeHex(state.head, 32), ws.slice(0, 2));
    const r = await token(A, DEV1, bundle0, state.chains[0]);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const { payload } = await jwtVerify(r.json.access_token as string, createRemoteJWKSet(new URL(`${bridge.url}/.well-known/jwks.json`)), {
      issuer: bridge.issuer.issuer,
    });
    const claim = payload.auths_anchor as Record<string, unknown>;
    assert.equal(claim.ws, said);
    assert.equal(claim.idx, 1);
    assert.equal(claim.k, 2);
    assert.equal(claim.n, 2);
    assert.equal(claim.seed, encodeHex(deriveSeedId(ROOT_DID, ROOT_DID, DEFAULT_ANCHOR_SCOPE)));
  });

  void it('no finalized_anchor → anchor_required; a chain outside the tree → chain_not_anchored', async () => {
    assert.equal((await token(A, DEV1, undefined, undefined)).json.code, 'anchor_required');
    const C = deviceChain(DEV3);
    const r = await token(C, DEV3, bundle0, state.chains[0]);
    assert.equal(r.status, 403);
    assert.equal(r.json.code, 'chain_not_anchored');
  });

  void it('final at 1 of 3 → anchor_not_final; one receipt three times counts once', async () => {
    const one = await finalize(2, decodeHex(state.head, 32), ws.slice(0, 1));
    assert.equal((await token(A, DEV1, one, state.chains[0])).json.code, 'anchor_not_final');
    const receipts = one.receipts as unknown[];
    const thrice = { ...one, receipts: [receipts[0], receipts[0], receipts[0]] };
    const r = await token(A, DEV1, thrice, state.chains[0]);
    assert.equal(r.json.code, 'anchor_not_final', JSON.stringify(r.json));
  });

  void it('a receipt of another anchor (same seed, another index) counts zero', async () => {
    const mine = await finalize(3, decodeHex(state.head, 32), ws.slice(0, 1));
    const other = await finalize(4, decodeHex(state.head, 32), ws.slice(1, 2)); // w2's receipt of another anchor of this seed
    const mixed = { ...mine, receipts: [...(mine.receipts as unknown[]), ...(other.receipts as unknown[])] };
    assert.equal((await token(A, DEV1, mixed, state.chains[0])).json.code, 'anchor_not_final');
  });

  void it('one key under two names → anchor_witness_set_mismatch', async () => {
    const b = await finalize(5, decodeHex(state.head, 32), ws.slice(0, 2));
    const wset = b.witness_set as { members: Record<string, unknown>[] };
    const dup = { ...wset, members: [wset.members[0]!, { ...wset.members[0]!, name: 'w9.test' }, wset.members[2]!] };
    const r = await token(A, DEV1, { ...b, witness_set: dup }, state.chains[0]);
    assert.equal(r.json.code, 'anchor_witness_set_mismatch', JSON.stringify(r.json));
  });

  void it("another root's anchor → anchor_not_bound; a non-current party key → anchor_party_invalid", async () => {
    const theirs = await finalize(0, decodeHex(state.head, 32), ws.slice(0, 2), { party: OTHER, root: OTHER_DID });
    assert.equal((await token(A, DEV1, theirs, state.chains[0])).json.code, 'anchor_not_bound');
    // the party's seed, but signed by another key (the witnesses accept OTHER's key for OTHER only):
    // build it without witnesses — G7 answers before any receipt is counted
    const b = await finalize(6, decodeHex(state.head, 32), ws.slice(0, 2));
    const forged = signAnchor(OTHER, {
      seedId: deriveSeedId(ROOT_DID, ROOT_DID, DEFAULT_ANCHOR_SCOPE),
      index: 6,
      head: decodeHex(state.head, 32),
      cumulative: 7n,
      timestamp: now(),
      witnessSet: { said, threshold: 2 },
    });
    const r = await token(A, DEV1, { ...b, anchor: toJson(encodeAnchor(forged)) }, state.chains[0]);
    assert.equal(r.json.code, 'anchor_party_invalid', JSON.stringify(r.json));
  });

  void it('a same-head heartbeat keeps older bundles valid; a device-less tree pushed to /anchor-floor → anchor_superseded', async () => {
    const heartbeat = await finalize(8, decodeHex(state.head, 32), ws.slice(1, 3));
    assert.equal((await pushFloor(heartbeat)).status, 200);
    assert.equal((await token(A, DEV1, bundle0, state.chains[0])).status, 200); // index 1 < floor 8, same head
    // revoke DEV2: the new tree holds A only
    const revoked = buildChainState([digestOf(A)]);
    const newer = await finalize(9, decodeHex(revoked.head, 32), ws.slice(0, 2));
    const pushed = await pushFloor(newer);
    assert.equal(pushed.status, 200, JSON.stringify(pushed.json));
    assert.deepEqual(pushed.json.floor, { index: 9, head: revoked.head });
    const r = await token(B, DEV2, heartbeat, state.chains[1]);
    assert.equal(r.status, 403);
    assert.equal(r.json.code, 'anchor_superseded');
    // the device still in the tree mints with the newer bundle
    assert.equal((await token(A, DEV1, newer, revoked.chains[0])).status, 200);
  });

  void it('/anchor-floor: 429 over its bucket; 17 receipts → 400', async () => {
    const b = await finalize(10, decodeHex(state.head, 32), ws.slice(0, 2));
    const many = { ...b, receipts: Array<unknown>(17).fill((b.receipts as unknown[])[0]) };
    assert.equal((await token(A, DEV1, many, state.chains[0])).status, 400);
    let last = 0;
    for (let i = 0; i < 5 && last !== 429; i++) last = (await pushFloor(b)).status;
    assert.equal(last, 429);
  });
});
