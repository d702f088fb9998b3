// SPEC §3.6.10 item 10 (`ledger:`), at the registry level: a controller witnessed by a role-kel
// node becomes a party without any KEL file — the registry file names it — with the key of its
// accepted KEL in the ledger; after its rotation is witnessed, the next reload puts the rotated
// key in force. A held prefix the registry file does not name is never read (no party).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_KEL_LIMITS } from '../../src/keri/index.ts';
import { KelPartyRegistry } from '../../src/registry/live.ts';
import { tempDir } from '../helpers/tmp.ts';
import { Controller, send, startKelNode } from './harness.ts';

/**
 * A role-kel node in a temporary directory, two controllers (tags `partyTag`, `strangerTag`) it
 * witnessed, and a registry file that names only the first as a party.
 */
async function witnessedPair(t: { after: (fn: () => Promise<void>) => void }, partyTag: number, strangerTag: number) {
  const tmp = tempDir();
  const node = await startKelNode(join(tmp.dir, 'n'), { kelLimits: { rateLimit: null } });
  t.after(async () => {
    await node.close();
    tmp.cleanup();
  });
  const w = node.kel!.identity.prefix;
  const party = await Controller.create(partyTag);
  const stranger = await Controller.create(strangerTag);
  for (const c of [party, stranger]) {
    const icp = c.incept([w]);
    assert.equal((await send(node.url, '/receipts', icp.raw, c.sign(icp))).status, 200);
  }
  const registryFile = join(tmp.dir, 'registry.json');
  writeFileSync(registryFile, JSON.stringify({ parties: [{ id: `did:keri:${party.pre}` }] }));
  return { node, party, stranger, registryFile };
}

void test('ledger: a controller witnessed here is a party without a KEL file; its rotation takes effect at the next reload', async (t) => {
  const { node, party, registryFile } = await witnessedPair(t, 121, 122);
  const reg = await KelPartyRegistry.open({
    registryFile,
    source: [{ kind: 'ledger', path: '' }],
    limits: DEFAULT_KEL_LIMITS,
    pollSeconds: 0,
    store: node.store.anchors,
    ledger: node.store.kelLedger,
  });
  try {
    const keyOf = (): string | undefined => {
      const p = reg.current().parties.get(`did:keri:${party.pre}`);
      return p === undefined ? undefined : Buffer.from(p.keys[0]!.publicKey).toString('base64url');
    };
    const raw = (qb64: string): string =>
      Buffer.from(`A${qb64.slice(1)}`, 'base64url')
        .subarray(1)
        .toString('base64url');
    assert.equal(keyOf(), raw(party.signer.verfer.qb64), 'the inception key is in force');
    assert.equal(reg.current().parties.size, 1, 'the stranger held here is no party');
    assert.deepEqual(reg.status().counts, { accepted: 1, pending: 0, invalid: 0 }, 'only the named prefix is read');

    const before = raw(party.signer.verfer.qb64);
    const rot = party.rotate();
    assert.equal((await send(node.url, '/receipts', rot.raw, party.sign(rot))).status, 200);
    assert.equal(keyOf(), before, 'not before a reload');
    assert.equal(await reg.reload('test'), true);
    assert.equal(keyOf(), raw(party.signer.verfer.qb64), 'the rotated key is in force after the reload');
  } finally {
    await reg.stop();
  }
});

void test('ledger: commits of a watched prefix reload once per burst (debounced 1 s); commits of other held prefixes never reload', async (t) => {
  const { node, party, stranger, registryFile } = await witnessedPair(t, 123, 124);
  const reloads: string[] = [];
  const reg = await KelPartyRegistry.open({
    registryFile,
    source: [{ kind: 'ledger', path: '' }],
    limits: DEFAULT_KEL_LIMITS,
    pollSeconds: 0,
    store: node.store.anchors,
    ledger: node.store.kelLedger,
    events: { loaded: (why) => reloads.push(why) },
  });
  const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  try {
    reloads.length = 0;
    for (let i = 0; i < 20; i++) reg.ledgerCommitted(stranger.pre);
    await settle(2500);
    assert.deepEqual(reloads, [], 'a held prefix the registry does not read never reloads it');
    for (let i = 0; i < 20; i++) {
      reg.ledgerCommitted(party.pre);
      await settle(10);
    }
    await settle(2500);
    assert.deepEqual(reloads, ['commit'], 'a burst of 20 commits is one reload');
  } finally {
    await reg.stop();
  }
});
