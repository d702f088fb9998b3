// SPEC §3.6.10 item 6 (second half): Go x/mod (test/kel-witness/go-inclusion, GOPATH mode on
// Debian's golang-golang-x-mod-dev) verifies the inclusion of witnessed events' own-log entries:
// GET /v1/kel/event's inclusion, the checkpoint opened under the node's log vkey, the kel-event
// entry read from the tlog-tiles entry bundle and checked to name the event, tlog.CheckRecord, and
// a tampered entry refused. The route's own answers (shape, 404, 400) are checked here too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { tempDir } from '../helpers/tmp.ts';
import { Controller, send, startKelNode } from './harness.ts';

const run = promisify(execFile);
const GOPATH = '/usr/share/gocode';

async function goMissing(): Promise<string | null> {
  try {
    await run('go', ['version'], { timeout: 10_000 });
  } catch {
    return 'go is not installed';
  }
  if (!existsSync(join(GOPATH, 'src/golang.org/x/mod/sumdb/tlog'))) return `golang.org/x/mod is not under ${GOPATH}`;
  return null;
}

void test('GET /v1/kel/event: the event, its receipt and its entry inclusion; Go x/mod verifies the inclusion of each witnessed event', async (t) => {
  const tmp = tempDir();
  const node = await startKelNode(tmp.dir);
  t.after(async () => {
    await node.close();
    tmp.cleanup();
  });
  const witness = node.kel!.identity.prefix;
  const ctl = await Controller.create(41);
  const events = [];
  for (const make of [() => ctl.incept([witness]), () => ctl.interact(), () => ctl.rotate(), () => ctl.interact()]) {
    const e = make(); // signed right away: a rotation changes the signing key
    const r = await send(node.url, '/receipts', e.raw, ctl.sign(e));
    assert.equal(r.status, 200, r.text);
    events.push(e);
  }
  const res = await fetch(`${node.url}/v1/kel/event?pre=${ctl.pre}&sn=1`);
  assert.equal(res.status, 200);
  const view = (await res.json()) as {
    event: { d: string };
    attachment: string;
    state: string;
    witnessed: boolean;
    first_seen: string;
    receipt: string;
    inclusion: { leaf_index: number; tree_size: number; hashes: string[]; checkpoint: string };
  };
  assert.equal(view.event.d, events[1]!.said);
  assert.equal(view.state, 'accepted');
  assert.equal(view.witnessed, true);
  assert.match(view.attachment, /^-AAB/);
  assert.ok(view.receipt.startsWith('{"v":"KERI10JSON000091_","t":"rct"'));
  assert.ok(view.inclusion.tree_size > view.inclusion.leaf_index);
  const bySaid = (await (await fetch(`${node.url}/v1/kel/event?pre=${ctl.pre}&said=${events[1]!.said}`)).json()) as {
    event: { d: string };
  };
  assert.equal(bySaid.event.d, events[1]!.said);
  assert.equal((await fetch(`${node.url}/v1/kel/event?pre=${ctl.pre}&sn=9`)).status, 404);
  assert.equal((await fetch(`${node.url}/v1/kel/event?pre=${ctl.pre}`)).status, 400);
  assert.equal((await fetch(`${node.url}/v1/kel/event?pre=${ctl.pre}&sn=1&said=${events[1]!.said}`)).status, 400);

  const missing = await goMissing();
  if (missing !== null) {
    t.diagnostic(`Go check skipped: ${missing}`);
    return;
  }
  const health = (await (await fetch(`${node.url}/health`)).json()) as { keys: { log_vkey: string } };
  const env = { ...process.env, GO111MODULE: 'off', GOPATH, GOFLAGS: '', GOCACHE: join(tmpdir(), 'anchor-witness-gocache') };
  const bin = join(tmp.dir, 'go-inclusion');
  await run('go', ['build', '-o', bin, join(import.meta.dirname, 'go-inclusion', 'main.go')], { env, timeout: 180_000 });
  for (let sn = 0; sn < events.length; sn++) {
    const { stdout } = await run(
      bin,
      ['-url', node.url, '-pre', ctl.pre, '-sn', String(sn), '-log-vkey', health.keys.log_vkey, '-witness', witness],
      { timeout: 30_000 },
    );
    assert.match(stdout, new RegExp(`^INCLUSION PASSED leaf \\d+ of \\d+: ${events[sn]!.said}`), stdout);
  }
  // Under another log's vkey the checkpoint does not open: the check can fail.
  const other = 'example.com/log+01882cac+ASVDuS/xCVURR2rcg2nbbdyTNmWhGXjdoUBO4QZsqVWd'; // research Appendix C's log key
  await assert.rejects(
    run(bin, ['-url', node.url, '-pre', ctl.pre, '-sn', '0', '-log-vkey', other, '-witness', witness], { timeout: 30_000 }),
    (e: { stdout?: string }) => /^FAIL checkpoint/.test(e.stdout ?? ''),
  );
});
