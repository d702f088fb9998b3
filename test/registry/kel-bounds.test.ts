// SPEC §3.5 rev 4 "Aggregate bounds" and "Off the event loop" on the live KEL registry
// (src/registry/live.ts, kel-evaluator.ts, kel-worker.ts; issue 25 item 2):
// * a KEL whose parse exhausts the worker's heap (--kel-max-heap) kills the worker: that identifier
//   is `oversize`, the worker is restarted, the reload goes on, the others are evaluated; an agent
//   whose own copy did that is still revoked by its delegator and keeps its last accepted state;
// * --kel-max-identifiers: the registry's parties and their delegator chains first, the others in
//   name order, those over the bound `oversize`;
// * --kel-max-total-bytes: identifiers past the reload's byte budget are `oversize`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_KEL_LIMITS } from '../../src/keri/index.ts';
import { KelPartyRegistry, type KelInvalidEvent } from '../../src/registry/live.ts';
import type { KelTip } from '../../src/store/types.ts';
import { KelBuilder, kelFile, signer } from '../helpers/kel-builder.ts';
import { tempDir } from '../helpers/tmp.ts';

class MemoryTips {
  rows = new Map<string, KelTip>();
  kelTips(): Promise<KelTip[]> {
    return Promise.resolve([...this.rows.values()]);
  }
  raiseKelTips(tips: readonly KelTip[]): Promise<void> {
    for (const t of tips) if ((this.rows.get(t.prefix)?.s ?? -1) < t.s) this.rows.set(t.prefix, t);
    return Promise.resolve();
  }
}

function setup(prefix: string) {
  const { dir, cleanup } = tempDir(prefix);
  const kels = join(dir, 'kels');
  mkdirSync(kels);
  const put = (p: string, text: string): void => {
    writeFileSync(join(kels, `.${p}.tmp`), text);
    renameSync(join(kels, `.${p}.tmp`), join(kels, `${p}.kel.json`));
  };
  const root = KelBuilder.incept({ signers: [signer('b/root/0')], next: [signer('b/root/1')] });
  const agent = KelBuilder.incept({ signers: [signer('b/agent/0')], next: [signer('b/agent/1')], delegator: root.prefix });
  root.interact([agent.sealOf(0)]);
  const multi = KelBuilder.incept({ signers: [signer('b/m/0')], next: [signer('b/m/1')] });
  const registryFile = join(dir, 'registry.json');
  writeFileSync(
    registryFile,
    JSON.stringify({ parties: [{ id: `did:keri:${root.prefix}`, delegates: true }, { id: `did:keri:${multi.prefix}` }] }),
  );
  for (const b of [root, agent, multi]) put(b.prefix, kelFile(b));
  return { dir, kels, cleanup, put, root, agent, multi, registryFile };
}

void test('a KEL that exhausts the worker heap is oversize, the worker restarts, the reload goes on; its agent is still revoked and keeps its last state', async () => {
  const s = setup('aw-kel-oom-');
  const invalid: KelInvalidEvent[] = [];
  const died: string[] = [];
  const reg = await KelPartyRegistry.open({
    registryFile: s.registryFile,
    source: { kind: 'dir', path: s.kels },
    limits: DEFAULT_KEL_LIMITS,
    aggregate: { maxIdentifiers: 10_000, maxTotalBytes: 256 << 20, maxHeapMb: 32 },
    pollSeconds: 0,
    store: new MemoryTips(),
    events: { kelInvalid: (e) => invalid.push(e), workerDied: (p) => died.push(p) },
  });
  try {
    const agentId = `did:keri:${s.agent.prefix}`;
    assert.deepEqual(reg.status().counts, { accepted: 3, pending: 0, invalid: 0 });
    assert.equal(reg.current().parties.get(agentId)?.kel?.revoked, false);
    // The agent's copy becomes an 8 MiB document whose parse needs far more than 32 MiB of heap;
    // the root revokes the agent and M rotates, in the same reload.
    const bomb =
      `{"prefix":"${s.agent.prefix}","events":[` + '{},'.repeat((DEFAULT_KEL_LIMITS.maxBytes - 200) / 3) + '{}],"attachments":[]}';
    s.put(s.agent.prefix, bomb);
    s.root.interact([{ d: s.agent.prefix }]);
    s.put(s.root.prefix, kelFile(s.root));
    s.multi.rotate({ signers: [signer('b/m/1')], next: [signer('b/m/2')] });
    s.put(s.multi.prefix, kelFile(s.multi));
    assert.equal(await reg.reload('test'), true);
    assert.deepEqual(died, [s.agent.prefix]);
    const refusal = invalid.find((e) => e.prefix === s.agent.prefix);
    assert.ok(refusal !== undefined);
    assert.equal(refusal.reason, 'oversize');
    assert.match(String(refusal.detail), /KEL worker/);
    const agent = reg.current().parties.get(agentId);
    assert.equal(agent?.kel?.revoked, true, 'revocation never waits for the agent');
    const multi = reg.current().parties.get(`did:keri:${s.multi.prefix}`)!;
    assert.deepEqual([...multi.keys[0]!.publicKey], [...signer('b/m/1').key.raw]);
    assert.deepEqual(reg.status().counts, { accepted: 2, pending: 0, invalid: 1 });
    // The next reload (the worker restarted) still evaluates everything else.
    assert.equal(await reg.reload('test'), true);
    assert.deepEqual(reg.status().counts, { accepted: 2, pending: 0, invalid: 1 });
  } finally {
    await reg.stop();
    s.cleanup();
  }
});

void test('--kel-max-identifiers: the parties and their delegator chains first, then name order; the rest oversize. --kel-max-total-bytes: past the budget, oversize', async () => {
  const s = setup('aw-kel-bound-');
  // A party delegated by a root that is no registry entry: the chain is read with the parties.
  const upper = KelBuilder.incept({ signers: [signer('b/upper/0')], next: [signer('b/upper/1')] });
  const lower = KelBuilder.incept({ signers: [signer('b/lower/0')], next: [signer('b/lower/1')], delegator: upper.prefix });
  upper.interact([lower.sealOf(0)]);
  s.put(upper.prefix, kelFile(upper));
  s.put(lower.prefix, kelFile(lower));
  const others = Array.from({ length: 6 }, (_, i) => KelBuilder.incept({ signers: [signer(`b/z/${i}`)], next: [signer(`b/z/${i}/1`)] }));
  for (const b of others) s.put(b.prefix, kelFile(b));
  writeFileSync(
    s.registryFile,
    JSON.stringify({
      parties: [
        { id: `did:keri:${s.root.prefix}`, delegates: true },
        { id: `did:keri:${s.multi.prefix}` },
        { id: `did:keri:${lower.prefix}` },
      ],
    }),
  );
  const open = (aggregate: { maxIdentifiers: number; maxTotalBytes: number }, invalid: KelInvalidEvent[]) =>
    KelPartyRegistry.open({
      registryFile: s.registryFile,
      source: { kind: 'dir', path: s.kels },
      limits: DEFAULT_KEL_LIMITS,
      aggregate: { ...aggregate, maxHeapMb: 256 },
      pollSeconds: 0,
      store: new MemoryTips(),
      events: { kelInvalid: (e) => invalid.push(e) },
    });
  try {
    const invalid: KelInvalidEvent[] = [];
    let reg = await open({ maxIdentifiers: 6, maxTotalBytes: 256 << 20 }, invalid);
    try {
      // root, multi, lower, upper (lower's delegator), then two more in name order: agent and others.
      const rest = [s.agent.prefix, ...others.map((b) => b.prefix)].sort();
      const over = rest.slice(2);
      assert.deepEqual(invalid.map((e) => e.prefix).sort(), over.sort());
      for (const e of invalid) {
        assert.equal(e.reason, 'oversize');
        assert.match(e.detail ?? '', /--kel-max-identifiers/);
      }
      assert.ok(reg.current().parties.has(`did:keri:${lower.prefix}`), 'a party whose delegator chain is read first');
      assert.ok(reg.current().parties.has(`did:keri:${s.multi.prefix}`));
    } finally {
      await reg.stop();
    }
    invalid.length = 0;
    const sizes = [s.root, s.multi, lower, upper].map((b) => kelFile(b).length);
    reg = await open({ maxIdentifiers: 10_000, maxTotalBytes: sizes.reduce((a, b) => a + b, 0) + 10 }, invalid);
    try {
      assert.equal(invalid.length, 7);
      for (const e of invalid) assert.match(e.detail ?? '', /--kel-max-total-bytes/);
      assert.ok(reg.current().parties.has(`did:keri:${lower.prefix}`));
      assert.ok(reg.current().parties.has(`did:keri:${s.multi.prefix}`));
    } finally {
      await reg.stop();
    }
  } finally {
    s.cleanup();
  }
});
