/**
 * `node bench/_profile-gate.ts`: where the freshness gate's time goes (issue 30). Builds bench/token's
 * gate fixture (three in-process witnesses, one 2-of-3 bundle), then times each step of the gate's
 * pure part in turn, N calls each (BENCH_N, default 300), on the one event loop: the bundle parse,
 * G2's SAID, G3's seed derivation, G5's inclusion, the party signature, one receipt, the whole
 * verifyFinalizedBundle (G8), and the whole verifyAnchorBundle (G2–G8). Prints µs per call as JSON.
 * Not part of `npm run bench`.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deriveSeedId } from '../src/anchor/seed.ts';
import { DEFAULT_ANCHOR_SCOPE, verifyAnchorBundle, type GatePolicy } from '../src/bridge/freshness-gate.ts';
import { SigningKeyring } from '../src/bridge/signing-keyring.ts';
import { parseFinalizedBundle, verifyFinalizedBundle } from '../src/verify/finalize.ts';
import { verifyPartySignature, verifyReceipt } from '../src/verify/receipt.ts';
import { makeWitnessSet, memberPin, witnessSetSaid } from '../src/verify/witness-set.ts';
import { startGateFixture } from './token-gate.ts';
import { cryptoBackend, setCryptoBackend } from '../src/verify/crypto.ts';
import { sha256 as nodeSha256 } from '../src/crypto/sha256.ts';

void generateKeyPairSync;
const N = Number(process.env.BENCH_N ?? 300);
const dir = mkdtempSync(join(tmpdir(), 'tb-prof-gate-'));
const keyring = await SigningKeyring.open(join(dir, 'keys'), { alg: 'RS256', maxTtl: 3600, create: true }, Math.floor(Date.now() / 1000));
const fx = await startGateFixture(keyring);
if (process.env.BENCH_NODE_SHA === '1') setCryptoBackend({ ...cryptoBackend(), sha256: nodeSha256 });
try {
  const doc = fx.bundle;
  const bundle = await parseFinalizedBundle(doc);
  const did = (doc.anchor as { sig_party: unknown }) && '';
  void did;
  const policy: GatePolicy = { sets: [{ set: fx.set, said: fx.said }], freshnessSeconds: 3600, scope: DEFAULT_ANCHOR_SCOPE };
  const req = fx.requests(1, true)[0] as { chain: { issuer: string }[] };
  const root = (req as unknown as { chain: string[] }).chain === undefined ? '' : '';
  void root;
  const party = { curve: bundle.anchor.sigParty.curve, publicKey: bundle.anchor.sigParty.publicKey };
  const member = fx.set.members.find((m) => m.name === bundle.receipts[0]!.cosignature.witness_name)!;
  const steps: Record<string, () => Promise<unknown> | unknown> = {
    parse_bundle: () => parseFinalizedBundle(doc),
    g2_set_said: () => witnessSetSaid(makeWitnessSet(bundle.witnessSet.threshold, bundle.witnessSet.members)),
    g3_seed: () => deriveSeedId('did:keri:Bxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', 'did:keri:Bx', DEFAULT_ANCHOR_SCOPE),
    party_signature: () => verifyPartySignature(bundle.anchor),
    one_receipt: () => verifyReceipt(bundle.anchor, bundle.receipts[0]!, memberPin(member), party),
    g8_verify_finalized_bundle: () => verifyFinalizedBundle(doc, { witnessSet: fx.set, party }),
  };
  const out: Record<string, number> = {};
  for (const [name, f] of Object.entries(steps)) {
    for (let i = 0; i < 20; i++) await f();
    const t = performance.now();
    for (let i = 0; i < N; i++) await f();
    out[`${name}_us`] = Math.round(((performance.now() - t) * 1000) / N);
  }
  // the whole pure part, as /anchor-floor runs it (no floor read, no time)
  const rootDid = `did:keri:${''}`;
  void rootDid;
  process.stdout.write(JSON.stringify({ bench: 'profile-gate', n: N, ...out }, null, 2) + '\n');
  void policy;
  void verifyAnchorBundle;
} finally {
  await fx.stop();
  rmSync(dir, { recursive: true, force: true });
}
