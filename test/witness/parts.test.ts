// The node's parts (docs/ARCHITECTURE.md, "One node, many parts"): the node installs no SIGHUP
// listener (the CLI's one handler calls node.reload()), reload() reaches every reloadable part and
// reports each outcome, and a part that fails to start unwinds the parts started before it (the
// AsyncDisposableStack): no listener left behind, the store closed. Before the parts, every
// reloadable thing (registry, cosign logs file, log lists, log witnesses, KEL source) added its
// own process.on('SIGHUP') and startWitness had no reload().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ed25519KeyFromSeed } from '../../src/crypto/ed25519.ts';
import { SyntheticLog } from '../helpers/cosign-harness.ts';
import { fill } from '../helpers/anchors.ts';
import { httpRequest } from '../helpers/rel-common.ts';
import { Lane, makeDeployment, startTestNode } from '../helpers/rel-node.ts';
import { tempDir } from '../helpers/tmp.ts';

const knownLogs = async (url: string): Promise<number> =>
  Number(/^cosign_known_logs (\d+)$/m.exec((await httpRequest(`${url}/metrics`)).text)?.[1] ?? NaN);

const anchor = async (url: string, lane: Lane): Promise<number> =>
  (
    await httpRequest(`${url}/v1/anchor`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: lane.body(),
    })
  ).status;

void test('no SIGHUP listener of its own; node.reload() re-reads the registry and the cosign logs file, one report per part', async () => {
  const { dir, cleanup } = tempDir('aw-parts-');
  const hups = process.listenerCount('SIGHUP');
  try {
    const d = makeDeployment(dir, { logCount: 2 });
    const w = await startTestNode(d);
    try {
      assert.equal(process.listenerCount('SIGHUP'), hups, 'a part listens for SIGHUP itself');
      const lane = new Lane(d.party, 'parts');
      assert.equal(await anchor(w.url, lane), 200);
      assert.equal(await knownLogs(w.url), 2);
      // written in place (no rename): only a reload picks the files up
      writeFileSync(d.registryFile, JSON.stringify({ parties: [] }));
      const extra = new SyntheticLog('log9.rel.example/log', ed25519KeyFromSeed(fill(0x99)));
      writeFileSync(d.logsFile, JSON.stringify({ logs: [...d.logs, extra].map((l) => ({ origin: l.origin, keys: [l.vkey] })) }));
      assert.equal(await anchor(w.url, lane), 200, 'a file written in place is not picked up before the reload');
      const reports = await w.reload();
      assert.deepEqual(
        reports.map((r) => r.part),
        ['registry', 'cosign'],
      );
      assert.ok(
        reports.every((r) => r.error === null),
        JSON.stringify(reports),
      );
      assert.equal(await anchor(w.url, lane), 403, 'the party is gone from the reloaded registry');
      assert.equal(await knownLogs(w.url), 3);
      // a bad registry file: reported, the previous copy stays
      writeFileSync(d.registryFile, '{"parties": 1}');
      const bad = await w.reload();
      assert.match(bad.find((r) => r.part === 'registry')?.error ?? '', /--registry .* was not reloaded/);
    } finally {
      await w.close();
    }
    assert.equal(process.listenerCount('SIGHUP'), hups);
  } finally {
    cleanup();
  }
});

void test('a part that fails to start stops the parts started before it and closes the store; close() is idempotent', async () => {
  const { dir, cleanup } = tempDir('aw-parts-fail-');
  const hups = process.listenerCount('SIGHUP');
  try {
    const d = makeDeployment(dir);
    const badWitnesses = join(dir, 'log-witnesses.json');
    writeFileSync(badWitnesses, '{"witnesses": "not a list"}');
    // registry and anchoring have started when the log-witness part refuses its file
    await assert.rejects(startTestNode(d, { logWitnessesFile: badWitnesses }), (e: unknown) => (e as { code?: string }).code !== undefined);
    assert.equal(process.listenerCount('SIGHUP'), hups);
    // the store was closed (its lock released): the same data dir starts again
    const w = await startTestNode(d);
    const closing = w.close();
    assert.equal(w.close(), closing);
    await closing;
  } finally {
    cleanup();
  }
});
