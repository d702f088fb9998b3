// The live KEL registry (src/registry/live.ts, SPEC §3.5 "Caching, reload, rollback"): kel_tips
// raised before a state is used and read at every reload; a store that cannot be read or written
// fails the reload and keeps every state; a registry-file reload that would conflict with a KEL
// keeps its static keys (the KEL is shadowed); a SIGHUP with a broken file is one failed reload; a refusal is reported once, not at every reload.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeHex } from '../../src/encoding/hex.ts';
import { DEFAULT_KEL_LIMITS } from '../../src/keri/index.ts';
import { KelPartyRegistry, type KelInvalidEvent } from '../../src/registry/live.ts';
import type { KelTip } from '../../src/store/types.ts';
import { edParty } from '../helpers/anchors.ts';
import { AGENT_EVENTS, AGENT_PREFIX, kelDocument, ROOT_EVENTS, ROOT_PREFIX } from '../helpers/kel-vectors.ts';
import { tempDir } from '../helpers/tmp.ts';

class MemoryTips {
  rows = new Map<string, KelTip>();
  failing = false;
  kelTips(): Promise<KelTip[]> {
    return this.failing ? Promise.reject(new Error('store down')) : Promise.resolve([...this.rows.values()]);
  }
  raiseKelTips(tips: readonly KelTip[]): Promise<void> {
    if (this.failing) return Promise.reject(new Error('store down'));
    for (const t of tips) if ((this.rows.get(t.prefix)?.s ?? -1) < t.s) this.rows.set(t.prefix, t);
    return Promise.resolve();
  }
}

void test('tips raised before use, store failures keep every state, static keys shadow a KEL (reported once), a SIGHUP with a broken file reports one failure, refusals reported once', async () => {
  const { dir, cleanup } = tempDir('aw-kel-live-');
  try {
    const kels = join(dir, 'kels');
    mkdirSync(kels);
    const put = (prefix: string, doc: string) => {
      writeFileSync(join(kels, `${prefix}.kel.json`), doc);
    };
    put(ROOT_PREFIX, kelDocument(ROOT_PREFIX, ROOT_EVENTS, 2));
    put(AGENT_PREFIX, kelDocument(AGENT_PREFIX, AGENT_EVENTS, 2));
    const registryFile = join(dir, 'registry.json');
    writeFileSync(registryFile, JSON.stringify({ parties: [{ id: ROOT_PREFIX, delegates: true }] }));
    const store = new MemoryTips();
    const invalid: KelInvalidEvent[] = [];
    const failed: string[] = [];
    const loaded: string[] = [];
    const shadowed: string[][] = [];
    const reg = await KelPartyRegistry.open({
      registryFile,
      source: { kind: 'dir', path: kels },
      limits: DEFAULT_KEL_LIMITS,
      pollSeconds: 0,
      store,
      events: {
        kelInvalid: (e) => invalid.push(e),
        failed: (why, reason) => failed.push(`${why}: ${reason}`),
        loaded: (why) => loaded.push(why),
        shadowed: (ids) => shadowed.push(ids),
      },
    });
    try {
      // The drt is pending (ROOT has not anchored it): the agent's state in force is its dip.
      assert.deepEqual(reg.status().counts, { accepted: 1, pending: 1, invalid: 0 });
      assert.deepEqual(
        [...store.rows.values()].map((t) => [t.prefix, t.s]).sort(),
        [
          [AGENT_PREFIX, 0],
          [ROOT_PREFIX, 1],
        ].sort(),
      );
      const agent = `did:keri:${AGENT_PREFIX}`;
      assert.equal(reg.current().parties.get(agent)?.delegator, `did:keri:${ROOT_PREFIX}`);

      // A store that cannot be read: the reload fails, the snapshot stays.
      const before = reg.current();
      put(ROOT_PREFIX, kelDocument(ROOT_PREFIX, ROOT_EVENTS, 3));
      store.failing = true;
      assert.equal(await reg.reload('test'), false);
      assert.equal(reg.current(), before);
      assert.equal(reg.status().lastReload?.ok, false);
      assert.match(failed.at(-1) ?? '', /store down/);
      store.failing = false;
      assert.equal(await reg.reload('test'), true);
      assert.equal(store.rows.get(AGENT_PREFIX)?.s, 1, 'the anchored drt raised the tip');
      assert.deepEqual(reg.status().counts, { accepted: 2, pending: 0, invalid: 0 });

      // Another replica raised the agent's tip: this process's state is behind.
      store.rows.set(AGENT_PREFIX, { prefix: AGENT_PREFIX, s: 7, d: 'E' + 'z'.repeat(43) });
      await reg.reload('test');
      assert.equal(reg.current().withheld?.get(agent)?.reason, 'behind');
      // …and its copy, which does not contain that tip, is refused as a rollback.
      assert.deepEqual(
        invalid.map((e) => [e.prefix, e.reason, e.seq]),
        [[AGENT_PREFIX, 'rollback', 2]],
      );
      store.rows.set(AGENT_PREFIX, { prefix: AGENT_PREFIX, s: 1, d: AGENT_EVENTS[1]!.event.d as string });

      await reg.reload('test');
      assert.equal(reg.current().parties.get(agent)?.keys.length, 1);
      // A rollback is reported once, however many reloads see it.
      invalid.length = 0;
      put(AGENT_PREFIX, kelDocument(AGENT_PREFIX, AGENT_EVENTS, 1));
      await reg.reload('test');
      await reg.reload('test');
      assert.deepEqual(
        invalid.map((e) => [e.prefix, e.reason]),
        [[AGENT_PREFIX, 'rollback']],
      );
      assert.equal(reg.current().parties.get(agent)?.keys.length, 1);

      // A registry edit giving static keys to an identifier with a KEL: accepted, the KEL is
      // shadowed (reported once per change), the static keys stand (SPEC §3.5 rev 4; was registry_conflict).
      const key = encodeHex(edParty(0x31).publicKey);
      writeFileSync(registryFile, JSON.stringify({ parties: [{ id: ROOT_PREFIX, keys: [{ curve: 'ed25519', public_key: key }] }] }));
      reg.start();
      const failedBefore = failed.length;
      const loadedBefore = loaded.length;
      process.emit('SIGHUP');
      await reg.reload('test');
      assert.equal(failed.length, failedBefore, failed.join('\n'));
      assert.deepEqual(shadowed, [[`did:keri:${ROOT_PREFIX}`]]);
      const root = reg.current().parties.get(`did:keri:${ROOT_PREFIX}`)!;
      assert.equal(root.kel, undefined);
      assert.equal(encodeHex(root.keys[0]!.publicKey), key);
      await reg.reload('test');
      assert.equal(shadowed.length, 1, 'reported once, not at every reload');

      // A SIGHUP with a broken registry file: one outcome, "failed", never also "reloaded" (issue 27 item 9).
      writeFileSync(registryFile, '{"parties": [');
      const loadedNow = loaded.length;
      process.emit('SIGHUP');
      await reg.reload('test2');
      assert.equal(failed.length, failedBefore + 1, failed.join('\n'));
      assert.match(failed.at(-1) ?? '', /^SIGHUP: the registry file was not reloaded/);
      assert.deepEqual(loaded.slice(loadedNow), ['test2'], 'the SIGHUP reload did not also report "reloaded"');
      assert.ok(loadedBefore <= loadedNow);
      assert.equal(reg.current().parties.get(`did:keri:${ROOT_PREFIX}`)?.kel, undefined, 'the previous file stays');
    } finally {
      await reg.stop();
    }
  } finally {
    cleanup();
  }
});
