// Group commit (SPEC §3.6.6 "group commit allowed, never split"; src/kel-witness/group-commit.ts):
// concurrent controllers' events share one transaction, and a kill -9 in the middle of such a
// group — after one of its receipts is signed and while the next is — loses the whole group and
// nothing else: every 200 answered before survives (stored, witnessed, logged), no unanswered
// event is stored, the own log holds exactly one entry per stored witnessed event, and the
// resends are then witnessed with 200.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Serder } from 'signify-ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { tempDir } from '../helpers/tmp.ts';
import { Controller, send } from './harness.ts';

const CHILD = join(import.meta.dirname, 'crash-child.ts');

interface Child {
  proc: ChildProcess;
  url: string;
  prefix: string;
  signed: Promise<void>;
  exited: Promise<void>;
}

function startChild(dir: string, env: Record<string, string>): Promise<Child> {
  const proc = spawn(process.execPath, [CHILD, dir], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const exited = new Promise<void>((resolve) =>
    proc.once('exit', () => {
      resolve();
    }),
  );
  let signed!: () => void;
  const signedP = new Promise<void>((resolve) => (signed = resolve));
  return new Promise((resolve, reject) => {
    proc.once('exit', (code) => {
      reject(new Error(`child exited (${code}) before listening`));
    });
    createInterface({ input: proc.stdout }).on('line', (line) => {
      const m = /^url (\S+) (\S+)$/.exec(line);
      if (m !== null) resolve({ proc, url: m[1]!, prefix: m[2]!, signed: signedP, exited });
      else if (line === 'signed') signed();
    });
  });
}

interface Stored {
  witnessed: Set<string>;
  all: Set<string>;
  leaves: number[];
  logSize: number;
}

async function stored(dataDir: string, prefixes: string[]): Promise<Stored> {
  const store = SqliteStore.open(join(dataDir, 'witness.db'));
  try {
    const out: Stored = { witnessed: new Set(), all: new Set(), leaves: [], logSize: await store.transaction((tx) => tx.log.size()) };
    for (const p of prefixes)
      for (const e of await store.kelLedger.events(p)) {
        out.all.add(e.said);
        if (e.witnessed) out.witnessed.add(e.said);
        if (e.leafIndex !== null) out.leaves.push(e.leafIndex);
      }
    return out;
  } finally {
    await store.close();
  }
}

void test(
  'group commit: kill -9 mid-group loses that group entirely; every 200 survives; the resends get 200',
  { timeout: 240_000 },
  async (t) => {
    const tmp = tempDir();
    t.after(() => {
      tmp.cleanup();
    });
    const dir = join(tmp.dir, 'n');
    const ctls = await Promise.all(Array.from({ length: 8 }, (_, i) => Controller.create(140 + i)));
    const first = await startChild(dir, { CRASH_AT_GROUP_SIGN: '2' });
    const w = first.prefix;
    for (const c of ctls) {
      const icp = c.incept([w]);
      assert.equal((await send(first.url, '/receipts', icp.raw, c.sign(icp))).status, 200); // one per transaction: no crash
    }
    const frozen = { crashed: false };
    void first.signed.then(() => {
      frozen.crashed = true;
    });
    const sent: { c: Controller; e: Serder; outcome: Promise<string> }[] = [];
    // Waves of 8 concurrent ixns until two share a transaction (the child freezes at its 2nd signature there).
    for (let wave = 0; wave < 50 && !frozen.crashed; wave++) {
      const waveSent = ctls.map((c) => {
        const e = c.interact();
        const outcome = send(first.url, '/receipts', e.raw, c.sign(e)).then(
          (r) => (r.status === 200 ? 'ok' : `status ${r.status}`),
          () => 'no answer',
        );
        return { c, e, outcome };
      });
      sent.push(...waveSent);
      await Promise.race([Promise.all(waveSent.map((s) => s.outcome)), first.signed]);
    }
    assert.ok(frozen.crashed, 'two events shared a transaction within 50 waves of 8 concurrent requests');
    first.proc.kill('SIGKILL');
    await first.exited;
    const outcomes = await Promise.all(sent.map((s) => s.outcome));
    assert.deepEqual(
      [...new Set(outcomes)].filter((o) => o !== 'ok' && o !== 'no answer'),
      [],
      'every request is 200 or unanswered',
    );
    const lost = sent.filter((_, i) => outcomes[i] === 'no answer');
    assert.ok(lost.length >= 2, `the group was lost whole (${lost.length} unanswered)`);

    const prefixes = ctls.map((c) => c.pre);
    const after = await stored(join(dir, 'data'), prefixes);
    for (const [i, s] of sent.entries()) {
      if (outcomes[i] === 'ok') assert.ok(after.witnessed.has(s.e.said), 'every 200 survives the crash');
      else assert.ok(!after.all.has(s.e.said), 'no unanswered event is stored');
    }
    assert.equal(after.witnessed.size, ctls.length + outcomes.filter((o) => o === 'ok').length);
    assert.equal(after.leaves.length, after.witnessed.size, 'one log entry per witnessed event');
    assert.equal(Math.max(...after.leaves) + 1, after.logSize, 'no log entry beyond the stored events');

    // Run 2: each controller resends its unanswered events in order; all are witnessed now.
    const second = await startChild(dir, {});
    try {
      for (const s of lost) {
        const r = await send(second.url, '/receipts', s.e.raw, s.c.sign(s.e));
        assert.equal(r.status, 200, r.text);
      }
    } finally {
      second.proc.kill('SIGTERM');
      await second.exited;
    }
    const resent = await stored(join(dir, 'data'), prefixes);
    for (const s of sent) assert.ok(resent.witnessed.has(s.e.said));
    assert.equal(resent.logSize, after.logSize + lost.length);
    t.diagnostic(`${sent.length} sent, ${lost.length} lost in the crashed group(s) and resent`);
  },
);
