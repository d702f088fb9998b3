// Storage faults. Where the kernel lets us (root, tmpfs): the witness's data directory on a small
// tmpfs, filled to the last byte by a filler file → writes answer 503 `store_unavailable` with
// Retry-After (the C2SP route: a 503 text line), reads and /health keep working, nothing partial is
// stored (checkpoint, log and seeds exactly as before the fault), and once the filler is deleted the
// SAME process accepts the re-sent requests as new writes (no restart). A read-only data directory
// cannot be produced under a running SQLite (remount,ro is refused while files are open for
// writing), so: at start, a read-only tmpfs → a clear start-up refusal; at run time, a store wrapper
// injects the failure (SQLite's SQLITE_FULL / SQLITE_READONLY at commit, after the transaction's
// writes, so SQLite really rolls back) — that wrapper also covers machines where mounting is not
// allowed.
import Database from 'better-sqlite3';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, unlinkSync, writeSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { decodeAnchor } from '../../src/anchor/codec.ts';
import type { AnchorWire } from '../../src/anchor/types.ts';
import { sha256Hex } from '../../src/crypto/sha256.ts';
import { StoreUnavailableError } from '../../src/store/errors.ts';
import type { WitnessStore } from '../../src/store/types.ts';
import { checkAnchors, WitnessAudit, type AckedAnchor } from '../helpers/rel-audit.ts';
import { codeOf, figures, httpRequest, REPO, type TimedAnswer } from '../helpers/rel-common.ts';
import {
  Lane,
  makeDeployment,
  ORIGIN,
  serveArgs,
  startServe,
  startTestNode,
  witnessPublicKey,
  type Deployment,
} from '../helpers/rel-node.ts';
import { tempDir } from '../helpers/tmp.ts';

function tryMount(dir: string, sizeKiB: number): boolean {
  if (process.getuid?.() !== 0) return false;
  mkdirSync(dir, { recursive: true });
  return spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKiB}k,mode=0700`, 'tmpfs', dir], { stdio: 'ignore' }).status === 0;
}

function umount(dir: string): void {
  spawnSync('umount', ['-l', dir], { stdio: 'ignore' });
}

/** Fill the file system holding `dir` to the last byte; returns the filler's path and size. */
function fill(dir: string): { path: string; bytes: number } {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 0xaa);
  let bytes = 0;
  try {
    for (let size = chunk.length; size >= 1;) {
      try {
        bytes += writeSync(fd, chunk, 0, size);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
        size = Math.floor(size / 2);
      }
    }
  } finally {
    closeSync(fd);
  }
  return { path, bytes };
}

interface Client {
  url: string;
  agent: http.Agent;
}

const postAnchor = (c: Client, lane: Lane): Promise<TimedAnswer> =>
  httpRequest(`${c.url}/v1/anchor`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: lane.body(),
    agent: c.agent,
    timeoutMs: 15_000,
  });

function acceptAnchor(a: TimedAnswer, lane: Lane, acked: AckedAnchor[]): { replay: boolean } {
  assert.equal(a.status, 200, a.text);
  const b = JSON.parse(a.text) as { anchor: AnchorWire; replay: boolean; inclusion: { leaf_index: number } };
  acked.push({ anchor: decodeAnchor({ ...b.anchor, cumulative: String(b.anchor.cumulative) }), leafIndex: b.inclusion.leaf_index });
  lane.next++;
  return { replay: b.replay };
}

function assertUnavailable(a: TimedAnswer, route: 'anchor' | 'cosign'): void {
  assert.equal(a.status, 503, `${route}: ${a.status} ${a.text}`);
  assert.ok(a.headers['retry-after'] !== undefined, `${route}: 503 without Retry-After`);
  if (route === 'anchor') assert.equal(codeOf(a), 'store_unavailable');
  else assert.match(a.text, /^store unavailable[^\n]*\n$/);
}

/** The observable durable state: checkpoint note, each lane's latest, each log's cosigned checkpoint. */
async function observe(c: Client, d: Deployment, lanes: Lane[]): Promise<string> {
  const cp = (await httpRequest(`${c.url}/log/checkpoint`, { agent: c.agent })).text;
  const latest = await Promise.all(
    lanes.map(async (l) =>
      (await httpRequest(`${c.url}/v1/anchor/${Buffer.from(l.seedId).toString('hex')}`, { agent: c.agent })).text.replace(
        /"checkpoint":"[^"]*"|"tlog_proof":"[^"]*"/g,
        '',
      ),
    ),
  );
  const origins = await Promise.all(
    d.logs.map(async (l) => (await httpRequest(`${c.url}/${sha256Hex(l.origin)}/checkpoint`, { agent: c.agent })).text),
  );
  return JSON.stringify({ cp, latest, origins });
}

void test(
  'disk full (tmpfs filled to the last byte): 503 store_unavailable, no partial state, recovery in the same process',
  { timeout: 120_000 },
  async (t) => {
    const { dir, cleanup } = tempDir('aw-rel-disk-');
    const mnt = join(dir, 'mnt');
    if (!tryMount(mnt, 6 * 1024)) {
      cleanup();
      t.skip('cannot mount a tmpfs here (needs root); the store-wrapper test below covers the failure path');
      return;
    }
    const d = makeDeployment(dir, { dataDir: join(mnt, 'data') });
    const w = await startServe(serveArgs(d, ['--log-level', 'warn']));
    const c: Client = { url: w.url, agent: new http.Agent({ keepAlive: true, maxSockets: 1 }) };
    const acked: AckedAnchor[] = [];
    const lanes = Array.from({ length: 4 }, (_, i) => new Lane(d.party, `disk-${i}`));
    const log = d.logs[0]!;
    let pin: Database.Database | undefined;
    try {
      // warm up: the store, its WAL and the log exist and hold data
      for (let i = 0; i < 3; i++) for (const l of lanes) acceptAnchor(await postAnchor(c, l), l, acked);
      assert.equal((await httpRequest(`${c.url}/add-checkpoint`, { method: 'POST', body: log.request(0, 5), agent: c.agent })).status, 200);
      const logSize = 5;

      const filler = fill(mnt);
      // Keep writing until the store hits the full disk (a WAL with free frames may take a few).
      let refusedAnchors = 0;
      let acceptedWhileFull = 0;
      let lane = lanes[0]!;
      for (let i = 0; i < 400 && refusedAnchors === 0; i++) {
        lane = lanes[i % lanes.length]!;
        const a = await postAnchor(c, lane);
        if (a.status === 200) {
          acceptAnchor(a, lane, acked);
          acceptedWhileFull++;
        } else {
          assertUnavailable(a, 'anchor');
          refusedAnchors++;
        }
      }
      assert.equal(refusedAnchors, 1, 'the full disk was never noticed');
      let before = await observe(c, d, lanes);
      // more refusals: every lane, the cosign role, again and again; reads and health still work.
      // A cosign write rewrites one `origins` row: it may fit in the WAL space already allocated
      // (the checkpointer resets the WAL and writers reuse it from the start), and a write that fits
      // is durably committed, so 200 is then right. It must never be partial: the stored state then
      // moves by exactly that cosignature, and the next request continues from it. So that the cosign
      // role surely meets the full disk, a reader (like an online backup) holds a snapshot open: the
      // WAL cannot be reset under it, every write appends frames, and the WAL must grow.
      pin = new Database(join(mnt, 'data', 'witness.db'), { fileMustExist: true });
      pin.prepare('BEGIN').run();
      pin.prepare('SELECT count(*) FROM origins').get();
      let refusedCosign = 0;
      let cosignedWhileFull = 0;
      let cosigned = logSize;
      for (let round = 0; round < 60 && (round < 5 || refusedCosign === 0); round++) {
        for (const l of lanes) {
          const a = await postAnchor(c, l);
          assertUnavailable(a, 'anchor');
          refusedAnchors++;
        }
        const cp = await httpRequest(`${c.url}/add-checkpoint`, {
          method: 'POST',
          body: log.request(cosigned, cosigned + 3),
          agent: c.agent,
        });
        if (cp.status === 200) {
          cosigned += 3;
          cosignedWhileFull++;
          before = await observe(c, d, lanes);
          continue;
        }
        assertUnavailable(cp, 'cosign');
        refusedCosign++;
      }
      pin.close(); // ends the read transaction
      assert.ok(refusedCosign >= 1, `the cosign role never met the full disk (${cosignedWhileFull} cosigned while full)`);
      assert.equal((await httpRequest(`${c.url}/health`, { agent: c.agent })).status, 200);
      assert.equal(await observe(c, d, lanes), before, 'a refused write changed the stored state');
      const audit = new WitnessAudit(ORIGIN, witnessPublicKey(d));
      checkAnchors(await audit.audit(c.url), acked);

      // space returns: the same process, the same requests re-sent → new co-signatures (never a replay)
      unlinkSync(filler.path);
      let recoveredAfter = 0;
      for (;;) {
        const a = await postAnchor(c, lane);
        recoveredAfter++;
        if (a.status === 200) {
          assert.equal(acceptAnchor(a, lane, acked).replay, false, 'a refused anchor had been stored');
          break;
        }
        assertUnavailable(a, 'anchor');
        assert.ok(recoveredAfter < 20, 'no recovery after the space returned');
      }
      for (const l of lanes) acceptAnchor(await postAnchor(c, l), l, acked);
      const cp = await httpRequest(`${c.url}/add-checkpoint`, {
        method: 'POST',
        body: log.request(cosigned, cosigned + 3),
        agent: c.agent,
      });
      assert.equal(cp.status, 200, cp.text);
      const entries = await audit.audit(c.url);
      const found = checkAnchors(entries, acked);
      assert.equal(w.child.exitCode, null, 'the witness exited');
      figures(t, 'storage/disk-full', {
        fault: 'tmpfs 6 MiB filled by a filler file',
        filler_bytes: filler.bytes,
        anchors_accepted_while_filling: acceptedWhileFull,
        refused_503: { anchors: refusedAnchors, add_checkpoints: refusedCosign },
        add_checkpoints_accepted_while_full: cosignedWhileFull,
        state_unchanged_while_full: true,
        recovered_after_requests: recoveredAfter,
        acknowledged: acked.length,
        found_in_log: found.found,
        log_size: entries.length,
        restarts: 0,
      });
      assert.match(w.stderr(), /store_unavailable|SQLITE_FULL/);
    } finally {
      if (pin?.open === true) pin.close();
      c.agent.destroy();
      await w.stop();
      umount(mnt);
      cleanup();
    }
  },
);

void test('read-only data directory at start: a clear refusal; writable again: starts and serves', { timeout: 60_000 }, async (t) => {
  const { dir, cleanup } = tempDir('aw-rel-ro-');
  const mnt = join(dir, 'mnt');
  if (!tryMount(mnt, 4 * 1024)) {
    cleanup();
    t.skip('cannot mount a tmpfs here (needs root)');
    return;
  }
  try {
    const d = makeDeployment(dir, { dataDir: join(mnt, 'data') });
    // a store that exists, then the file system goes read-only under a stopped witness
    const first = await startServe(serveArgs(d, ['--log-level', 'warn']));
    await first.stop();
    execFileSync('mount', ['-o', 'remount,ro', mnt]);
    const r = spawnSync(process.execPath, [join(REPO, 'bin', 'anchor-witness.js'), ...serveArgs(d)], { encoding: 'utf8', timeout: 30_000 });
    assert.notEqual(r.status, 0, 'started on a read-only store');
    assert.equal(r.stdout, '', 'printed a listening line');
    assert.match(r.stderr, /store|read-only|readonly/i);
    assert.doesNotMatch(r.stderr, /^\s+at /m, 'a stack trace instead of a message');
    execFileSync('mount', ['-o', 'remount,rw', mnt]);
    const w = await startServe(serveArgs(d, ['--log-level', 'warn']));
    const lane = new Lane(d.party, 'ro');
    const a = await httpRequest(`${w.url}/v1/anchor`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: lane.body(),
    });
    assert.equal(a.status, 200, a.text);
    await w.stop();
    figures(t, 'storage/read-only-at-start', { exit_code: r.status, message: r.stderr.trim().split('\n').slice(-1)[0] });
  } finally {
    umount(mnt);
    cleanup();
  }
});

void test(
  'store wrapper: commits fail (SQLITE_FULL / SQLITE_READONLY after the writes) → 503, rollback, recovery',
  { timeout: 60_000 },
  async (t) => {
    const { dir, cleanup } = tempDir('aw-rel-wrap-');
    const d = makeDeployment(dir);
    const w = await startTestNode(d);
    // Fail writes on the very store instance the node uses (the anchor service and cosign role hold it).
    const store: WitnessStore = w.store;
    let fault: string | null = null;
    let injected = 0;
    const tx = store.transaction.bind(store);
    const updateOrigin = store.cosign.updateOrigin.bind(store.cosign);
    store.transaction = (fn) =>
      fault === null
        ? tx(fn)
        : tx(async (x) => {
            await fn(x); // every write of the transaction happens, then the commit fails: SQLite rolls back
            injected++;
            throw new StoreUnavailableError(`store: ${fault ?? ''}: injected at commit`);
          });
    store.cosign.updateOrigin = (expected, next) => {
      if (fault === null) return updateOrigin(expected, next);
      injected++;
      return Promise.reject(new StoreUnavailableError(`store: ${fault}: injected`));
    };
    const c: Client = { url: w.url, agent: new http.Agent({ keepAlive: true, maxSockets: 1 }) };
    const lanes = Array.from({ length: 4 }, (_, i) => new Lane(d.party, `wrap-${i}`));
    const acked: AckedAnchor[] = [];
    const log = d.logs[1]!;
    let logSize = 0;
    const figs: Record<string, unknown> = {};
    try {
      for (const l of lanes) acceptAnchor(await postAnchor(c, l), l, acked);
      for (const kind of ['SQLITE_FULL', 'SQLITE_READONLY']) {
        const before = await observe(c, d, lanes);
        const counts = await store.anchors.counts();
        fault = kind;
        let refused = 0;
        // concurrent submissions share one failing batch; sequential ones fail one by one
        const burst = await Promise.all(lanes.map((l) => postAnchor({ url: c.url, agent: new http.Agent() }, l)));
        for (const a of burst) assertUnavailable(a, 'anchor');
        refused += burst.length;
        for (const l of lanes) {
          assertUnavailable(await postAnchor(c, l), 'anchor');
          refused++;
        }
        assertUnavailable(
          await httpRequest(`${c.url}/add-checkpoint`, { method: 'POST', body: log.request(logSize, logSize + 4), agent: c.agent }),
          'cosign',
        );
        refused++;
        assert.equal((await httpRequest(`${c.url}/health`, { agent: c.agent })).status, 200);
        assert.equal(await observe(c, d, lanes), before, `${kind}: a refused write changed the stored state`);
        assert.deepEqual(await store.anchors.counts(), counts);
        fault = null;
        for (const l of lanes) assert.equal(acceptAnchor(await postAnchor(c, l), l, acked).replay, false);
        const cp = await httpRequest(`${c.url}/add-checkpoint`, {
          method: 'POST',
          body: log.request(logSize, logSize + 4),
          agent: c.agent,
        });
        assert.equal(cp.status, 200, cp.text);
        logSize += 4;
        figs[kind] = { refused_503: refused };
      }
      const audit = new WitnessAudit(ORIGIN, witnessPublicKey(d));
      const found = checkAnchors(await audit.audit(c.url), acked);
      figures(t, 'storage/store-wrapper', {
        faults: figs,
        injected_failures: injected,
        acknowledged: acked.length,
        found_in_log: found.found,
      });
    } finally {
      c.agent.destroy();
      await w.close();
      cleanup();
    }
  },
);
