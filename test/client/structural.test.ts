// Issue 25 item 18, the synchronous client (SDK, CLI and monitor state): structurally wrong JSON in
// what the client decodes — a finalized bundle's anchor, a party state file, a monitor state file —
// gets the client's typed error (`bundle_invalid`, `state_invalid`), never a TypeError. Before the
// fix `party: null` in a party state, `witnesses: null` or a null witness record in a monitor
// state, and `witness_set.said: null` in a bundle's anchor threw TypeErrors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as client from '../../src/client/index.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { structuralMutations } from '../helpers/structural.ts';

const asJson = (x: unknown): unknown => JSON.parse(JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
const party = edParty(0x61);
const anchor = signAnchor(party, { seedId: fill(0x62), index: 2, head: fill(0x63), cumulative: 5n, timestamp: 1_700_000_200 });
const anchorDoc = asJson(client.encodeAnchor(anchor)) as Record<string, unknown>;
const set = client.makeWitnessSet(1, [{ name: 'w1.example', publicKey: edParty(0x64).publicKey, logOrigin: 'w1.example/log' }]);

/** Every mutation of `doc` is refused with a typed error (ClientError or VerificationError) of `code`, or accepted; never anything else. */
async function onlyTyped(doc: unknown, parse: (d: unknown) => unknown, codes: readonly string[]): Promise<number> {
  let refused = 0;
  for (const m of structuralMutations(doc)) {
    try {
      await parse(m.doc);
    } catch (e) {
      assert.ok(
        e instanceof client.ClientError || e instanceof client.VerificationError,
        `${m.label}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`,
      );
      assert.ok(codes.includes(e.code), `${m.label}: ${e.code}`);
      refused++;
    }
  }
  return refused;
}

void test('client.parseFinalizedBundle: a structurally wrong anchor is bundle_invalid (witness_set.said null)', async () => {
  const bundle = { v: client.FINALIZED_V, anchor: anchorDoc, witness_set: asJson(await client.encodeWitnessSet(set)), receipts: [] };
  assert.deepEqual((await client.parseFinalizedBundle(bundle)).anchor, anchor);
  await assert.rejects(
    client.parseFinalizedBundle({ ...bundle, anchor: { ...anchorDoc, witness_set: { said: null, threshold: 1 } } }),
    (e: unknown) =>
      e instanceof client.VerificationError && e.code === 'bundle_invalid' && /witness_set\/said: must be a string/.test(e.message),
  );
  assert.ok((await onlyTyped(anchorDoc, (d) => client.parseFinalizedBundle({ ...bundle, anchor: d }), ['bundle_invalid'])) > 80);
});

void test('client.parsePartyState: party null and every other structural mutation is state_invalid (or witness_set_invalid)', async () => {
  const key = client.generatePartyKey('ed25519');
  const state = client.initPartyState({ keyFile: 'party.key', key, party: { agent: 'did:keri:EAgent', scope: 's' }, witnessSet: set });
  state.latest = { anchor, receipts: [], final: false };
  const doc = asJson(await client.encodePartyState(state)) as Record<string, unknown>;
  assert.equal((await client.parsePartyState(doc)).party.agent, 'did:keri:EAgent');
  await assert.rejects(client.parsePartyState({ ...doc, party: null }), { code: 'state_invalid' });
  assert.ok((await onlyTyped(doc, (d) => client.parsePartyState(d), ['state_invalid', 'witness_set_invalid'])) > 100);
});

void test('client.parseMonitorState: null records and every other structural mutation are state_invalid', async () => {
  const seed = encodeHex(fill(0x62));
  const observed = {
    anchor: anchorDoc,
    cosignature: { witness_name: 'w1.example', witness_public_key: 'ab', signature: 'cd', timestamp: 't' },
    seen: 1,
  };
  const doc = {
    v: client.MONITOR_STATE_V,
    witnesses: {
      'w1.example': { public_key: 'ab', log_origin: 'w1.example/log', checkpoints: ['note'], anchors: { [seed]: observed }, behind: {} },
    },
    seeds: { [seed]: { observations: [{ ...observed, witness: 'w1.example' }] } },
    peer_checkpoints: [{ peer: 'peer p.example', public_key: 'ab', note: 'note' }],
    alerts: {
      episodes: { k: { id: 'k', first_seen: 1, last_seen: 2 } },
      queue: [{ id: 'k', webhook: 'h', body: 'b', created_ms: 1, next_ms: 2, attempts: 0 }],
    },
  };
  client.parseMonitorState(doc);
  for (const bad of [
    { ...doc, witnesses: null },
    { ...doc, seeds: null },
    { ...doc, witnesses: { 'w1.example': null } },
    { ...doc, seeds: { [seed]: null } },
    { ...doc, peer_checkpoints: [null] },
    { ...doc, alerts: { episodes: { k: null }, queue: [] } },
    { ...doc, alerts: { episodes: {}, queue: [null] } },
  ]) {
    assert.throws(() => client.parseMonitorState(bad), { code: 'state_invalid' });
  }
  assert.ok((await onlyTyped(doc, (d) => client.parseMonitorState(d), ['state_invalid'])) > 50);
});
