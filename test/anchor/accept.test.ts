// The acceptance rules of SPEC §3.3 as one pure function (src/anchor/accept.ts): every row, and
// that the first failing check answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { accept } from '../../src/anchor/accept.ts';
import type { Decision, SeedState } from '../../src/anchor/accept.ts';
import { verifyPartySignature } from '../../src/anchor/party-signature.ts';
import type { PartyUsage, QuotaDefaults } from '../../src/anchor/quota-window.ts';
import { parseRegistry } from '../../src/anchor/registry.ts';
import { deriveSeedId } from '../../src/anchor/seed.ts';
import { verifyDuplicityProof, makeDuplicityProof, duplicityEntry } from '../../src/anchor/duplicity.ts';
import { encodeDuplicityProof, decodeDuplicityProof } from '../../src/anchor/codec.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import type { Anchor, DuplicityProofWire, PartyClaim } from '../../src/anchor/types.ts';

const NOW = 1800000000;
const alice = edParty(0x09);
const aliceNew = edParty(0x0a);
const bob = edParty(0x0b);
const registry = parseRegistry({
  parties: [
    {
      id: 'did:keri:EAgent',
      keys: [
        { curve: 'ed25519', public_key: encodeHex(alice.publicKey) },
        { curve: 'ed25519', public_key: encodeHex(aliceNew.publicKey) },
      ],
      delegator: 'did:keri:ERoot',
    },
    { id: 'EBob', keys: [{ curve: 'ed25519', public_key: encodeHex(bob.publicKey) }] },
  ],
});
const claim: PartyClaim = { agent: 'did:keri:EAgent', root: 'did:keri:ERoot', scope: 'ESeal' };
const seedId = deriveSeedId(claim.root!, claim.agent, claim.scope!);

const mk = (
  over: Partial<{ index: number; head: number; cumulative: bigint; timestamp: number; key: typeof alice; said: string }> = {},
): Anchor =>
  signAnchor(over.key ?? alice, {
    seedId,
    index: over.index ?? 5,
    head: fill(over.head ?? 1),
    cumulative: over.cumulative ?? 100n,
    timestamp: over.timestamp ?? 1700000005,
    witnessSet: { said: over.said ?? 'EWitSet', threshold: 2 },
  });

const ROOMY: QuotaDefaults = { anchorsPerMinute: 1000, newSeedsPerDay: 1000 };
const noUsage = (): PartyUsage => ({ anchorTimes: [], newSeedTimes: [] });

interface Options {
  allowUnderived?: boolean;
  usage?: PartyUsage;
  quota?: QuotaDefaults;
  /** Check 5's verdict; by default the signature is verified here. */
  signatureValid?: boolean;
}

function decide(a: Anchor, seed: SeedState | undefined, c: PartyClaim = claim, opts: Options = {}): Decision {
  const submission = { anchor: a, claim: c, signatureValid: opts.signatureValid ?? verifyPartySignature(a) };
  return accept(submission, registry, seed, opts.usage ?? noUsage(), NOW, {
    allowUnderivedSeeds: opts.allowUnderived ?? false,
    quota: opts.quota ?? ROOMY,
  });
}

const code = (d: Decision): string => (d.outcome === 'reject' ? `${d.status} ${d.code}` : d.outcome);
const state = (latest: Anchor, extra: Partial<SeedState> = {}): SeedState => ({ latest, owner: 'did:keri:EAgent', ...extra });

void test('row 2: unknown party', () => {
  assert.equal(code(decide(mk(), undefined, { agent: 'did:keri:ENobody' })), '403 unknown_party');
});

void test('row 3: root given and not the delegator', () => {
  assert.equal(code(decide(mk(), undefined, { ...claim, root: 'did:keri:EOther' })), '403 delegation_mismatch');
  // root equal to the agent itself is not a delegation claim
  assert.notEqual(code(decide(mk(), undefined, { ...claim, root: claim.agent })), '403 delegation_mismatch');
});

void test('row 4: key not one of the agent’s current keys', () => {
  assert.equal(code(decide(mk({ key: bob }), undefined)), '403 key_not_current');
});

void test('row 5: bad party signature', () => {
  const a = mk();
  assert.equal(code(decide({ ...a, cumulative: 101n }, undefined)), '422 bad_signature');
});

void test('row 6: timestamp more than 300 s ahead', () => {
  assert.equal(code(decide(mk({ timestamp: NOW + 301 }), undefined)), '422 timestamp_in_future');
  assert.equal(code(decide(mk({ timestamp: NOW + 300 }), undefined)), 'cosign');
});

void test('row 7: seed ownership and derivation', () => {
  // derived new seed → cosign
  assert.deepEqual(decide(mk(), undefined), { outcome: 'cosign', newSeed: true });
  // new seed without root/scope, or not derived from them
  assert.equal(code(decide(mk(), undefined, { agent: claim.agent })), '403 seed_not_derived');
  assert.equal(code(decide(mk(), undefined, { ...claim, scope: 'EOtherScope' })), '403 seed_not_derived');
  // first-come with --allow-underived-seeds
  assert.equal(code(decide(mk(), undefined, { agent: claim.agent }, { allowUnderived: true })), 'cosign');
  // known seed owned by another agent
  const bobAnchor = signAnchor(bob, { seedId, index: 6, head: fill(1), cumulative: 100n, timestamp: 1700000005 });
  assert.equal(code(decide(bobAnchor, state(mk()), { agent: 'did:keri:EBob' })), '403 seed_owned_by_other_party');
});

void test('row 8: party quota, with Retry-After', () => {
  const perMinute = { anchorsPerMinute: 1, newSeedsPerDay: 1000 };
  const d = decide(mk({ index: 6 }), state(mk()), claim, { quota: perMinute, usage: { anchorTimes: [NOW - 43], newSeedTimes: [] } });
  assert.equal(code(d), '429 party_quota_exceeded');
  assert.equal(d.outcome === 'reject' && d.retryAfter, 17);
  // outside the minute it no longer counts
  assert.equal(
    code(decide(mk({ index: 6 }), state(mk()), claim, { quota: perMinute, usage: { anchorTimes: [NOW - 60], newSeedTimes: [] } })),
    'cosign',
  );
  // the day's new seeds count only for a new seed
  const perDay = { anchorsPerMinute: 1000, newSeedsPerDay: 1 };
  const seeds = { anchorTimes: [], newSeedTimes: [NOW - 3600] };
  assert.equal(code(decide(mk(), undefined, claim, { quota: perDay, usage: seeds })), '429 party_quota_exceeded');
  assert.equal(code(decide(mk({ index: 6 }), state(mk()), claim, { quota: perDay, usage: seeds })), 'cosign');
});

void test('the first failing check answers, whatever fails after it', () => {
  const bad = { ...mk({ timestamp: NOW + 400 }), cumulative: 101n }; // fails 5, 6
  assert.equal(code(decide(bad, undefined, { agent: 'did:keri:ENobody' })), '403 unknown_party'); // 2 before 5
  assert.equal(code(decide(mk({ key: bob, timestamp: NOW + 400 }), undefined)), '403 key_not_current'); // 4 before 6
  assert.equal(code(decide(bad, state(mk()), claim)), '422 bad_signature'); // 5 before 6 and 14
  const future = mk({ index: 4, timestamp: NOW + 400 });
  assert.equal(code(decide(future, state(mk()), claim, { signatureValid: true })), '422 timestamp_in_future'); // 6 before 14
  // a verdict of false refuses even a signature that verifies: the rules read the verdict, not the bytes
  assert.equal(code(decide(mk(), undefined, claim, { signatureValid: false })), '422 bad_signature');
  // over quota (8) answers before frozen (9) and before the monotone checks (14)
  const full = { quota: { anchorsPerMinute: 0, newSeedsPerDay: 0 } };
  const proof = makeDuplicityProof(mk(), mk({ head: 2 }));
  assert.equal(code(decide(mk({ index: 4 }), state(mk(), { duplicity: proof }), claim, full)), '429 party_quota_exceeded');
  // ownership (7) answers before quota (8)
  assert.equal(code(decide(mk(), undefined, { agent: claim.agent }, full)), '403 seed_not_derived');
});

void test('the rules are pure: the same inputs give the same decision and nothing is modified', () => {
  const usage = { anchorTimes: [NOW - 5], newSeedTimes: [NOW - 5] };
  const prior = state(mk());
  const before = JSON.stringify({ usage, prior }, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
  const a = decide(mk({ index: 6 }), prior, claim, { usage });
  const b = decide(mk({ index: 6 }), prior, claim, { usage });
  assert.deepEqual(a, b);
  assert.equal(
    JSON.stringify({ usage, prior }, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)),
    before,
  );
});

void test('row 9: frozen seed answers with its stored proof', () => {
  const proof = makeDuplicityProof(mk(), mk({ head: 2 }));
  const d = decide(mk({ index: 9 }), state(mk(), { duplicity: proof }));
  assert.equal(d.outcome, 'frozen');
});

void test('row 10: fork by the same key → duplicity proof, offline verifiable', () => {
  const prior = mk({ head: 9 });
  const d = decide(mk({ head: 3 }), state(prior));
  assert.equal(d.outcome, 'duplicity');
  assert.deepEqual(verifyDuplicityProof(d.proof), { valid: true });
  assert.equal(d.proof.anchorA.head[0], 3); // lower head first, whatever the arrival order
  // JSON round trip keeps it verifiable; tampering breaks it
  const back = decodeDuplicityProof(
    JSON.parse(
      JSON.stringify(encodeDuplicityProof(d.proof), (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v)),
    ) as DuplicityProofWire,
  );
  assert.deepEqual(verifyDuplicityProof(back), { valid: true });
  const tampered = { ...back, anchorB: { ...back.anchorB, cumulative: back.anchorB.cumulative + 1n } };
  assert.equal(verifyDuplicityProof(tampered).valid, false);
  const swapped = { ...back, anchorA: back.anchorB, anchorB: back.anchorA };
  assert.equal(verifyDuplicityProof(swapped).valid, false);
  // the log entry names its type and carries cumulative as a string
  const entry = JSON.parse(Buffer.from(duplicityEntry(d.proof)).toString()) as { v: string; anchor_a: { cumulative: unknown } };
  assert.equal(entry.v, 'auths-anchor/duplicity/v1');
  assert.equal(entry.anchor_a.cumulative, '100');
});

void test('row 11: fork by a different key of the same party → index_taken', () => {
  assert.equal(code(decide(mk({ head: 3, key: aliceNew }), state(mk({ head: 9 })))), '422 index_taken');
});

void test('row 12: identical party message → replay (even under another current key)', () => {
  const prior = mk();
  assert.equal(code(decide(mk(), state(prior))), 'replay');
  assert.equal(code(decide(mk({ key: aliceNew }), state(prior))), 'replay');
});

void test('row 13: same index and head, other content → conflicting_replay', () => {
  const prior = mk();
  assert.equal(code(decide(mk({ cumulative: 101n }), state(prior))), '422 conflicting_replay');
  assert.equal(code(decide(mk({ timestamp: 1700000009 }), state(prior))), '422 conflicting_replay');
  assert.equal(code(decide(mk({ said: 'EOther' }), state(prior))), '422 conflicting_replay');
});

void test('row 14: index, cumulative or timestamp lower → non_monotone', () => {
  const prior = mk();
  assert.equal(code(decide(mk({ index: 4 }), state(prior))), '422 non_monotone');
  assert.equal(code(decide(mk({ index: 6, cumulative: 99n }), state(prior))), '422 non_monotone');
  assert.equal(code(decide(mk({ index: 6, timestamp: 1700000004 }), state(prior))), '422 non_monotone');
});

void test('row 15: growth, equal cumulative/timestamp and index gaps are co-signed', () => {
  const prior = mk();
  assert.deepEqual(decide(mk({ index: 6 }), state(prior)), { outcome: 'cosign', newSeed: false });
  assert.deepEqual(decide(mk({ index: 1000, cumulative: 2n ** 127n, timestamp: NOW }), state(prior)), {
    outcome: 'cosign',
    newSeed: false,
  });
});

void test('registry validation', () => {
  const k = (p: typeof alice) => ({ curve: 'ed25519', public_key: encodeHex(p.publicKey) });
  const bad = [
    null,
    { parties: {} },
    { parties: [{ id: 'EA', keys: [] }] },
    {
      parties: [
        { id: 'EA', keys: [k(alice)] },
        { id: 'did:keri:EA', keys: [k(bob)] },
      ],
    }, // same id after normalisation
    {
      parties: [
        { id: 'EA', keys: [k(alice)] },
        { id: 'EB', keys: [k(alice)] },
      ],
    }, // key in two parties
    { parties: [{ id: 'EA', keys: [{ curve: 'ed25519', public_key: '01' + '00'.repeat(31) }] }] }, // small order
    { parties: [{ id: 'EA', keys: [{ curve: 'ed25519', public_key: 'ab' }] }] },
    { parties: [{ id: 'EA', keys: [{ curve: 'p256', public_key: '02' + 'ff'.repeat(32) }] }] }, // x ≥ p
    { parties: [{ id: 'EA', keys: [k(alice)], extra: 1 }] },
    { parties: [{ id: 'EA', keys: [k(alice)], limits: { anchors_per_minute: -1 } }] },
    { parties: [{ id: 'has space', keys: [k(alice)] }] },
  ];
  for (const doc of bad) assert.throws(() => parseRegistry(doc), { code: 'invalid_registry' }, JSON.stringify(doc));
  const r = parseRegistry({ parties: [{ id: 'EA', keys: [k(alice)], limits: { anchors_per_minute: 5, new_seeds_per_day: 1 } }] });
  assert.deepEqual(r.parties.get('did:keri:EA')?.limits, { anchorsPerMinute: 5, newSeedsPerDay: 1 });
});
