// Child process of crash.test.ts: a role-kel node on a loopback port over the data directory
// argv[2]. With CRASH_AT_SIGN=N, the N-th KERI witness signature this process makes is computed
// (the OOBI routes sign too: the parent reads the prefix from the `url` line instead) and then the process freezes (it prints `signed` and blocks its only thread), so the parent's
// kill -9 lands between signing a receipt and committing its transaction.
import { startKelNode } from './harness.ts';

const dir = process.argv[2]!;
const crashAt = Number(process.env.CRASH_AT_SIGN ?? '0');
const node = await startKelNode(dir, { kelLimits: { rateLimit: null } });
const identity = node.kel!.identity as { sign(message: Uint8Array): Promise<Uint8Array> };
const sign = identity.sign.bind(identity);
let signatures = 0;
identity.sign = async (message) => {
  const s = await sign(message);
  if (++signatures === crashAt) {
    process.stdout.write('signed\n');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); // until SIGKILL: the transaction never commits
  }
  return s;
};
process.stdout.write(`url ${node.url} ${node.kel!.identity.prefix}\n`);
process.on('SIGTERM', () => {
  void node.close().then(() => process.exit(0));
});
