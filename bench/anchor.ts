/**
 * Anchor throughput and latency over loopback, against a witness child process (SQLite, WAL,
 * every commit synced before its replies), with keep-alive connections, many seeds and parties, pre-signed anchors.
 * Reports anchors/s, p50/p99 at full load and at half the peak rate, the crypto ceiling measured
 * in the same run (1 strict Ed25519 verify + 1 sign per anchor), and store append + inclusion-proof
 * cost at log sizes 1e3, 1e5, 1e6 (flat is the goal) with RSS at 1e6 entries.
 *
 * The load comes from bench/_load.ts's LoadClient (raw keep-alive sockets, ~50 µs of CPU per
 * request, so the generator takes little from the cores it shares with the witness), at peak from
 * BENCH_CONCURRENCY (default 256) closed-loop clients spread over 127.0.0.1–4 (64 connections per
 * client IP is the witness's limit). Half-peak latency counts from each request's scheduled send
 * time. `cpu_per_anchor_us` says where the CPU went at peak: the witness (all threads, and split
 * by kind of thread in `witness_threads`), the load generator, and the crypto ceiling's share;
 * `half_peak.event_loop_cpu_share` is how busy the witness's event loop was at half the peak, and
 * `group_commit` (both phases, from the witness's /metrics) how many requests shared a commit and
 * how long each batch's transaction held the event loop. `witness_loop` (both phases) is the
 * witness's event-loop delay (monitorEventLoopDelay p50/p99/max) and GC pauses by kind, from
 * bench/_loop-probe.ts loaded into the child (BENCH_LOOP_TRACE=1 adds the long-turn tracer);
 * `half_peak.generator` the open-loop generator's own send lateness and event-loop delay.
 * The ceiling is the best of six one-second rounds; `crypto_ceiling_median_per_s` is their median.
 *
 * `kel_registry` is the same peak load against a second witness whose parties' keys come from KELs
 * (`--kel-source dir:`, SPEC §3.5, one icp per party), in the same run: the key state is derived
 * once per reload and cached, so the anchor path must not be slower than with the file registry
 * (`ratio_to_file_registry` ≈ 1).
 * `witnessed` (SPEC §4.1): the same peak on a fresh witness whose own log is cosigned by two peer
 * witnesses (child processes, role cosign, quorum 2, default --log-witness-interval 1s) — the
 * submitter's cost on anchor throughput, as `peak_ratio_to_unwitnessed` — and then, the load
 * stopped, the anchor → quorum-cosigned lag: one anchor at a time, the time from sending it to
 * `GET /log/checkpoint` serving a checkpoint that includes it (p50/max of BENCH_LAG_SAMPLES, 10).
 *
 * BENCH_SECONDS (default 8) sets each load phase; BENCH_LOG_MAX (default 1e6) the largest log size.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ed25519PrivateKeyToPem, ed25519PublicKeyBytes, generateEd25519 } from '../src/crypto/ed25519.ts';
import { encodeHex } from '../src/encoding/hex.ts';
import { writeNewKeyFile } from '../src/keys/keyfile.ts';
import { SqliteStore } from '../src/store/sqlite/store.ts';
import { TransparencyLog } from '../src/log/log.ts';
import { LogSigner } from '../src/log/signer.ts';
import { ed25519Signer, generateSigner, KelBuilder } from '../src/keri/build.ts';
import { percentile } from './_measure.ts';
import { SIG_TYPE_COSIGNATURE_V1, SIG_TYPE_ED25519 } from '../src/note/signed-note.ts';
import { formatVkey } from '../src/note/vkey.ts';
import { parseCheckpoint } from '../src/note/checkpoint.ts';
import { parseNote } from '../src/note/signed-note.ts';
import {
  anchorCryptoRounds,
  anchorServeArgs,
  batchTotals,
  closedLoop,
  groupCommit,
  LoadClient,
  makeLanes,
  openLoop,
  spawnWitness,
  threadCpuPerOpUs,
  type Lane,
} from './_load.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const LOG_MAX = Number(process.env.BENCH_LOG_MAX ?? 1_000_000);
const PARTIES = 20;
const SEEDS_PER_PARTY = 100;
/** Closed-loop clients at peak, spread over loopback source addresses (the witness allows 64 connections per client IP). */
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 256);
const SOURCES = ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4'];
/** Connections of the open-loop (half-peak) phase. */
const OPEN_CONNECTIONS = 64;
const dir = mkdtempSync(join(tmpdir(), 'aw-bench-'));

// ---- parties, registry, pre-signed anchors (each seed gets a run of increasing indices)
const parties = Array.from({ length: PARTIES }, (_, i) => ({ id: `did:keri:EParty${i}`, ...generateEd25519() }));
writeFileSync(
  join(dir, 'registry.json'),
  JSON.stringify({ parties: parties.map((p) => ({ id: p.id, keys: [{ curve: 'ed25519', public_key: encodeHex(p.publicKey) }] })) }),
);
const witness = generateEd25519();
writeNewKeyFile(join(dir, 'w.pem'), ed25519PrivateKeyToPem(witness.privateKey));

// The same number of parties with KELs (one icp each, its key current), for the kel_registry phase.
const kelParties = Array.from({ length: PARTIES }, () => {
  const k = generateEd25519();
  const kel = KelBuilder.incept({ signers: [ed25519Signer(k.privateKey)], next: [generateSigner()] });
  return { id: `did:keri:${kel.prefix}`, kel, ...k };
});
mkdirSync(join(dir, 'kels'));
for (const p of kelParties) writeFileSync(join(dir, 'kels', `${p.kel.prefix}.kel.json`), JSON.stringify(p.kel.document()));
writeFileSync(join(dir, 'kel-registry.json'), JSON.stringify({ parties: kelParties.map((p) => ({ id: p.id })) }));

const LAG_SAMPLES = Number(process.env.BENCH_LAG_SAMPLES ?? 10);
const ORIGIN = 'witness.bench/w/anchors';

const startWitness = (data = 'data', extra: string[] = [], probe = false) =>
  spawnWitness(
    [...extra, ...anchorServeArgs(dir, join(dir, data), extra.includes('--kel-source') ? 'kel-registry.json' : 'registry.json')],
    undefined,
    probe,
  );
/** Two peer witnesses (role cosign) that know this witness's log, and the --log-witnesses file naming them. */
async function startPeers(): Promise<{ file: string; stop: () => Promise<void> }> {
  const logVkey = formatVkey(ORIGIN, SIG_TYPE_ED25519, ed25519PublicKeyBytes(witness.privateKey));
  writeFileSync(join(dir, 'peer-logs.json'), JSON.stringify({ logs: [{ origin: ORIGIN, keys: [logVkey] }] }));
  const peers = await Promise.all(
    [1, 2].map(async (i) => {
      const name = `peer${i}.bench`;
      const key = generateEd25519();
      const cosign = generateEd25519();
      writeNewKeyFile(join(dir, `peer${i}.pem`), ed25519PrivateKeyToPem(key.privateKey));
      writeNewKeyFile(join(dir, `peer${i}-cosign.pem`), ed25519PrivateKeyToPem(cosign.privateKey));
      const child = await spawnWitness([
        '--data-dir',
        join(dir, `peer${i}`),
        '--key',
        join(dir, `peer${i}.pem`),
        '--cosign-key',
        join(dir, `peer${i}-cosign.pem`),
        '--name',
        name,
        '--roles',
        'cosign',
        '--logs',
        join(dir, 'peer-logs.json'),
      ]);
      return { child, vkey: formatVkey(name, SIG_TYPE_COSIGNATURE_V1, cosign.publicKey) };
    }),
  );
  const file = join(dir, 'log-witnesses.json');
  writeFileSync(file, JSON.stringify({ quorum: 2, witnesses: peers.map((p) => ({ url: p.child.url.toString(), vkeys: [p.vkey] })) }));
  return {
    file,
    stop: async () => {
      await Promise.all(peers.map((p) => p.child.stop()));
    },
  };
}

async function witnessedSize(url: URL): Promise<number> {
  const text = await (await fetch(new URL('/log/checkpoint', url))).text();
  return parseCheckpoint(parseNote(text).text).size;
}

/** Anchor → quorum-cosigned lag, one anchor at a time (the load stopped). */
async function quorumLag(url: URL, lanes: Lane[]): Promise<number[]> {
  const lags: number[] = [];
  let k = 0;
  while (lags.length < LAG_SAMPLES) {
    const lane = lanes[k++ % lanes.length]!;
    const body = lane.bodies[lane.next++];
    if (body === undefined) continue;
    const t = performance.now();
    const res = await fetch(new URL('/v1/anchor', url), { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    const reply = (await res.json()) as { inclusion?: { tree_size: number } };
    if (res.status !== 200 || reply.inclusion === undefined) continue;
    while ((await witnessedSize(url)) < reply.inclusion.tree_size) await new Promise((r) => setTimeout(r, 5));
    lags.push(performance.now() - t);
  }
  return lags.sort((a, b) => a - b);
}

/** Closed loop: CONCURRENCY workers, each on a connection of its own. */
async function peakLoop(url: URL, lanes: Lane[], seconds: number) {
  const client = new LoadClient(url, CONCURRENCY, SOURCES);
  try {
    return await closedLoop(lanes, CONCURRENCY, seconds, (_w, body) => client.post('/v1/anchor', body, 'application/json'));
  } finally {
    client.close();
  }
}

/** Open loop at a fixed rate over OPEN_CONNECTIONS connections. */
async function rateLoop(url: URL, lanes: Lane[], perSecond: number, seconds: number) {
  const client = new LoadClient(url, OPEN_CONNECTIONS, SOURCES);
  try {
    return await openLoop(lanes, perSecond, seconds, (_i, body) => client.post('/v1/anchor', body, 'application/json'));
  } finally {
    client.close();
  }
}

function ms(v: number): number {
  return Number(v.toFixed(2));
}

async function logScaling() {
  const store = SqliteStore.open(join(process.env.BENCH_LOG_SCALING_CHILD ?? join(dir, 'scale'), 'witness.db'));
  const log = new TransparencyLog(store, new LogSigner('witness.bench/scale', witness.privateKey));
  const entry = Buffer.alloc(520, 0x61);
  const points: Record<string, unknown>[] = [];
  let size = 0;
  for (const target of [1_000, 100_000, 1_000_000].filter((t) => t <= LOG_MAX)) {
    while (size < target) {
      const n = Math.min(20_000, target - size);
      await log.transaction((_tx, batch) => {
        for (let i = 0; i < n; i++) batch.append(Buffer.from(entry.map((b, j) => (j < 8 ? ((size + i) >> (j * 4)) & 0xff : b))));
        return Promise.resolve();
      });
      size += n;
    }
    // One durable append (entry + checkpoint signature), then an inclusion proof, repeated.
    const appendTimes: number[] = [];
    const proofTimes: number[] = [];
    for (let r = 0; r < 200; r++) {
      let t = performance.now();
      await log.transaction((_tx, batch) => {
        batch.append(randomBytes(520));
        return Promise.resolve(); // the log signs and stores the checkpoint over the new head
      });
      appendTimes.push(performance.now() - t);
      size++;
      t = performance.now();
      await log.inclusionProof(Math.floor(Math.random() * size), size);
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
    const child = spawn(process.execPath, ['--expose-gc', import.meta.filename], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, BENCH_LOG_SCALING_CHILD: join(dir, 'scale') },
    });
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
  // Crypto ceiling, this run: per anchor 1 strict verify (party) + 1 sign (cosignature), on one
  // thread. The rates climb while the JIT warms the strict checks and wander with the machine, so
  // each is the best of three one-second rounds, measured before and after the load phases: the
  // highest ceiling seen, which makes the ratio a conservative one.
  const cryptoRound = anchorCryptoRounds(parties[0]!.privateKey, witness.privateKey);
  const crypto = { verify: [] as number[], sign: [] as number[], verifyCpuUs: [] as number[], signCpuUs: [] as number[] };
  const measureCrypto = () => {
    for (let round = 0; round < 3; round++) {
      const { verify: v, sign: s } = cryptoRound();
      crypto.verify.push(v.ops_per_s);
      crypto.sign.push(s.ops_per_s);
      crypto.verifyCpuUs.push(v.cpu_us_per_op);
      crypto.signCpuUs.push(s.cpu_us_per_op);
    }
  };
  measureCrypto();

  const perSeed = Math.ceil((SECONDS * 2 * 6000) / (PARTIES * SEEDS_PER_PARTY)) + 4;
  const lanes = makeLanes(parties, SEEDS_PER_PARTY, perSeed);
  const w = await startWitness('data', [], true);
  await peakLoop(w.url, lanes, 1); // warm-up
  await w.loopReport(); // the probe's figures start here
  const batches0 = await batchTotals(w.url);
  const cpu0 = { witness: w.cpuMs(), threads: w.threadCpuMs(), generator: process.cpuUsage() };
  const peak = await peakLoop(w.url, lanes, SECONDS);
  const gen = process.cpuUsage(cpu0.generator);
  const batches1 = await batchTotals(w.url);
  const peakThreads = threadCpuPerOpUs(cpu0.threads, w.threadCpuMs(), peak.count);
  // CPU per anchor at peak (all threads): where the machine's cores went.
  const cpuPerAnchorUs = {
    witness: Math.round(((w.cpuMs() - cpu0.witness) * 1000) / peak.count),
    load_generator: Math.round((gen.user + gen.system) / peak.count),
  };
  const peakRate = peak.count / SECONDS;
  const peakLoopReport = await w.loopReport();
  const halfThreads0 = w.threadCpuMs();
  const halfStart = performance.now();
  const half = await rateLoop(w.url, lanes, Math.max(1, Math.floor(peakRate / 2)), SECONDS);
  const halfThreads1 = w.threadCpuMs();
  const batches2 = await batchTotals(w.url);
  // Share of the half-peak phase's wall time the event loop spent on the CPU (time blocked in
  // fsync is not CPU, so a busy loop can read below 1): near 1, every pause becomes a queue.
  const halfEventLoopCpuShare = (halfThreads1.event_loop - halfThreads0.event_loop) / (performance.now() - halfStart);
  const halfLoopReport = await w.loopReport();
  await w.stop();
  // The same peak against a witness whose keys come from KELs (dir: source).
  const kw = await startWitness('data-kel', ['--kel-source', `dir:${join(dir, 'kels')}`]);
  const kelLanes = makeLanes(kelParties, SEEDS_PER_PARTY, perSeed);
  await peakLoop(kw.url, kelLanes, 1); // warm-up
  const kelPeak = await peakLoop(kw.url, kelLanes, SECONDS);
  await kw.stop();

  // The same peak on a fresh store (the lanes start again: new seeds there), with two peer witnesses.
  for (const l of lanes) l.next = 0;
  const peers = await startPeers();
  let witnessed;
  try {
    const ww = await startWitness('data-witnessed', ['--log-witnesses', peers.file]);
    try {
      await peakLoop(ww.url, lanes, 1); // warm-up
      const wpeak = await peakLoop(ww.url, lanes, SECONDS);
      const wRate = wpeak.count / SECONDS;
      const lags = await quorumLag(ww.url, lanes);
      witnessed = {
        peers: 2,
        quorum: 2,
        interval_s: 1,
        peak: {
          anchors_per_s: Math.round(wRate),
          errors: wpeak.errors,
          p50_ms: ms(percentile(wpeak.latencies, 50)),
          p99_ms: ms(percentile(wpeak.latencies, 99)),
        },
        peak_ratio_to_unwitnessed: Number((wRate / peakRate).toFixed(3)),
        anchor_to_quorum_ms: { samples: lags.length, p50: ms(percentile(lags, 50)), max: ms(lags.at(-1) ?? 0) },
      };
    } finally {
      await ww.stop();
    }
  } finally {
    await peers.stop();
  }
  measureCrypto();
  const best = (xs: number[]) => Math.max(...xs);
  const median = (xs: number[]) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    );
  const combined = (v: number, s: number) => 1 / (1 / v + 1 / s);
  const ceiling = combined(best(crypto.verify), best(crypto.sign));
  const scaling = await logScalingInChild();
  const result = {
    bench: 'anchor',
    node: process.version,
    concurrency: CONCURRENCY,
    parties: PARTIES,
    seeds: PARTIES * SEEDS_PER_PARTY,
    crypto_ceiling_per_s: Math.round(ceiling),
    ed25519_verify_per_s: best(crypto.verify),
    ed25519_sign_per_s: best(crypto.sign),
    // The same six rounds' median: how far the best round (the ceiling used for the ratio) sits
    // above what the crypto sustains on this machine.
    crypto_ceiling_median_per_s: Math.round(combined(median(crypto.verify), median(crypto.sign))),
    peak: {
      anchors_per_s: Math.round(peakRate),
      errors: peak.errors,
      p50_ms: ms(percentile(peak.latencies, 50)),
      p99_ms: ms(percentile(peak.latencies, 99)),
      group_commit: groupCommit(batches0, batches1),
      witness_loop: peakLoopReport,
    },
    ratio_to_ceiling: Number((peakRate / ceiling).toFixed(3)),
    kel_registry: {
      anchors_per_s: Math.round(kelPeak.count / SECONDS),
      errors: kelPeak.errors,
      p50_ms: ms(percentile(kelPeak.latencies, 50)),
      p99_ms: ms(percentile(kelPeak.latencies, 99)),
      ratio_to_file_registry: Number((kelPeak.count / SECONDS / peakRate).toFixed(3)),
    },
    target_ratio: 0.6,
    cores: availableParallelism(),
    // The crypto share of the witness's own CPU per anchor, and the rate its measured CPU cost would
    // allow with every core to itself (no load generator beside it).
    // `witness_threads.workers` is the verify/sign pool (plus the WAL checkpointer): the crypto as
    // the witness actually pays for it, to set beside `crypto` (the ceiling's best round).
    cpu_per_anchor_us: { ...cpuPerAnchorUs, witness_threads: peakThreads, crypto: Math.round(1e6 / ceiling) },
    // issue 28's CPU efficiency: the signatures' CPU µs (verify + sign, least of the six rounds,
    // CPU time so that other jobs on the cores do not inflate it) over the witness's CPU µs per anchor
    crypto_cpu_us_per_anchor: Number((Math.min(...crypto.verifyCpuUs) + Math.min(...crypto.signCpuUs)).toFixed(1)),
    cpu_efficiency: Number(((Math.min(...crypto.verifyCpuUs) + Math.min(...crypto.signCpuUs)) / cpuPerAnchorUs.witness).toFixed(3)),
    target_cpu_efficiency: 0.35,
    witness_cpu_bound_per_s: Math.round((availableParallelism() * 1e6) / cpuPerAnchorUs.witness),
    half_peak: {
      offered_per_s: Math.floor(peakRate / 2),
      achieved_per_s: half.achieved_per_s,
      generator_behind_ms_max: half.generator_behind_ms_max,
      errors: half.errors,
      p50_ms: ms(percentile(half.latencies, 50)),
      p99_ms: ms(percentile(half.latencies, 99)),
      target_p99_ms: 25,
      event_loop_cpu_share: Number(halfEventLoopCpuShare.toFixed(2)),
      group_commit: groupCommit(batches1, batches2),
      cpu_per_anchor_us: threadCpuPerOpUs(halfThreads0, halfThreads1, half.count),
      // the witness's event-loop delay and GC pauses (bench/_loop-probe.ts), and the load
      // generator's own lateness: where a tail comes from
      witness_loop: halfLoopReport,
      generator: half.generator,
    },
    witnessed,
    log_scaling: scaling,
  };
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
