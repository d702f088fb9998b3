/**
 * `node bench/_profile-gate.ts`: where the freshness gate's time goes (issue 30). Builds bench/token's
 * gate fixture (three in-process witnesses, one 2-of-3 bundle), then times each step of the gate's
 * pure part in turn, BENCH_N calls each (default 300), on the one event loop: the bundle parse, G2's
 * SAID, G3's seed derivation, the party signature, one receipt's witness part, G8
 * (verifyFinalizedBundle), and the whole of G2–G8 (verifyAnchorBundle as `/anchor-floor` runs it)
 * without and with the verdict cache. Prints µs per call as JSON. BENCH_NODE_SHA=1 installs
 * node:crypto's SHA-256 in the verifier's crypto port (to see what WebCrypto's digests cost).
 * Not part of `npm run bench`; run it under `--cpu-prof` for a profile.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deriveSeedId } from '../src/anchor/seed.ts';
import { DEFAULT_ANCHOR_SCOPE, verifyAnchorBundle, type GatePolicy } from '../src/bridge/freshness-gate.ts';
import { GateVerdictCache } from '../src/bridge/gate-verdicts.ts';
import { keriNonTransferablePrefix } from '../src/bridge/root.ts';
import { SigningKeyring } from '../src/bridge/signing-keyring.ts';
import { sha256 as nodeSha256 } from '../src/crypto/sha256.ts';
import { cryptoBackend, setCryptoBackend } from '../src/verify/crypto.ts';
import { parseFinalizedBundle, verifyFinalizedBundle } from '../src/verify/finalize.ts';
import { verifyPartySignature, verifyWitnessReceipt } from '../src/verify/receipt.ts';
import { makeWitnessSet, memberPin, witnessSetSaid } from '../src/verify/witness-set.ts';
import { startGateFixture } from './token-gate.ts';

const N = Number(process.env.BENCH_N ?? 300);
const dir = mkdtempSync(join(tmpdir(), 'tb-prof-gate-'));
const keyring = await SigningKeyring.open(join(dir, 'keys'), { alg: 'RS256', maxTtl: 3600, create: true }, Math.floor(Date.now() / 1000));
const fx = await startGateFixture(keyring);
if (process.env.BENCH_NODE_SHA === '1') setCryptoBackend({ ...cryptoBackend(), sha256: nodeSha256 });
try {
  const doc = fx.bundle;
  const bundle = await parseFinalizedBundle(doc);
  const { anchor } = bundle;
  const did = `did:keri:${keriNonTransferablePrefix(anchor.sigParty.publicKey)}`;
  const party = { curve: anchor.sigParty.curve, publicKey: anchor.sigParty.publicKey };
  const member = fx.set.members.find((m) => m.name === bundle.receipts[0]!.cosignature.witness_name)!;
  const policy = (verdicts?: GateVerdictCache): GatePolicy => ({
    sets: [{ set: fx.set, said: fx.said }],
    freshnessSeconds: 3600,
    scope: DEFAULT_ANCHOR_SCOPE,
    ...(verdicts === undefined ? {} : { verdicts }),
  });
  const full = policy();
  const cached = policy(new GateVerdictCache());
  const now = Math.floor(Date.now() / 1000);
  const steps: Record<string, () => unknown> = {
    parse_bundle: () => parseFinalizedBundle(doc),
    g2_set_said: () => witnessSetSaid(makeWitnessSet(bundle.witnessSet.threshold, bundle.witnessSet.members)),
    g3_seed: () => deriveSeedId(did, did, DEFAULT_ANCHOR_SCOPE),
    party_signature: () => verifyPartySignature(anchor),
    one_receipt_witness_part: () => verifyWitnessReceipt(anchor, bundle.receipts[0]!, memberPin(member)),
    g8_verify_finalized_bundle: () => verifyFinalizedBundle(doc, { witnessSet: fx.set, party }),
    g2_to_g8_full: () => verifyAnchorBundle(doc, did, undefined, full, undefined, undefined, now),
    g2_to_g8_cached: () => verifyAnchorBundle(doc, did, undefined, cached, undefined, undefined, now),
  };
  const out: Record<string, number> = {};
  for (const [name, f] of Object.entries(steps)) {
    for (let i = 0; i < 20; i++) await f();
    const t = performance.now();
    for (let i = 0; i < N; i++) await f();
    out[`${name}_us`] = Math.round(((performance.now() - t) * 1000) / N);
  }
  process.stdout.write(
    JSON.stringify({ bench: 'profile-gate', n: N, node_sha256: process.env.BENCH_NODE_SHA === '1', ...out }, null, 2) + '\n',
  );
} finally {
  await fx.stop();
  rmSync(dir, { recursive: true, force: true });
}
