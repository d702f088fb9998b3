// The verifier SDK (`anchor-witness/verify`, src/verify) in Node, over real witness output: the
// shared scenario (test/verify/scenario.ts — genuine responses verify; one flipped byte in the
// cosignature, anchor, party signature, checkpoint, inclusion proof or tlog-proof is refused with
// its code; wrong or missing pins; small-order keys; duplicity proofs; checkpoints, notes and
// tlog-proofs; a finalized bundle; upstream's freshness ladder) under BOTH crypto backends
// (WebCrypto and node:crypto), the client SDK's verifiers being these very functions, and the entry
// point imports no node: module — it also runs with no Buffer at all.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { build } from 'esbuild';
import * as client from '../../src/client/index.ts';
import * as verify from '../../src/verify/index.ts';
import { makeVerifyFixtures, type VerifyFixtures } from '../helpers/verify-fixtures.ts';
import { bothBackends } from '../helpers/crypto-backends.ts';
import { runScenario } from './scenario.ts';

const ROOT = join(import.meta.dirname, '..', '..');
let fx: VerifyFixtures;
before(async () => {
  fx = await makeVerifyFixtures();
});
after(async () => {
  await fx.cleanup();
});

bothBackends('the scenario passes in Node', async () => {
  const outcomes = await runScenario(verify, fx);
  assert.ok(outcomes.length > 25);
  for (const o of outcomes) assert.equal(o.got, o.want, o.name);
});

void test("the client SDK has no verifier of its own: its verifiers are the verify entry's functions", () => {
  const shared = [
    'VerificationError',
    'verifyAnchorResponse',
    'verifyReceipt',
    'verifyWitnessReceipt',
    'verifyPartyPin',
    'verifyDuplicityProof',
    'verifyFinalized',
    'verifyFinalizedBundle',
    'parseFinalizedBundle',
    'parseWitnessSet',
    'witnessSetSaid',
    'makeWitnessSet',
    'verifyCheckpoint',
    'verifyCosignedCheckpoint',
    'verifyNote',
    'verifyTlogProof',
    'noteKeyFromVkey',
    'setCryptoBackend',
  ] as const;
  for (const name of shared) assert.equal(client[name], verify[name], name);
});

void test('the verify entry imports no node: module and no server code (esbuild metafile)', async () => {
  const r = await build({
    entryPoints: [join(ROOT, 'src/verify/index.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    metafile: true,
    logLevel: 'silent',
  });
  const inputs = Object.keys(r.metafile.inputs);
  const nodeImports = Object.values(r.metafile.inputs).flatMap((i) =>
    i.imports.filter((x) => x.path.startsWith('node:') || x.external === true).map((x) => x.path),
  );
  assert.deepEqual(nodeImports, []);
  const allowed =
    /^src\/(verify|encoding|errors\.ts|anchor\/(codec|duplicity-pair|errors|messages|types)\.ts|crypto\/(ed25519-strict|p256-strict|webcrypto|errors)\.ts|note\/(checkpoint|signed-note|subtree-message|timestamped-signature|tlog-proof|errors)\.ts|tlog\/proof-walk\.ts)/;
  assert.deepEqual(
    inputs.filter((p) => !allowed.test(p)),
    [],
  );
});

void test('the verify entry works with no Buffer at all (a child Node with globalThis.Buffer deleted)', async () => {
  const script = `delete globalThis.Buffer;
const v = await import(${JSON.stringify(join(ROOT, 'src/verify/index.ts'))});
const { runScenario } = await import(${JSON.stringify(join(ROOT, 'test/verify/scenario.ts'))});
const out = await runScenario(v, JSON.parse(process.argv[1]));
process.stdout.write(JSON.stringify({ buffer: typeof Buffer, out }));`;
  const input = JSON.stringify({
    witness: fx.witness,
    edParty: fx.edParty,
    p256Party: fx.p256Party,
    bundle: fx.bundle,
    said: fx.said,
    checkpoint: fx.checkpoint,
  });
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', script, input], { maxBuffer: 8 << 20 }, (err, so, se) => {
      if (err === null) resolve(so);
      else reject(new Error(`${err.message}\n${se}`));
    });
  });
  const { buffer, out } = JSON.parse(stdout) as { buffer: string; out: { name: string; got: string; want: string }[] };
  assert.equal(buffer, 'undefined');
  for (const o of out) assert.equal(o.got, o.want, o.name);
});
