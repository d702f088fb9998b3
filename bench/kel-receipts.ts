// Receipts per second of the KERI witness role (SPEC §3.6.10 "a bench"), one signify-ts controller
// sending ixns one after another over loopback to an in-process node (SQLite), and the same run's
// Ed25519 verify + sign ceiling (the two signature operations every receipt needs), as a ratio.
//   node bench/kel-receipts.ts [N]
import { generateEd25519, signEd25519, verifyEd25519, ed25519PublicKeyBytes } from '../src/crypto/ed25519.ts';
import { tempDir } from '../test/helpers/tmp.ts';
import { Controller, send, startKelNode } from '../test/kel-witness/harness.ts';

const n = Number(process.argv[2] ?? 300);
const tmp = tempDir();
const node = await startKelNode(tmp.dir, { kelLimits: { prefixEventsPerMinute: 1_000_000, rateLimit: null } });
try {
  const ctl = await Controller.create(77);
  const icp = ctl.incept([node.kel!.identity.prefix]);
  await send(node.url, '/receipts', icp.raw, ctl.sign(icp));
  const events = Array.from({ length: n }, () => ctl.interact());
  const sigs = events.map((e) => ctl.sign(e));
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const r = await send(node.url, '/receipts', events[i]!.raw, sigs[i]!);
    if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
  }
  const receiptsPerSecond = n / ((performance.now() - t0) / 1000);
  const { privateKey } = generateEd25519();
  const pub = ed25519PublicKeyBytes(privateKey);
  const msg = new TextEncoder().encode(events[0]!.raw);
  const t1 = performance.now();
  for (let i = 0; i < n; i++) verifyEd25519(pub, msg, signEd25519(privateKey, msg));
  const ceiling = n / ((performance.now() - t1) / 1000);
  process.stdout.write(
    `${JSON.stringify({ receipts: n, receipts_per_second: Math.round(receiptsPerSecond), verify_sign_per_second: Math.round(ceiling), ratio: +(receiptsPerSecond / ceiling).toFixed(3) })}\n`,
  );
} finally {
  await node.close();
  tmp.cleanup();
}
