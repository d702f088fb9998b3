// Who is a party with a KEL source (SPEC §3.5 "Who is a party", "Anchor checks"): the registry
// file read in KEL mode, its combination with KEL evaluations and the store's tips
// (src/anchor/kel-registry.ts), and checks 2–4 of the acceptance rules on that snapshot.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { accept, REGISTRY_BEHIND_RETRY_SECS, type Decision } from '../../src/anchor/accept.ts';
import { registryFromKels, shadowedParties, type KelStateView, type KelView } from '../../src/anchor/kel-registry.ts';
import { parseRegistryFile } from '../../src/anchor/registry.ts';
import type { Registry } from '../../src/anchor/registry.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { ProtocolError } from '../../src/errors.ts';
import { edParty, fill, signAnchor, type TestParty } from '../helpers/anchors.ts';
import type { PartyClaim } from '../../src/anchor/types.ts';

const NOW = 1800000000;
const ROOT = 'E' + 'R'.repeat(43);
const AGENT = 'E' + 'A'.repeat(43);
const OTHER = 'E' + 'O'.repeat(43);
const STATIC = 'E' + 'S'.repeat(43);
const rootKey = edParty(0x21);
const agentKey = edParty(0x22);
const agentOld = edParty(0x23);
const otherKey = edParty(0x24);
const staticKey = edParty(0x25);

function state(p: TestParty, over: Partial<KelStateView> = {}): KelStateView {
  return {
    s: 1,
    d: 'E' + 'd'.repeat(43),
    keys: [{ curve: 'ed25519', raw: p.publicKey }],
    delegator: null,
    revoked: false,
    abandoned: false,
    inception: 'icp',
    ...over,
  };
}
const accepted = (st: KelStateView): KelView => ({ status: 'accepted', state: st, reason: null, detail: null });

const file = parseRegistryFile({
  parties: [
    { id: `did:keri:${ROOT}`, delegates: true, limits: { anchors_per_minute: 7 } },
    { id: STATIC, keys: [{ curve: 'ed25519', public_key: encodeHex(staticKey.publicKey) }], delegator: `did:keri:${ROOT}` },
  ],
});

const views = (over: Record<string, KelView> = {}): Map<string, KelView> =>
  new Map(
    Object.entries({
      [ROOT]: accepted(state(rootKey)),
      [AGENT]: accepted(state(agentKey, { inception: 'dip', delegator: ROOT })),
      [OTHER]: accepted(state(otherKey)),
      ...over,
    }),
  );

function decide(reg: Registry, signer: TestParty, claim: PartyClaim): Decision {
  const anchor = signAnchor(signer, { seedId: fill(7), index: 1, head: fill(1), cumulative: 1n, timestamp: NOW - 10 });
  return accept({ anchor, claim, signatureValid: true }, reg, undefined, { anchorTimes: [], newSeedTimes: [] }, NOW, {
    allowUnderivedSeeds: true,
    quota: { anchorsPerMinute: 60, newSeedsPerDay: 100 },
  });
}
const code = (d: Decision): string => (d.outcome === 'reject' ? d.code : d.outcome);

void test('registry file with KELs: keys optional, delegates only without keys, delegator only with keys, unknown members refused', () => {
  assert.equal(file.entries.length, 2);
  assert.equal(file.entries[0]!.delegates, true);
  assert.equal(file.entries[0]!.keys, undefined);
  const bad = [
    { parties: [{ id: ROOT, delegates: true, keys: [{ curve: 'ed25519', public_key: encodeHex(rootKey.publicKey) }] }] },
    { parties: [{ id: ROOT, delegator: AGENT }] },
    { parties: [{ id: ROOT, delegates: 'yes' }] },
    { parties: [{ id: ROOT, extra: 1 }] },
    { parties: [{ id: ROOT }, { id: `did:keri:${ROOT}` }] },
  ];
  for (const doc of bad)
    assert.throws(
      () => parseRegistryFile(doc),
      (e: unknown) => e instanceof ProtocolError && e.code === 'invalid_registry',
    );
});

void test('who is a party: KEL keys for entries without keys, static keys kept, delegated agents of a "delegates" root with its limits, other KELs are no party', () => {
  const reg = registryFromKels(file, views(), new Map());
  assert.deepEqual([...reg.parties.keys()].sort(), [`did:keri:${AGENT}`, `did:keri:${ROOT}`, `did:keri:${STATIC}`].sort());
  const agent = reg.parties.get(`did:keri:${AGENT}`)!;
  assert.equal(agent.delegator, `did:keri:${ROOT}`);
  assert.deepEqual(agent.limits, { anchorsPerMinute: 7 });
  assert.equal(encodeHex(agent.keys[0]!.publicKey), encodeHex(agentKey.publicKey));
  assert.equal(code(decide(reg, agentKey, { agent: `did:keri:${AGENT}`, root: `did:keri:${ROOT}` })), 'cosign');
  assert.equal(code(decide(reg, staticKey, { agent: `did:keri:${STATIC}`, root: `did:keri:${ROOT}` })), 'cosign');
  const other = decide(reg, otherKey, { agent: `did:keri:${OTHER}` });
  assert.equal(code(other), 'unknown_party');
});

void test('an entry with keys that also has a KEL keeps its static keys: the KEL is shadowed, never a load error (SPEC §3.5 rev 4)', () => {
  // Before rev 4 this threw registry_conflict: one `{}` file named after a static-keys party
  // vetoed every reload. Now the KEL (accepted or not) never changes that party's keys.
  for (const kel of [accepted(state(otherKey)), { status: 'invalid', state: null, reason: 'malformed', detail: '{}' } as KelView]) {
    const kels = views({ [STATIC]: kel });
    const reg = registryFromKels(file, kels, new Map());
    assert.equal(encodeHex(reg.parties.get(`did:keri:${STATIC}`)!.keys[0]!.publicKey), encodeHex(staticKey.publicKey));
    assert.equal(reg.parties.get(`did:keri:${STATIC}`)!.kel, undefined);
    assert.equal(code(decide(reg, staticKey, { agent: `did:keri:${STATIC}` })), 'cosign');
    assert.equal(code(decide(reg, otherKey, { agent: `did:keri:${STATIC}` })), 'key_not_current');
    assert.deepEqual(shadowedParties(file, kels), [`did:keri:${STATIC}`]);
  }
  assert.deepEqual(shadowedParties(file, views()), []);
});

void test('check 2: absent, pending and rejected KELs are unknown_party with the sub-condition in detail; a store tip newer than the state is 503 registry_behind', () => {
  const claim = { agent: `did:keri:${AGENT}`, root: `did:keri:${ROOT}` };
  const pending: KelView = { status: 'pending', state: null, reason: null, detail: null, delegatedBy: ROOT };
  let d = decide(registryFromKels(file, views({ [AGENT]: pending }), new Map()), agentKey, claim);
  assert.equal(code(d), 'unknown_party');
  assert.match(d.outcome === 'reject' ? d.detail : '', /not yet anchored/);
  const rejected: KelView = { status: 'invalid', state: null, reason: 'signature_invalid', detail: 'x', delegatedBy: ROOT };
  d = decide(registryFromKels(file, views({ [AGENT]: rejected }), new Map()), agentKey, claim);
  assert.equal(code(d), 'unknown_party');
  assert.match(d.outcome === 'reject' ? d.detail : '', /signature_invalid/);
  const rootOnly = new Map([[ROOT, accepted(state(rootKey))]]);
  d = decide(registryFromKels(parseRegistryFile({ parties: [{ id: AGENT }] }), rootOnly, new Map()), agentKey, claim);
  assert.equal(code(d), 'unknown_party');
  assert.match(d.outcome === 'reject' ? d.detail : '', /no KEL/);
  // The store's tip: newer s, or the same s with another SAID, is "behind"; the same tip is not.
  for (const tip of [
    { s: 2, d: 'E' + 'd'.repeat(43) },
    { s: 1, d: 'E' + 'x'.repeat(43) },
  ]) {
    d = decide(registryFromKels(file, views(), new Map([[AGENT, tip]])), agentKey, claim);
    assert.equal(code(d), 'registry_behind');
    assert.equal(d.outcome === 'reject' ? d.status : 0, 503);
    assert.equal(d.outcome === 'reject' ? d.retryAfter : 0, REGISTRY_BEHIND_RETRY_SECS);
  }
  d = decide(registryFromKels(file, views(), new Map([[AGENT, { s: 1, d: 'E' + 'd'.repeat(43) }]])), agentKey, claim);
  assert.equal(code(d), 'cosign');
  // A rolled-back copy with no state in force while the store has a tip: behind, not unknown.
  d = decide(
    registryFromKels(file, views({ [AGENT]: { ...rejected, reason: 'rollback' } }), new Map([[AGENT, { s: 1, d: 'E' + 'd'.repeat(43) }]])),
    agentKey,
    claim,
  );
  assert.equal(code(d), 'registry_behind');
});

void test('check 3: revoked first (with or without party.root), then delegation_mismatch naming the sub-condition', () => {
  const revoked = views({ [AGENT]: accepted(state(agentKey, { inception: 'dip', delegator: ROOT, revoked: true })) });
  const reg = registryFromKels(file, revoked, new Map());
  assert.equal(code(decide(reg, agentKey, { agent: `did:keri:${AGENT}` })), 'delegation_revoked');
  assert.equal(code(decide(reg, agentOld, { agent: `did:keri:${AGENT}`, root: `did:keri:${OTHER}` })), 'delegation_revoked');
  const ok = registryFromKels(file, views(), new Map());
  const d = decide(ok, agentKey, { agent: `did:keri:${AGENT}`, root: `did:keri:${OTHER}` });
  assert.equal(code(d), 'delegation_mismatch');
  assert.match(d.outcome === 'reject' ? d.detail : '', /dip .* names/);
  const rootEntry = registryFromKels(file, views(), new Map());
  const d2 = decide(rootEntry, rootKey, { agent: `did:keri:${ROOT}`, root: `did:keri:${OTHER}` });
  assert.match(d2.outcome === 'reject' ? d2.detail : '', /begins with icp/);
  // The agent itself as root is allowed.
  assert.equal(code(decide(ok, agentKey, { agent: `did:keri:${AGENT}`, root: `did:keri:${AGENT}` })), 'cosign');
});

void test('check 4: any one current key; an old key or an abandoned KEL is key_not_current', () => {
  const two = views({
    [AGENT]: accepted({
      ...state(agentKey, { inception: 'dip', delegator: ROOT }),
      keys: [
        { curve: 'ed25519', raw: otherKey.publicKey },
        { curve: 'ed25519', raw: agentKey.publicKey },
      ],
    }),
  });
  const claim = { agent: `did:keri:${AGENT}` };
  assert.equal(code(decide(registryFromKels(file, two, new Map()), agentKey, claim)), 'cosign');
  assert.equal(code(decide(registryFromKels(file, two, new Map()), agentOld, claim)), 'key_not_current');
  const abandoned = views({ [AGENT]: accepted(state(agentKey, { inception: 'dip', delegator: ROOT, abandoned: true })) });
  const d = decide(registryFromKels(file, abandoned, new Map()), agentKey, claim);
  assert.equal(code(d), 'key_not_current');
  assert.match(d.outcome === 'reject' ? d.detail : '', /abandoned/);
});

void test('a "delegates" root without an accepted KEL admits nobody; a pending delegated agent is unknown with the reason', () => {
  const noRoot = views({ [ROOT]: { status: 'invalid', state: null, reason: 'said_mismatch', detail: null } });
  const reg = registryFromKels(file, noRoot, new Map());
  assert.equal(reg.parties.has(`did:keri:${AGENT}`), false);
  const pending = views({ [AGENT]: { status: 'pending', state: null, reason: null, detail: null, delegatedBy: ROOT } });
  const d = decide(registryFromKels(file, pending, new Map()), agentKey, { agent: `did:keri:${AGENT}` });
  assert.match(d.outcome === 'reject' ? d.detail : '', /not yet anchored/);
});
