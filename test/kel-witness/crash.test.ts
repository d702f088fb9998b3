// SPEC §3.6.10 item 6 / §3.6.6: a kill -9 between signing a receipt and committing its transaction
// loses the event entirely — not stored, not receipted, no own-log entry — and the controller's
// resend gets 200 with a receipt that verifies. The crash point is injected in a child process
// (crash-child.ts): its N-th KERI witness signature freezes the process until the SIGKILL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { verifyEd25519 } from '../../src/crypto/ed25519.ts';
import { decodeQb64 } from '../../src/keri/qb64.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { tempDir } from '../helpers/tmp.ts';
import { Controller, send } from './harness.ts';

const CHILD = join(import.meta.dirname, 'crash-child.ts');

interface Child {
  proc: ChildProcess;
  url: string;
  /** The node's KERI witness prefix. */
  prefix: string;
  /** Resolves when the child printed `signed` (frozen after its crash-point signature). */
  signed: Promise<void>;
  exited: Promise<void>;
}

function startChild(dir: string, crashAt = 0): Promise<Child> {
  const proc = spawn(process.execPath, [CHILD, dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, CRASH_AT_SIGN: String(crashAt) },
  });
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

async function ledgerAndLog(dataDir: string, prefix: string): Promise<{ saids: string[]; logSize: number }> {
  const store = SqliteStore.open(join(dataDir, 'witness.db'));
  try {
    const saids = (await store.kelLedger.events(prefix)).map((e) => e.said);
    return { saids, logSize: await store.transaction((tx) => tx.log.size()) };
  } finally {
    await store.close();
  }
}

void test('crash: kill -9 between signing and commit loses the event entirely; the resend gets 200', { timeout: 180_000 }, async (t) => {
  const tmp = tempDir();
  t.after(() => {
    tmp.cleanup();
  });
  const dir = join(tmp.dir, 'n');
  const ctl = await Controller.create(111);

  // Run 1: the icp commits (signature 1); the ixn freezes after its signature (2) and is killed.
  const first = await startChild(dir, 2);
  const w = first.prefix;
  const icp = ctl.incept([w]);
  assert.equal((await send(first.url, '/receipts', icp.raw, ctl.sign(icp))).status, 200);
  const ixn = ctl.interact();
  const lost = send(first.url, '/receipts', ixn.raw, ctl.sign(ixn)).then(
    () => 'answered',
    () => 'no answer',
  );
  await first.signed;
  first.proc.kill('SIGKILL');
  await first.exited;
  assert.equal(await lost, 'no answer');

  const afterCrash = await ledgerAndLog(join(dir, 'data'), ctl.pre);
  assert.deepEqual(afterCrash.saids, [icp.said], 'the signed-but-uncommitted ixn is not stored');

  // Run 2: the resend is witnessed now, once, with a receipt that verifies; one more log entry.
  const second = await startChild(dir);
  try {
    const res = await send(second.url, '/receipts', ixn.raw, ctl.sign(ixn));
    assert.equal(res.status, 200, res.text);
    const sig = res.text.slice(res.text.indexOf('-CAB') + 4 + 44 + 2);
    const raw = Buffer.from(`AA${sig}`, 'base64url').subarray(2);
    assert.ok(verifyEd25519(decodeQb64(w, ['B'])!.raw, new TextEncoder().encode(ixn.raw), raw), 'the receipt verifies');
    assert.equal((await send(second.url, '/receipts', ixn.raw, ctl.sign(ixn))).text, res.text, 'a replay is byte for byte');
  } finally {
    second.proc.kill('SIGTERM');
    await second.exited;
  }
  const after = await ledgerAndLog(join(dir, 'data'), ctl.pre);
  assert.deepEqual(after.saids, [icp.said, ixn.said]);
  assert.equal(after.logSize, afterCrash.logSize + 1, 'exactly one kel-event entry for the resent event, none for the lost one');
});
