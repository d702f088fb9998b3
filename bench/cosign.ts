/**
 * add-checkpoint throughput: 64 logs (origins) growing in parallel with real consistency proofs,
 * against a witness child process (role cosign, SQLite; commits durable before each reply) and, as the yardstick,
 * the durable Go reference witness of bench/go-witness (x/mod note + tlog, append + fsync per
 * cosignature), with the same lean load client (bench/_load.ts LoadClient, one keep-alive
 * connection per origin) and the phases interleaved (ours, Go, ours, Go, …). Per phase: requests/s,
 * CPU µs per request of the witness process (all threads, /proc), p50/p99. Then each at half its
 * own peak rate, open loop (latency from each request's due time). Then our witness with an
 * Ed25519 and an ML-DSA-44 cosign key (SPEC §5.3: two lines per response).
 *
 * Ceilings measured in the same run: Ed25519 only = 1 strict verify + 1 sign per request; with
 * ML-DSA-44 = one core's ML-DSA-44 sign rate. Knobs: BENCH_SECONDS (each phase, default 8),
 * BENCH_COSIGN_ROUNDS (interleaved peak pairs, default 2), BENCH_COSIGN_WITNESS_ARGS (more
 * `serve` options for our witness, e.g. `--verify-threads 2`).
 */
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ed25519KeyFromSeed,
  ed25519PrivateKeyToPem,
  ed25519PublicKeyBytes,
  generateEd25519,
  signEd25519,
  verifyEd25519,
} from '../src/crypto/ed25519.ts';
import { generateMlDsa44, signMlDsa44 } from '../src/crypto/ml-dsa.ts';
import { signingKeyToPem } from '../src/crypto/signing-key.ts';
import { checkpointSubtreeMessage } from '../src/note/subtree-message.ts';
import { writeNewKeyFile } from '../src/keys/keyfile.ts';
import { formatCheckpoint } from '../src/note/checkpoint.ts';
import { signNote, SIG_TYPE_ED25519 } from '../src/note/signed-note.ts';
import { ed25519NoteSigner, formatVkey } from '../src/note/vkey.ts';
import { decodeBase64, encodeBase64 } from '../src/encoding/base64.ts';
import { hashLeaf } from '../src/tlog/hash.ts';
import { consistencyProof, memoryHashReader, treeRoot } from '../src/tlog/merkle.ts';
import { percentile, rate } from './_measure.ts';
import { closedLoop, LoadClient, openLoop, spawnWitness, type Lane, type LoopResult } from './_load.ts';
import { buildGoWitness, goMissing, startGoWitness } from './_go-witness.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_COSIGN_ROUNDS ?? 2);
const ORIGINS = 64; // one in-flight request per origin at a time: each grows its own log
// enough steps per origin for 1 s warm-up + ROUNDS peaks + a half-peak phase at up to 4 000/s
const STEPS = Math.ceil(((1 + (ROUNDS + 0.6) * SECONDS) * 4000) / ORIGINS) + 10;
const WITNESS_NAME = 'witness.bench/w';
const dir = mkdtempSync(join(tmpdir(), 'aw-bench-cosign-'));

// One synthetic tree per origin, grown by 1 leaf per step; requests are prebuilt.
const leaves = Array.from({ length: STEPS + 1 }, (_, i) => hashLeaf(Buffer.from(`leaf ${i}`)));
const read = memoryHashReader(leaves);
const logs = Array.from({ length: ORIGINS }, (_, i) => ({ origin: `bench.example/log${i}`, ...generateEd25519() }));
const roots = Array.from({ length: STEPS + 1 }, (_, n) => (n === 0 ? new Uint8Array(32) : treeRoot(n, read)));
const proofs = Array.from({ length: STEPS + 1 }, (_, n) =>
  n <= 1
    ? ''
    : consistencyProof(n - 1, n, read)
        .map((h) => encodeBase64(h) + '\n')
        .join(''),
);
function requestsFor(log: (typeof logs)[number]): Buffer[] {
  const signer = ed25519NoteSigner(log.origin, log.privateKey);
  const out: Buffer[] = [];
  for (let n = 1; n <= STEPS; n++) {
    const note = signNote(formatCheckpoint({ origin: log.origin, size: n, rootHash: roots[n]!, extensions: [] }), [signer]);
    out.push(Buffer.from(`old ${n - 1}\n${proofs[n]!}\n${note}`));
  }
  return out;
}
const vkeys = logs.map((l) => ({ origin: l.origin, vkey: formatVkey(l.origin, SIG_TYPE_ED25519, l.publicKey) }));

writeFileSync(join(dir, 'logs.json'), JSON.stringify({ logs: vkeys.map((l) => ({ origin: l.origin, keys: [l.vkey] })) }));
writeNewKeyFile(join(dir, 'w.pem'), ed25519PrivateKeyToPem(generateEd25519().privateKey));
const cosignSeed = randomBytes(32);
const cosigner = ed25519KeyFromSeed(cosignSeed);
writeNewKeyFile(join(dir, 'c.pem'), ed25519PrivateKeyToPem(cosigner));
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
    WITNESS_NAME,
    '--roles',
    'cosign',
    '--logs',
    join(dir, 'logs.json'),
    ...(process.env.BENCH_COSIGN_WITNESS_ARGS ?? '').split(' ').filter(Boolean),
  ]);

const ms = (v: number): number => Number(v.toFixed(2));

/** POST the first request of origin 0 and check the answer is a cosignature/v1 by our cosign key. */
function checkFirstAnswer(url: URL, body: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: '/add-checkpoint', method: 'POST', agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        const line = text.split('\n').find((l) => l.startsWith(`\u2014 ${WITNESS_NAME} `));
        if (res.statusCode !== 200 || line === undefined) {
          reject(new Error(`${url.host}: ${String(res.statusCode)} ${text}`));
          return;
        }
        const raw = decodeBase64(line.slice(line.lastIndexOf(' ') + 1));
        const t = Buffer.from(raw.subarray(4, 12)).readBigUInt64BE();
        const checkpoint = body.toString().slice(body.indexOf('\n\n') + 2);
        const signed = checkpoint.slice(0, checkpoint.indexOf('\n\n') + 1);
        const msg = Buffer.from(`cosignature/v1\ntime ${t}\n${signed}`);
        if (!verifyEd25519(ed25519PublicKeyBytes(cosigner), msg, raw.subarray(12))) {
          reject(new Error(`${url.host}: bad cosignature`));
          return;
        }
        resolve();
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface Target {
  url: URL;
  cpuMs: () => number;
}

interface Phase {
  requests_per_s: number;
  cpu_us_per_request: number;
  errors: number;
  p50_ms: number;
  p99_ms: number;
}

/** Lanes are per witness (their `next` is that witness's log size); the bodies are shared. */
const queues = logs.map(requestsFor);
const lanesFor = (): Lane[] => queues.map((bodies) => ({ bodies, next: 0 }));

function summary(r: LoopResult, seconds: number, cpuMs: number): Phase {
  return {
    requests_per_s: Math.round(r.count / seconds),
    cpu_us_per_request: Math.round((cpuMs * 1000) / r.count),
    errors: r.errors,
    p50_ms: ms(percentile(r.latencies, 50)),
    p99_ms: ms(percentile(r.latencies, 99)),
  };
}

/** Closed loop: every origin always has one request in flight. */
async function peak(t: Target, lanes: Lane[], client: LoadClient, seconds: number): Promise<Phase> {
  const cpu0 = t.cpuMs();
  const t0 = performance.now();
  const r = await closedLoop(lanes, ORIGINS, seconds, (_w, body) => client.post('/add-checkpoint', body));
  return summary(r, (performance.now() - t0) / 1000, t.cpuMs() - cpu0);
}

/** Open loop at `perSecond` (origin i mod 64; an origin's requests chained, its latency counted from the due time). */
async function openPhase(t: Target, lanes: Lane[], client: LoadClient, perSecond: number, seconds: number) {
  const chains = lanes.map(() => Promise.resolve(0));
  const cpu0 = t.cpuMs();
  const t0 = performance.now();
  const r = await openLoop(lanes, perSecond, seconds, (i, body) => {
    const o = i % ORIGINS;
    const p = chains[o]!.then(() => client.post('/add-checkpoint', body));
    chains[o] = p.catch(() => 0);
    return p;
  });
  const s = summary(r, (performance.now() - t0) / 1000, t.cpuMs() - cpu0);
  return { offered_per_s: Math.round(perSecond), achieved_per_s: r.achieved_per_s, ...s, target_p99_ms: 25 };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

try {
  const l0 = logs[0]!;
  const sampleText = Buffer.from(formatCheckpoint({ origin: l0.origin, size: 1, rootHash: roots[1]!, extensions: [] }));
  const sampleSig = signEd25519(l0.privateKey, sampleText);
  const verify = rate(() => verifyEd25519(ed25519PublicKeyBytes(l0.privateKey), sampleText, sampleSig));
  const sign = rate(() => signEd25519(cosigner, sampleText));
  const sampleMessage = checkpointSubtreeMessage(WITNESS_NAME, sampleText.toString(), 1_700_000_000);
  const mlSign = rate(() => signMlDsa44(mlCosigner.privateKey, sampleMessage));
  const ed25519Ceiling = 1 / (1 / verify.ops_per_s + 1 / sign.ops_per_s);
  // CPU time, not wall time: a ceiling measured while other jobs hold the cores would be too low
  const cryptoUs = verify.cpu_us_per_op + sign.cpu_us_per_op;

  const missing = await goMissing();
  const ours = await startWitness('data-ed', ['c.pem']);
  const oursLanes = lanesFor();
  await checkFirstAnswer(ours.url, queues[0]![0]!);
  oursLanes[0]!.next = 1;
  const oursClient = new LoadClient(ours.url, ORIGINS);
  let go: Awaited<ReturnType<typeof startGoWitness>> | undefined;
  let goClient: LoadClient | undefined;
  const goLanes = lanesFor();
  if (missing === null) {
    const bin = await buildGoWitness(dir);
    go = await startGoWitness(bin, {
      dir,
      name: WITNESS_NAME,
      seedHex: cosignSeed.toString('hex'),
      logs: vkeys,
      state: join(dir, 'go-state'),
    });
    await checkFirstAnswer(go.url, queues[0]![0]!);
    goLanes[0]!.next = 1;
    goClient = new LoadClient(go.url, ORIGINS);
  }
  const oursT = { url: ours.url, cpuMs: ours.cpuMs };
  // warm-up, then interleaved peak pairs
  await peak(oursT, oursLanes, oursClient, 1);
  if (go !== undefined) await peak(go, goLanes, goClient!, 1);
  const oursPeaks: Phase[] = [];
  const goPeaks: Phase[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    oursPeaks.push(await peak(oursT, oursLanes, oursClient, SECONDS));
    if (go !== undefined) goPeaks.push(await peak(go, goLanes, goClient!, SECONDS));
  }
  const oursRate = median(oursPeaks.map((p) => p.requests_per_s));
  const goRate = goPeaks.length === 0 ? undefined : median(goPeaks.map((p) => p.requests_per_s));
  const oursHalf = await openPhase(oursT, oursLanes, oursClient, oursRate / 2, SECONDS);
  const goHalf = go === undefined ? undefined : await openPhase(go, goLanes, goClient!, goRate! / 2, SECONDS);
  oursClient.close();
  goClient?.close();
  await ours.stop();
  await go?.stop();

  // Ed25519 + ML-DSA-44 cosign keys (our witness only: the reference knows no ML-DSA-44)
  const both = await startWitness('data-ml', ['c.pem', 'm.pem']);
  const bothLanes = lanesFor();
  const bothClient = new LoadClient(both.url, ORIGINS);
  const bothT = { url: both.url, cpuMs: both.cpuMs };
  await peak(bothT, bothLanes, bothClient, 1);
  const bothPeak = await peak(bothT, bothLanes, bothClient, SECONDS);
  const bothHalf = await openPhase(bothT, bothLanes, bothClient, bothPeak.requests_per_s / 2, SECONDS);
  bothClient.close();
  await both.stop();

  const pairRatios: number[] = goPeaks.map((g, i) => Number((oursPeaks[i]!.requests_per_s / g.requests_per_s).toFixed(3)));
  const pairCpu = goPeaks.map((g, i) => Number((oursPeaks[i]!.cpu_us_per_request / g.cpu_us_per_request).toFixed(3)));
  process.stdout.write(
    JSON.stringify(
      {
        bench: 'cosign',
        node: process.version,
        origins: ORIGINS,
        seconds_per_phase: SECONDS,
        ceiling: {
          ed25519_verify_per_s: verify.ops_per_s,
          ed25519_sign_per_s: sign.ops_per_s,
          ml_dsa_44_sign_per_s: mlSign.ops_per_s,
          ed25519_verify_cpu_us: verify.cpu_us_per_op,
          ed25519_sign_cpu_us: sign.cpu_us_per_op,
          ml_dsa_44_sign_cpu_us: mlSign.cpu_us_per_op,
        },
        ed25519: {
          cosign_keys: 'ed25519',
          crypto_ceiling_per_s: Math.round(ed25519Ceiling),
          crypto_cpu_us_per_request: Math.round(cryptoUs),
          peak: { ...oursPeaks[oursPeaks.length - 1]!, requests_per_s: oursRate },
          peaks: oursPeaks,
          ratio_to_ceiling: Number((oursRate / ed25519Ceiling).toFixed(3)),
          cpu_efficiency: Number((cryptoUs / median(oursPeaks.map((p) => p.cpu_us_per_request))).toFixed(3)),
          ...(goPeaks.length === 0 ? {} : { ratio_to_go_reference: median(pairRatios) }),
          target_ratio: 0.6,
          half_peak: oursHalf,
        },
        go_reference:
          go === undefined
            ? { skipped: missing }
            : {
                what: 'bench/go-witness: golang.org/x/mod note + tlog, append + fsync per cosignature',
                peaks: goPeaks,
                requests_per_s: goRate,
                half_peak: goHalf,
                ours_over_go_throughput: pairRatios,
                ours_over_go_throughput_median: median(pairRatios),
                ours_over_go_cpu_per_request: pairCpu,
                target_throughput_ratio: 1.5,
              },
        ed25519_ml_dsa_44: {
          cosign_keys: 'ed25519 + ml-dsa-44 (two lines per response; ML-DSA-44 signed on the worker pool)',
          // the ML-DSA-44 sign rate of one core: the bound of a witness that signs every request once
          crypto_ceiling_per_s: mlSign.ops_per_s,
          peak: bothPeak,
          ratio_to_ceiling: Number((bothPeak.requests_per_s / mlSign.ops_per_s).toFixed(3)),
          // the same from the CPU time of one signature (a wall-clock rate measured on busy cores is too low)
          crypto_ceiling_per_s_cpu: Math.round(1e6 / mlSign.cpu_us_per_op),
          ratio_to_cpu_ceiling: Number(((bothPeak.requests_per_s * mlSign.cpu_us_per_op) / 1e6).toFixed(3)),
          target_ratio: 0.7,
          half_peak: bothHalf,
          relative_to_ed25519_only: Number((bothPeak.requests_per_s / oursRate).toFixed(3)),
          // verify + Ed25519 sign + ML-DSA-44 sign, CPU µs, over the witness's CPU µs per request
          cpu_efficiency: Number(((cryptoUs + mlSign.cpu_us_per_op) / bothPeak.cpu_us_per_request).toFixed(3)),
        },
      },
      null,
      2,
    ) + '\n',
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
