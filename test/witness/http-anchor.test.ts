// SPEC §3.3/§3.4 over real loopback HTTP: every row of the check table, and every 200 verified
// offline with the project's own verifier against the pinned witness key.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { encodeHex } from '../../src/encoding/hex.ts';
import { stringifyJson } from '../../src/encoding/json.ts';
import { encodeAnchor, decodeDuplicityProof } from '../../src/anchor/codec.ts';
import { deriveSeedId } from '../../src/anchor/seed.ts';
import { verifyDuplicityProof } from '../../src/anchor/duplicity.ts';
import { verifyAnchorResponse, type AnchorResponseBody } from '../../src/verify/receipt.ts';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import type { Anchor, DuplicityProofWire } from '../../src/anchor/types.ts';
import type { RunningWitness } from '../../src/witness/node.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { tempDir } from '../helpers/tmp.ts';
import { WITNESS_NAME, WITNESS_ORIGIN, get, post, startTestWitness } from '../helpers/witness.ts';

const alice = edParty(0x09);
const aliceRotated = edParty(0x0a);
const bob = edParty(0x0b);
const carol = edParty(0x0c);
/** Alice's registry entry: either current key may have signed the stored anchor a replay returns. */
const aliceKeys = [alice, aliceRotated].map((p) => ({ curve: 'ed25519' as const, publicKey: p.publicKey }));
const pinned = { publicKey: ed25519PublicKeyBytes(ed25519KeyFromSeed(fill(0x01))), logOrigin: WITNESS_ORIGIN, name: WITNESS_NAME };
const key = (p: typeof alice) => ({ curve: 'ed25519', public_key: encodeHex(p.publicKey) });
const registry = {
  parties: [
    { id: 'did:keri:EAlice', keys: [key(alice), key(aliceRotated)], delegator: 'did:keri:ERoot' },
    { id: 'EBob', keys: [key(bob)] },
    { id: 'ECarol', keys: [key(carol)], limits: { anchors_per_minute: 2 } },
  ],
};
const ALICE = { agent: 'did:keri:EAlice', root: 'did:keri:ERoot' };

let w: RunningWitness;
let tmp: ReturnType<typeof tempDir>;
before(async () => {
  tmp = tempDir();
  w = await startTestWitness(tmp.dir, registry);
});
after(async () => {
  await w.close();
  tmp.cleanup();
});

const now = () => Math.floor(Date.now() / 1000);
const seedOf = (scope: string, agent = 'did:keri:EAlice', root = 'did:keri:ERoot') => deriveSeedId(root, agent, scope);
function anchor(
  p: typeof alice,
  scope: string,
  index: number,
  o: { head?: number; cumulative?: bigint; timestamp?: number; agent?: string; root?: string } = {},
): Anchor {
  return signAnchor(p, {
    seedId: seedOf(scope, o.agent, o.root),
    index,
    head: fill(o.head ?? 1),
    cumulative: o.cumulative ?? BigInt(index) * 10n,
    timestamp: o.timestamp ?? 1700000000 + index,
  });
}
const submit = (a: Anchor, party: Record<string, string>) => post(`${w.url}/v1/anchor`, { anchor: encodeAnchor(a), party });
const code = (r: { status: number; body: unknown }) => `${r.status} ${(r.body as { code?: string } | undefined)?.code ?? ''}`.trim();

async function cosigned(a: Anchor, party: Record<string, string>) {
  const r = await submit(a, party);
  assert.equal(r.status, 200, r.text);
  await verifyAnchorResponse(r.body, pinned, [{ curve: a.sigParty.curve, publicKey: a.sigParty.publicKey }, ...aliceKeys]);
  return r.body as AnchorResponseBody & { replay: boolean };
}

void test('row 1: malformed bodies and non-canonical forms → 400 malformed_body with a JSON pointer', async () => {
  const good = stringifyJson({ anchor: encodeAnchor(anchor(alice, 'R1', 1)), party: { ...ALICE, scope: 'R1' } });
  const cases: [string, string][] = [
    [good.replace('"index":1', '"index":1.0'), '/anchor/index'],
    [good.replace('"index":1', '"index":1e0'), '/anchor/index'],
    [good.replace('"cumulative":10', '"cumulative":"010"'), '/anchor/cumulative'],
    [good.replace('"cumulative":10', '"cumulative":340282366920938463463374607431768211456'), '/anchor/cumulative'],
    [good.replace('"index":1', '"index":9007199254740993'), '/anchor/index'],
    [good.replace('Z"', '.000Z"'), '/anchor/timestamp'],
    [good.replace(':21Z"', ':21+00:00"').replace(/"timestamp":"[^"]*"/, '"timestamp":"2023-11-14T22:13:21+00:00"'), '/anchor/timestamp'],
    [good.replace(/"timestamp":"[^"]*"/, '"timestamp":"2023-02-29T00:00:00Z"'), '/anchor/timestamp'],
    [good.replace('"party":{', '"extra":1,"party":{'), ''],
    [good.replace('"party":{', '"party":{"agent":"x",'), '/party/agent'],
    [good.replace(/"head":"[0-9a-f]+"/, '"head":"zz"'), '/anchor/head'],
    [good.replace('"curve":"ed25519"', '"curve":"p256"'), '/anchor/sig_party/public_key'],
    ['{"anchor":', ''],
  ];
  for (const [body, pointer] of cases) {
    const r = await post(`${w.url}/v1/anchor`, body);
    assert.equal(code(r), '400 malformed_body', body);
    assert.ok((r.body as { detail: string }).detail.includes(pointer), `${(r.body as { detail: string }).detail} should name ${pointer}`);
  }
  // A big cumulative as an integer literal (> 2^53) is accepted and echoed losslessly.
  const big = 2n ** 100n + 7n;
  const a = anchor(alice, 'R1big', 1, { cumulative: big });
  const raw = stringifyJson({ anchor: encodeAnchor(a), party: { ...ALICE, scope: 'R1big' } });
  assert.ok(raw.includes(`"cumulative":${big}`));
  const r = await post(`${w.url}/v1/anchor`, raw);
  assert.equal(r.status, 200, r.text);
  assert.ok(r.text.includes(`"cumulative":${big},`));
});

void test('rows 2–4: unknown party, delegation mismatch, key not current (small-order key included)', async () => {
  assert.equal(code(await submit(anchor(alice, 'R2', 1), { agent: 'did:keri:ENobody' })), '403 unknown_party');
  assert.equal(
    code(await submit(anchor(alice, 'R3', 1), { agent: 'EAlice', root: 'did:keri:EOther', scope: 'R3' })),
    '403 delegation_mismatch',
  );
  assert.equal(code(await submit(anchor(bob, 'R4', 1), { ...ALICE, scope: 'R4' })), '403 key_not_current');
  const a = anchor(alice, 'R4b', 1);
  const smallOrder = { ...a, sigParty: { ...a.sigParty, publicKey: new Uint8Array(32).fill(0).map((_, i) => (i === 0 ? 1 : 0)) } };
  assert.equal(code(await submit(smallOrder, { ...ALICE, scope: 'R4b' })), '403 key_not_current');
});

void test('rows 5–6: bad signature, timestamp too far ahead', async () => {
  const a = anchor(alice, 'R5', 1);
  assert.equal(code(await submit({ ...a, cumulative: a.cumulative + 1n }, { ...ALICE, scope: 'R5' })), '422 bad_signature');
  assert.equal(
    code(await submit(anchor(alice, 'R6', 1, { timestamp: now() + 400 }), { ...ALICE, scope: 'R6' })),
    '422 timestamp_in_future',
  );
  await cosigned(anchor(alice, 'R6', 1, { timestamp: now() + 200 }), { ...ALICE, scope: 'R6' });
});

void test('row 7: seeds must derive from the party; a seed belongs to its creator', async () => {
  assert.equal(code(await submit(anchor(alice, 'R7', 1), { agent: 'did:keri:EAlice' })), '403 seed_not_derived');
  assert.equal(code(await submit(anchor(alice, 'R7', 1), { ...ALICE, scope: 'R7-other' })), '403 seed_not_derived');
  await cosigned(anchor(alice, 'R7', 1), { ...ALICE, scope: 'R7' });
  // Bob signs an anchor for Alice's seed with his own key.
  const bobs = signAnchor(bob, { seedId: seedOf('R7'), index: 2, head: fill(2), cumulative: 20n, timestamp: 1700000002 });
  assert.equal(code(await submit(bobs, { agent: 'did:keri:EBob' })), '403 seed_owned_by_other_party');
});

void test('row 8: party quota → 429 with Retry-After', async () => {
  const carolSeed = (s: string) => ({ agent: 'did:keri:ECarol', root: 'did:keri:ECarol', scope: s });
  const mk = (s: string) =>
    signAnchor(carol, {
      seedId: deriveSeedId('did:keri:ECarol', 'did:keri:ECarol', s),
      index: 1,
      head: fill(1),
      cumulative: 1n,
      timestamp: 1700000000,
    });
  await cosigned(mk('Q1'), carolSeed('Q1'));
  await cosigned(mk('Q2'), carolSeed('Q2'));
  const r = await submit(mk('Q3'), carolSeed('Q3'));
  assert.equal(code(r), '429 party_quota_exceeded');
  const retry = Number(r.headers.get('retry-after'));
  assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
});

void test('rows 9–15: duplicity, index_taken, replay, conflicting replay, non-monotone, growth', async () => {
  const party = { ...ALICE, scope: 'R9' };
  const first = await cosigned(anchor(alice, 'R9', 5, { cumulative: 50n }), party);
  assert.equal(first.replay, false);
  // 15: index gap and equal cumulative / timestamp are fine
  const gap = await cosigned(anchor(alice, 'R9', 100, { cumulative: 50n, timestamp: 1700000005 }), party);
  assert.ok(gap.inclusion.leaf_index > first.inclusion.leaf_index);
  // 12: replay returns the stored cosignature unchanged, nothing logged twice
  const sizeBefore = (await get(`${w.url}/health`)).body as { log: { size: number } };
  const replay = await cosigned(anchor(alice, 'R9', 100, { cumulative: 50n, timestamp: 1700000005 }), party);
  assert.equal(replay.replay, true);
  assert.equal(replay.cosignature.signature, gap.cosignature.signature);
  assert.equal(replay.cosignature.timestamp, gap.cosignature.timestamp);
  assert.equal(replay.inclusion.leaf_index, gap.inclusion.leaf_index);
  assert.equal(((await get(`${w.url}/health`)).body as { log: { size: number } }).log.size, sizeBefore.log.size);
  // 12 with another current key of the same party: same party message → replay
  assert.equal((await cosigned(anchor(aliceRotated, 'R9', 100, { cumulative: 50n, timestamp: 1700000005 }), party)).replay, true);
  // 13: same head, other content
  assert.equal(code(await submit(anchor(alice, 'R9', 100, { cumulative: 51n, timestamp: 1700000005 }), party)), '422 conflicting_replay');
  // 14: lower index / cumulative / timestamp
  assert.equal(code(await submit(anchor(alice, 'R9', 99, { cumulative: 50n }), party)), '422 non_monotone');
  assert.equal(code(await submit(anchor(alice, 'R9', 101, { cumulative: 49n }), party)), '422 non_monotone');
  assert.equal(code(await submit(anchor(alice, 'R9', 101, { cumulative: 60n, timestamp: 1700000004 }), party)), '422 non_monotone');
  // 11: fork signed by another key of the party
  assert.equal(
    code(await submit(anchor(aliceRotated, 'R9', 100, { head: 2, cumulative: 50n, timestamp: 1700000005 }), party)),
    '422 index_taken',
  );
  // 10: fork by the same key → 409 duplicity proof, offline verifiable
  const fork = await submit(anchor(alice, 'R9', 100, { head: 0, cumulative: 50n, timestamp: 1700000005 }), party);
  assert.equal(fork.status, 409);
  assert.match(fork.headers.get('content-type') ?? '', /^application\/json/);
  const proof = fork.body as DuplicityProofWire;
  assert.deepEqual(verifyDuplicityProof(decodeDuplicityProof(proof)), { valid: true });
  assert.equal(proof.anchor_a.head, '00'.repeat(32)); // lower head first
  // 9: the seed is frozen: any later submission answers with the stored proof
  const frozen = await submit(anchor(alice, 'R9', 200, { cumulative: 90n }), party);
  assert.equal(frozen.status, 409);
  assert.deepEqual(frozen.body, proof);
  // Reads
  const seed = encodeHex(seedOf('R9'));
  const latest = await get(`${w.url}/v1/anchor/${seed}`);
  assert.equal(latest.status, 200);
  assert.equal((latest.body as { duplicity: boolean }).duplicity, true);
  await verifyAnchorResponse(latest.body, pinned, aliceKeys);
  assert.equal(latest.headers.get('access-control-allow-origin'), '*');
  assert.deepEqual((await get(`${w.url}/v1/duplicity/${seed}`)).body, proof);
});

void test('reads: 404, 400 malformed_seed, duplicity listing with pagination', async () => {
  assert.equal(code(await get(`${w.url}/v1/anchor/${'00'.repeat(32)}`)), '404 not_found');
  assert.equal(code(await get(`${w.url}/v1/anchor/nothex`)), '400 malformed_seed');
  assert.equal(code(await get(`${w.url}/v1/duplicity/${'00'.repeat(32)}`)), '404 not_found');
  // make three more frozen seeds
  for (const s of ['L1', 'L2', 'L3']) {
    await cosigned(anchor(alice, s, 1), { ...ALICE, scope: s });
    assert.equal((await submit(anchor(alice, s, 1, { head: 9 }), { ...ALICE, scope: s })).status, 409);
  }
  const all = (await get(`${w.url}/v1/duplicity`)).body as { items: DuplicityProofWire[]; next: string | null };
  assert.ok(all.items.length >= 4);
  assert.equal(all.next, null);
  const seeds = all.items.map((p) => p.seed_id);
  assert.deepEqual(seeds, [...seeds].sort());
  const page1 = (await get(`${w.url}/v1/duplicity?limit=2`)).body as { items: DuplicityProofWire[]; next: string };
  assert.equal(page1.items.length, 2);
  assert.equal(page1.next, page1.items[1]!.seed_id);
  const page2 = (await get(`${w.url}/v1/duplicity?limit=2&after=${page1.next}`)).body as { items: DuplicityProofWire[] };
  assert.deepEqual(
    page2.items.map((p) => p.seed_id),
    seeds.slice(2, 4),
  );
  for (const q of ['limit=0', 'limit=101', 'limit=abc', 'after=00'])
    assert.equal(code(await get(`${w.url}/v1/duplicity?${q}`)), '400 malformed_query', q);
});

void test('--allow-underived-seeds: first come owns the seed', async () => {
  const t = tempDir();
  const w2 = await startTestWitness(t.dir, registry, { allowUnderivedSeeds: true });
  try {
    const seedId = new Uint8Array(32).fill(0x77);
    const a = signAnchor(alice, { seedId, index: 1, head: fill(1), cumulative: 1n, timestamp: 1700000000 });
    const r = await post(`${w2.url}/v1/anchor`, { anchor: encodeAnchor(a), party: { agent: 'EAlice' } });
    assert.equal(r.status, 200, r.text);
    const b = signAnchor(bob, { seedId, index: 2, head: fill(1), cumulative: 1n, timestamp: 1700000000 });
    assert.equal(
      code(await post(`${w2.url}/v1/anchor`, { anchor: encodeAnchor(b), party: { agent: 'EBob' } })),
      '403 seed_owned_by_other_party',
    );
  } finally {
    await w2.close();
    t.cleanup();
  }
});

void test('group commit metrics: concurrent submissions are decided in batches whose counts add up', async () => {
  const metric = (text: string, name: string): number => {
    const m = new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} ([0-9.e+-]+)$`, 'm').exec(text);
    assert.ok(m, `${name} missing`);
    return Number(m[1]);
  };
  const before = (await get(`${w.url}/metrics`)).text;
  const n = 24;
  // one timestamp for every anchor: the replay below must be byte-identical to the first submission
  // (re-reading the clock there could cross a second and make it a conflicting replay, 422)
  const timestamp = now() - 5;
  const bobAnchor = (i: number) =>
    signAnchor(bob, {
      seedId: deriveSeedId('did:keri:EBob', 'did:keri:EBob', `G${i}`),
      index: 1,
      head: fill(3),
      cumulative: 1n,
      timestamp,
    });
  const results = await Promise.all(
    Array.from({ length: n }, (_, i) => submit(bobAnchor(i), { agent: 'did:keri:EBob', root: 'did:keri:EBob', scope: `G${i}` })),
  );
  for (const r of results) assert.equal(r.status, 200, r.text);
  // a replay writes nothing: no batch is recorded for it
  const replay = await submit(bobAnchor(0), { agent: 'did:keri:EBob', root: 'did:keri:EBob', scope: 'G0' });
  assert.equal(replay.status, 200, replay.text);
  const after = (await get(`${w.url}/metrics`)).text;
  const delta = (name: string) => metric(after, name) - metric(before, name);
  assert.equal(delta('anchors_cosigned_total'), n);
  assert.equal(delta('anchor_batch_requests_sum'), n);
  const batches = delta('anchor_batch_requests_count');
  assert.ok(batches >= 1 && batches <= n, `${batches} batches`);
  assert.equal(delta('anchor_batch_seconds_count'), batches);
  assert.ok(delta('anchor_batch_seconds_sum') > 0);
  assert.equal(delta('anchor_batch_requests_bucket{le="512"}'), batches);
  // every request was answered: nothing waits in the sequencer
  assert.equal(metric(after, 'anchor_queue_depth'), 0);
});
