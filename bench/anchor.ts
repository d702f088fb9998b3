/**
 * Anchor throughput and latency over loopback, against a witness child process (SQLite, WAL,
 * synchronous=FULL), with keep-alive connections, many seeds and parties, pre-signed anchors.
 * Reports anchors/s, p50/p99 at full load and at half the peak rate, the crypto ceiling measured
 * in the same run (1 strict Ed25519 verify + 1 sign per anchor), and store append + inclusion-proof
 * cost at log sizes 1e3, 1e5, 1e6 (flat is the goal) with RSS at 1e6 entries.
 *
 * BENCH_SECONDS (default 8) sets each load phase; BENCH_LOG_MAX (default 1e6) the largest log size.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ed25519PrivateKeyToPem, ed25519PublicKeyBytes, generateEd25519, signEd25519, verifyEd25519 } from '../src/crypto/ed25519.ts';
import { encodeHex } from '../src/encoding/hex.ts';
import { writeNewKeyFile } from '../src/keys/keyfile.ts';
import { signAnchor } from '../src/client/party.ts';
import { SqliteStore } from '../src/store/sqlite.ts';
import { LogSigner } from '../src/witness/log.ts';
import { cosignMessage, partyMessage } from '../src/anchor/messages.ts';
import { percentile, rate } from './_measure.ts';
import { makeLanes, post, spawnWitness, type Lane } from './_load.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const LOG_MAX = Number(process.env.BENCH_LOG_MAX ?? 1_000_000);
const PARTIES = 20;
const SEEDS_PER_PARTY = 100;
const CONCURRENCY = 64;
const dir = mkdtempSync(join(tmpdir(), 'aw-bench-'));

// ---- parties, registry, pre-signed anchors (each seed gets a run of increasing indices)
const parties = Array.from({ length: PARTIES }, (_, i) => ({ id: `did:keri:EParty${i}`, ...generateEd25519() }));
writeFileSync(
  join(dir, 'registry.json'),
  JSON.stringify({ parties: parties.map((p) => ({ id: p.id, keys: [{ curve: 'ed25519', public_key: encodeHex(p.publicKey) }] })) }),
);
const witness = generateEd25519();
writeNewKeyFile(join(dir, 'w.pem'), ed25519PrivateKeyToPem(witness.privateKey));

const startWitness = () =>
  spawnWitness([
    '--data-dir', join(dir, 'data'), '--key', join(dir, 'w.pem'), '--name', 'witness.bench/w', '--roles', 'anchor', '--registry', join(dir, 'registry.json'),
    '--party-anchors-per-minute', '1000000000', '--party-new-seeds-per-day', '1000000000', '--max-queue', '100000',
  ]);
const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
const postAnchor = (url: URL, body: Buffer): Promise<number> => post(agent, url, '/v1/anchor', body, { 'content-type': 'application/json' });

/** Closed loop: CONCURRENCY workers, each taking the next anchor of its own lanes. */
async function closedLoop(url: URL, lanes: Lane[], seconds: number) {
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, w) => {
      // Worker w owns lanes w, w+C, w+2C, …: no two requests of one seed are ever in flight at once.
      const own = lanes.filter((_, i) => i % CONCURRENCY === w);
      for (let k = 0; performance.now() < end; k++) {
        const lane = own[k % own.length]!;
        const body = lane.bodies[lane.next++];
        if (body === undefined) break;
        const t = performance.now();
        const status = await postAnchor(url, body);
        latencies.push(performance.now() - t);
        if (status !== 200) errors++;
      }
    }),
  );
  return { count: latencies.length, errors, latencies: latencies.sort((a, b) => a - b) };
}

/** Open loop at a fixed rate (requests spread over the lanes). */
async function openLoop(url: URL, lanes: Lane[], perSecond: number, seconds: number) {
  const latencies: number[] = [];
  let errors = 0;
  const total = Math.floor(perSecond * seconds);
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const lane = lanes[i % lanes.length]!;
    const body = lane.bodies[lane.next++];
    if (body === undefined) break;
    const t = performance.now();
    pending.push(
      postAnchor(url, body).then((status) => {
        latencies.push(performance.now() - t);
        if (status !== 200) errors++;
      }),
    );
  }
  await Promise.all(pending);
  return { count: latencies.length, errors, latencies: latencies.sort((a, b) => a - b), achieved_per_s: Math.round(latencies.length / ((performance.now() - start) / 1000)) };
}

function ms(v: number): number {
  return Number(v.toFixed(2));
}

async function logScaling() {
  const store = SqliteStore.open(join(process.env.BENCH_LOG_SCALING_CHILD ?? join(dir, 'scale'), 'witness.db'));
  const signer = new LogSigner('witness.bench/scale', witness.privateKey);
  const entry = Buffer.alloc(520, 0x61);
  const points: Record<string, unknown>[] = [];
  let size = 0;
  for (const target of [1_000, 100_000, 1_000_000].filter((t) => t <= LOG_MAX)) {
    while (size < target) {
      const n = Math.min(20_000, target - size);
      await store.transaction(async (tx) => {
        await tx.appendEntries(Array.from({ length: n }, (_, i) => Buffer.from(entry.map((b, j) => (j < 8 ? ((size + i) >> (j * 4)) & 0xff : b)))));
      });
      size += n;
    }
    // One durable append (entry + checkpoint signature), then an inclusion proof, repeated.
    const appendTimes: number[] = [];
    const proofTimes: number[] = [];
    for (let r = 0; r < 200; r++) {
      let t = performance.now();
      await store.transaction(async (tx) => {
        await tx.appendEntries([randomBytes(520)]);
        await tx.setCheckpoint(signer.sign(await tx.treeHead()));
      });
      appendTimes.push(performance.now() - t);
      size++;
      t = performance.now();
      await store.inclusionProof(Math.floor(Math.random() * size), size);
      proofTimes.push(performance.now() - t);
    }
    appendTimes.sort((a, b) => a - b);
    proofTimes.sort((a, b) => a - b);
    (globalThis as { gc?: () => void }).gc?.(); // RSS of live data, not of garbage not yet collected
    points.push({
      log_size: size,
      append_commit_ms_p50: ms(percentile(appendTimes, 50)),
      append_commit_ms_p99: ms(percentile(appendTimes, 99)),
      inclusion_proof_ms_p50: ms(percentile(proofTimes, 50)),
      inclusion_proof_ms_p99: ms(percentile(proofTimes, 99)),
      rss_mib: Math.round(process.memoryUsage().rss / 2 ** 20),
      heap_used_mib: Math.round(process.memoryUsage().heapUsed / 2 ** 20),
      external_mib: Math.round(process.memoryUsage().external / 2 ** 20),
    });
  }
  await store.close();
  return points;
}

/** The log-scaling phase in a child process of its own, so its RSS is the store's, not the load generator's. */
function logScalingInChild(): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', import.meta.filename], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, BENCH_LOG_SCALING_CHILD: join(dir, 'scale') } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => {
      if (code === 0) resolve(JSON.parse(out));
      else reject(new Error(`log scaling child exited ${code}`));
    });
  });
}

if (process.env.BENCH_LOG_SCALING_CHILD !== undefined) {
  process.stdout.write(JSON.stringify(await logScaling()));
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

try {
  // Crypto ceiling, this run: per anchor 1 strict verify (party) + 1 sign (cosignature).
  const p0 = parties[0]!;
  const sample = signAnchor(p0.privateKey, 'ed25519', { seedId: randomBytes(32), index: 1, head: randomBytes(32), cumulative: 1n, timestamp: 1700000000, witnessSet: { said: 'E', threshold: 1 } });
  const pm = partyMessage(sample);
  const cm = cosignMessage(sample);
  const verify = rate(() => verifyEd25519(ed25519PublicKeyBytes(p0.privateKey), pm, sample.sigParty.signature));
  const sign = rate(() => signEd25519(witness.privateKey, cm));
  const ceiling = 1 / (1 / verify.ops_per_s + 1 / sign.ops_per_s);

  const perSeed = Math.ceil((SECONDS * 2 * 6000) / (PARTIES * SEEDS_PER_PARTY)) + 2;
  const lanes = makeLanes(parties, SEEDS_PER_PARTY, perSeed);
  const w = await startWitness();
  await closedLoop(w.url, lanes, 1); // warm-up
  const peak = await closedLoop(w.url, lanes, SECONDS);
  const peakRate = peak.count / SECONDS;
  const half = await openLoop(w.url, lanes, Math.max(1, Math.floor(peakRate / 2)), SECONDS);
  await w.stop();
  const scaling = await logScalingInChild();
  const result = {
    bench: 'anchor',
    node: process.version,
    concurrency: CONCURRENCY,
    parties: PARTIES,
    seeds: PARTIES * SEEDS_PER_PARTY,
    crypto_ceiling_per_s: Math.round(ceiling),
    ed25519_verify_per_s: verify.ops_per_s,
    ed25519_sign_per_s: sign.ops_per_s,
    peak: { anchors_per_s: Math.round(peakRate), errors: peak.errors, p50_ms: ms(percentile(peak.latencies, 50)), p99_ms: ms(percentile(peak.latencies, 99)) },
    ratio_to_ceiling: Number((peakRate / ceiling).toFixed(3)),
    target_ratio: 0.6,
    half_peak: { offered_per_s: Math.floor(peakRate / 2), achieved_per_s: half.achieved_per_s, errors: half.errors, p50_ms: ms(percentile(half.latencies, 50)), p99_ms: ms(percentile(half.latencies, 99)), target_p99_ms: 25 },
    log_scaling: scaling,
  };
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
} finally {
  agent.destroy();
  rmSync(dir, { recursive: true, force: true });
}
