/**
 * add-checkpoint throughput: many logs (origins) growing in parallel with real consistency proofs,
 * against a witness child process (role cosign, SQLite, synchronous=FULL), keep-alive, loopback,
 * twice: with one Ed25519 cosign key, then with an Ed25519 and an ML-DSA-44 key (SPEC §5.3: two
 * lines per response, the ML-DSA-44 one signed on the worker pool). The crypto ceilings are
 * measured in the same run: Ed25519 only = per request 1 strict Ed25519 verify (the log's
 * signature) + 1 sign; with ML-DSA-44 = the ML-DSA-44 sign rate of one core (the dominant cost,
 * ≈ 20× an Ed25519 signature). Reports requests/s, p50/p99 at full load and p99 at half the peak
 * rate, per configuration.
 */
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ed25519PrivateKeyToPem, ed25519PublicKeyBytes, generateEd25519, signEd25519, verifyEd25519 } from '../src/crypto/ed25519.ts';
import { generateMlDsa44, signMlDsa44 } from '../src/crypto/ml-dsa.ts';
import { signingKeyToPem } from '../src/crypto/signing-key.ts';
import { checkpointSubtreeMessage } from '../src/note/subtree-message.ts';
import { writeNewKeyFile } from '../src/keys/keyfile.ts';
import { formatCheckpoint } from '../src/note/checkpoint.ts';
import { signNote, SIG_TYPE_ED25519 } from '../src/note/signed-note.ts';
import { ed25519NoteSigner, formatVkey } from '../src/note/vkey.ts';
import { encodeBase64 } from '../src/encoding/base64.ts';
import { hashLeaf } from '../src/tlog/hash.ts';
import { consistencyProof, memoryHashReader, treeRoot } from '../src/tlog/merkle.ts';
import { percentile, rate } from './_measure.ts';
import { post, spawnWitness } from './_load.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ORIGINS = 64; // one in-flight request per origin at a time: each grows its own log
const STEPS = Math.ceil((SECONDS * 2.5 * 4000) / ORIGINS) + 10;
const dir = mkdtempSync(join(tmpdir(), 'aw-bench-cosign-'));

// One synthetic tree per origin, grown by 1 leaf per step; requests are prebuilt.
const leaves = Array.from({ length: STEPS + 1 }, (_, i) => hashLeaf(Buffer.from(`leaf ${i}`)));
const read = memoryHashReader(leaves);
const logs = Array.from({ length: ORIGINS }, (_, i) => ({ origin: `bench.example/log${i}`, ...generateEd25519() }));
function requestsFor(log: (typeof logs)[number]): Buffer[] {
  const signer = ed25519NoteSigner(log.origin, log.privateKey);
  const out: Buffer[] = [];
  for (let n = 1; n <= STEPS; n++) {
    const note = signNote(formatCheckpoint({ origin: log.origin, size: n, rootHash: treeRoot(n, read), extensions: [] }), [signer]);
    const proof = n === 1 ? [] : consistencyProof(n - 1, n, read);
    out.push(Buffer.from(`old ${n - 1}\n${proof.map((h) => encodeBase64(h) + '\n').join('')}\n${note}`));
  }
  return out;
}

writeFileSync(
  join(dir, 'logs.json'),
  JSON.stringify({ logs: logs.map((l) => ({ origin: l.origin, keys: [formatVkey(l.origin, SIG_TYPE_ED25519, l.publicKey)] })) }),
);
writeNewKeyFile(join(dir, 'w.pem'), ed25519PrivateKeyToPem(generateEd25519().privateKey));
const cosigner = generateEd25519();
writeNewKeyFile(join(dir, 'c.pem'), ed25519PrivateKeyToPem(cosigner.privateKey));
const mlCosigner = generateMlDsa44();
writeNewKeyFile(join(dir, 'm.pem'), signingKeyToPem({ algorithm: 'ml-dsa-44', ...mlCosigner }));

const startWitness = (dataDir: string, cosignKeys: string[]) =>
  spawnWitness([
    '--data-dir',
    join(dir, dataDir),
    '--key',
    join(dir, 'w.pem'),
    ...cosignKeys.flatMap((k) => ['--cosign-key', join(dir, k)]),
    '--name',
    'witness.bench/w',
    '--roles',
    'cosign',
    '--logs',
    join(dir, 'logs.json'),
  ]);
const agent = new http.Agent({ keepAlive: true, maxSockets: ORIGINS });
const postCheckpoint = (url: URL, body: Buffer): Promise<number> => post(agent, url, '/add-checkpoint', body);

const ms = (v: number): number => Number(v.toFixed(2));

try {
  const l0 = logs[0]!;
  const sampleText = Buffer.from(formatCheckpoint({ origin: l0.origin, size: 1, rootHash: treeRoot(1, read), extensions: [] }));
  const sampleSig = signEd25519(l0.privateKey, sampleText);
  const verify = rate(() => verifyEd25519(ed25519PublicKeyBytes(l0.privateKey), sampleText, sampleSig));
  const sign = rate(() => signEd25519(cosigner.privateKey, sampleText));
  const sampleMessage = checkpointSubtreeMessage('witness.bench/w', sampleText.toString(), 1_700_000_000);
  const mlSign = rate(() => signMlDsa44(mlCosigner.privateKey, sampleMessage));
  const ed25519Ceiling = 1 / (1 / verify.ops_per_s + 1 / sign.ops_per_s);

  const queues = logs.map(requestsFor);
  const load = async (w: { url: URL }) => {
    const next = queues.map(() => 0);
    let latencies: number[] = [];
    let errors = 0;
    // Full load: every origin always has one request in flight (paced: `pace` requests/s overall).
    const run = async (seconds: number, pace?: number) => {
      latencies = [];
      errors = 0;
      const end = performance.now() + seconds * 1000;
      const perOriginGap = pace === undefined ? 0 : (ORIGINS * 1000) / pace;
      await Promise.all(
        queues.map(async (q, o) => {
          let due = performance.now() + Math.random() * perOriginGap;
          while (performance.now() < end && next[o]! < q.length) {
            if (perOriginGap > 0) {
              const wait = due - performance.now();
              if (wait > 0) await new Promise((r) => setTimeout(r, wait));
              due += perOriginGap;
            }
            const t = performance.now();
            const status = await postCheckpoint(w.url, q[next[o]!]!);
            latencies.push(performance.now() - t);
            if (status === 200) next[o]!++;
            else errors++;
          }
        }),
      );
      return { lat: latencies.sort((a, b) => a - b), errors };
    };
    await run(1);
    const peak = await run(SECONDS);
    const peakRate = peak.lat.length / SECONDS;
    const half = await run(SECONDS, peakRate / 2);
    return {
      peak: {
        requests_per_s: Math.round(peakRate),
        errors: peak.errors,
        p50_ms: ms(percentile(peak.lat, 50)),
        p99_ms: ms(percentile(peak.lat, 99)),
      },
      peakRate,
      half_peak: {
        offered_per_s: Math.round(peakRate / 2),
        achieved_per_s: Math.round(half.lat.length / SECONDS),
        errors: half.errors,
        p50_ms: ms(percentile(half.lat, 50)),
        p99_ms: ms(percentile(half.lat, 99)),
      },
    };
  };

  let w = await startWitness('data-ed', ['c.pem']);
  const ed = await load(w);
  await w.stop();
  w = await startWitness('data-ml', ['c.pem', 'm.pem']);
  const both = await load(w);
  await w.stop();
  process.stdout.write(
    JSON.stringify(
      {
        bench: 'cosign',
        node: process.version,
        origins: ORIGINS,
        ceiling: {
          ed25519_verify_per_s: verify.ops_per_s,
          ed25519_sign_per_s: sign.ops_per_s,
          ml_dsa_44_sign_per_s: mlSign.ops_per_s,
        },
        ed25519: {
          cosign_keys: 'ed25519',
          crypto_ceiling_per_s: Math.round(ed25519Ceiling),
          peak: ed.peak,
          ratio_to_ceiling: Number((ed.peakRate / ed25519Ceiling).toFixed(3)),
          target_ratio: 0.6,
          half_peak: ed.half_peak,
        },
        ed25519_ml_dsa_44: {
          cosign_keys: 'ed25519 + ml-dsa-44 (two lines per response; ML-DSA-44 signed on the worker pool)',
          // the ML-DSA-44 sign rate of one core: the bound of a witness that signs every request once
          crypto_ceiling_per_s: mlSign.ops_per_s,
          peak: both.peak,
          ratio_to_ceiling: Number((both.peakRate / mlSign.ops_per_s).toFixed(3)),
          target_ratio: 0.6,
          half_peak: both.half_peak,
          relative_to_ed25519_only: Number((both.peakRate / ed.peakRate).toFixed(3)),
        },
      },
      null,
      2,
    ) + '\n',
  );
} finally {
  agent.destroy();
  rmSync(dir, { recursive: true, force: true });
}
