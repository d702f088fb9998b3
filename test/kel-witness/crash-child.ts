// Child process of crash.test.ts and ledger-group-crash.test.ts: a role-kel node on a loopback port
// over the data directory argv[2]. With CRASH_AT_SIGN=N, the N-th KERI witness signature this
// process makes is computed (the OOBI routes sign too: the parent reads the prefix from the `url`
// line instead) and then the process freezes (it prints `signed` and blocks its only thread), so
// the parent's kill -9 lands between signing a receipt and committing its transaction. With
// CRASH_AT_GROUP_SIGN=K it freezes at the K-th signature made inside ONE store transaction (K = 2:
// in the middle of a group commit, one event of the group signed and the next being signed).
import { startKelNode } from './harness.ts';

const dir = process.argv[2]!;
const crashAt = Number(process.env.CRASH_AT_SIGN ?? '0');
const crashInGroupAt = Number(process.env.CRASH_AT_GROUP_SIGN ?? '0');
const node = await startKelNode(dir, { kelLimits: { rateLimit: null, prefixEventsPerMinute: 1_000_000 } });
const identity = node.kel!.identity as { sign(message: Uint8Array): Promise<Uint8Array> };
const sign = identity.sign.bind(identity);
let signatures = 0;
let inTransaction = 0;
const store = node.store as { transaction<T>(fn: (tx: unknown) => Promise<T>): Promise<T> };
const transaction = store.transaction.bind(store);
store.transaction = (fn) =>
  transaction((tx) => {
    inTransaction = 0;
    return fn(tx);
  });
const freeze = (): void => {
  process.stdout.write('signed\n');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); // until SIGKILL: the transaction never commits
};
identity.sign = async (message) => {
  const s = await sign(message);
  if (++signatures === crashAt) freeze();
  if (++inTransaction === crashInGroupAt) freeze();
  return s;
};
process.stdout.write(`url ${node.url} ${node.kel!.identity.prefix}\n`);
process.on('SIGTERM', () => {
  void node.close().then(() => process.exit(0));
});
