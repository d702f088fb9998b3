/**
 * Log size (issue 28 §5): the witness's own log at 10³ and 10⁶ entries (10³, 10⁶ and 10⁷ with
 * BENCH_LOGSIZE_FULL=1; BENCH_LOGSIZE_SIZES=comma-separated sizes overrides both), each size built
 * straight into the store file by bench/_build-log.ts (the rows TransparencyLog would leave, in big
 * fixture-only transactions: minutes for 10⁷ instead of hours), then the witness is started on that
 * data directory and measured through HTTP: start-up time (spawn to listening) and the CPU it took,
 * RSS, `POST /v1/anchor` (append + group commit + the inclusion proof in each 200) closed loop with
 * 16 clients, `GET /v1/anchor/:seed` (the latest anchor with an inclusion proof at the current
 * size) one at a time, and the proof of an old entry as a client builds it: every tile
 * `inclusionProofTiles` names for a random leaf, fetched from `/log/tile/…` one after another. The
 * first size is the baseline: `*_vs_first` ratios ≈ 1 mean flat; `last_vs_previous` compares the
 * two largest (10⁷ ÷ 10⁶ in the full profile). BENCH_SECONDS (default 8) sets the anchor phase;
 * BENCH_LOGSIZE_DIR the parent of the fixture directory (default the OS temp dir; about 700 MB per
 * 10⁶ entries, removed at the end).
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ed25519PrivateKeyToPem, generateEd25519 } from '../src/crypto/ed25519.ts';
import { encodeHex } from '../src/encoding/hex.ts';
import { writeNewKeyFile } from '../src/keys/keyfile.ts';
import { LogSigner } from '../src/log/signer.ts';
import { inclusionProofTiles, tilePath } from '../src/tlog/tiles.ts';
import { buildLog } from './_build-log.ts';
import { closedLoop, LoadClient, makeLanes, spawnWitness } from './_load.ts';
import { percentile } from './_measure.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const SIZES = (process.env.BENCH_LOGSIZE_SIZES ?? (process.env.BENCH_LOGSIZE_FULL === '1' ? '1000,1000000,10000000' : '1000,1000000'))
  .split(',')
  .map(Number);
const CONCURRENCY = 16;
const dir = mkdtempSync(join(process.env.BENCH_LOGSIZE_DIR ?? tmpdir(), 'aw-bench-logsize-'));
const dataDir = join(dir, 'data');
const dbPath = join(dataDir, 'witness.db');
const parties = Array.from({ length: 20 }, (_, i) => ({ id: `did:keri:EParty${i}`, ...generateEd25519() }));
writeFileSync(
  join(dir, 'registry.json'),
  JSON.stringify({ parties: parties.map((p) => ({ id: p.id, keys: [{ curve: 'ed25519', public_key: encodeHex(p.publicKey) }] })) }),
);
const witness = generateEd25519();
writeNewKeyFile(join(dir, 'w.pem'), ed25519PrivateKeyToPem(witness.privateKey));
const NAME = 'witness.bench/w';

const ms = (v: number) => Number(v.toFixed(2));
const ratio = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || b === 0 ? null : Number((a / b).toFixed(2));
const statusKiB = (pid: number, field: string) => {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? NaN);
};
const rssMiB = (pid: number) => Math.round(statusKiB(pid, 'VmRSS') / 1024);
const peakRssMiB = (pid: number) => Math.round(statusKiB(pid, 'VmHWM') / 1024);

/** Entry i: 520 bytes (about a cosigned anchor message), its index in the first 6. */
const TEMPLATE = Buffer.alloc(520, 0x61);
function entryAt(i: number): Uint8Array {
  const e = Buffer.from(TEMPLATE);
  e.writeUIntBE(i, 0, 6);
  return e;
}

/** Grow the stored log to `target` entries (the witness stopped); returns the sizes before and after. */
function grow(target: number): { from: number; size: number } {
  let t = performance.now();
  let last: number | undefined;
  return buildLog({
    path: dbPath,
    signer: new LogSigner(`${NAME}/anchors`, witness.privateKey),
    target,
    entry: entryAt,
    progress: (size, from) => {
      last ??= from;
      if (size - last < 1_000_000 && size < target) return;
      const now = performance.now();
      process.stderr.write(`log-size: built ${size} of ${target} (${Math.round(((size - last) * 1000) / (now - t))} entries/s)\n`);
      last = size;
      t = now;
    },
  });
}

function get(url: URL, path: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: url.hostname, port: url.port, path, agent: keepAlive }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) });
        });
      })
      .on('error', reject);
  });
}
const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** Sequential GETs of `paths` (each must answer 200); the times of `rounds` of them, sorted. */
async function timedGets(url: URL, rounds: number, paths: (i: number) => string[]): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const ps = paths(i);
    const t = performance.now();
    for (const path of ps) {
      const r = await get(url, path);
      if (r.status !== 200) throw new Error(`GET ${path} answered ${r.status}`);
    }
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b);
}

/** A deterministic spread of leaf indices (no Math.random: the same leaves in every run). */
const spread = (i: number, size: number) => Math.floor(((i * 0.6180339887498949) % 1) * size);

try {
  const points: Record<string, number>[] = [];
  for (const target of SIZES) {
    const load0 = loadavg()[0]!;
    let t = performance.now();
    // the witness appends its own entries while serving: grow from wherever it left the log
    const built = grow(target);
    const buildS = (performance.now() - t) / 1000;
    t = performance.now();
    const w = await spawnWitness([
      '--data-dir',
      dataDir,
      '--key',
      join(dir, 'w.pem'),
      '--name',
      NAME,
      '--roles',
      'anchor',
      '--registry',
      join(dir, 'registry.json'),
      '--party-anchors-per-minute',
      '1000000000',
      '--party-new-seeds-per-day',
      '1000000000',
    ]);
    const startS = (performance.now() - t) / 1000;
    const startCpuMs = w.cpuMs();
    const rssStart = rssMiB(w.pid);
    const lanes = makeLanes(parties, 5, Math.ceil((SECONDS * 4000) / 100) + 20);
    const client = new LoadClient(w.url, CONCURRENCY);
    await closedLoop(lanes, CONCURRENCY, 1, (_w, body) => client.post('/v1/anchor', body, 'application/json'));
    const cpu0 = w.cpuMs();
    t = performance.now();
    const r = await closedLoop(lanes, CONCURRENCY, SECONDS, (_w, body) => client.post('/v1/anchor', body, 'application/json'));
    const elapsed = (performance.now() - t) / 1000;
    const cpuUs = ((w.cpuMs() - cpu0) * 1000) / r.count;
    client.close();
    const seeds = lanes.filter((l) => l.next > 0).map((l) => l.seed!);
    let cpuGets = w.cpuMs();
    const latest = await timedGets(w.url, 400, (i) => [`/v1/anchor/${seeds[i % seeds.length]!}`]);
    const latestCpuUs = ((w.cpuMs() - cpuGets) * 1000) / 400;
    // An old entry's proof as a client builds it from tiles, at the size the witness now signs.
    const note = (await get(w.url, '/log/checkpoint')).body.toString('utf8');
    const size = Number(note.split('\n')[1]);
    cpuGets = w.cpuMs();
    const old = await timedGets(w.url, 200, (i) => inclusionProofTiles(spread(i + 1, size), size).map((tile) => `/log/${tilePath(tile)}`));
    const tilesFetched = Array.from({ length: 200 }, (_, i) => inclusionProofTiles(spread(i + 1, size), size).length).reduce(
      (a, b) => a + b,
    );
    const tileCpuUs = ((w.cpuMs() - cpuGets) * 1000) / tilesFetched;
    const rssEnd = rssMiB(w.pid);
    const rssPeak = peakRssMiB(w.pid);
    await w.stop();
    points.push({
      log_size: target,
      log_size_built_from: built.from,
      build_s: ms(buildS),
      build_entries_per_s: built.size > built.from ? Math.round((built.size - built.from) / buildS) : 0,
      start_s: ms(startS),
      start_cpu_ms: Math.round(startCpuMs),
      rss_mib_after_start: rssStart,
      rss_mib_after_load: rssEnd,
      rss_mib_peak: rssPeak,
      anchors_per_s: Math.round(r.count / elapsed),
      anchor_errors: r.errors,
      anchor_p50_ms: ms(percentile(r.latencies, 50)),
      anchor_p99_ms: ms(percentile(r.latencies, 99)),
      cpu_us_per_anchor: Math.round(cpuUs),
      latest_with_proof_p50_ms: ms(percentile(latest, 50)),
      latest_with_proof_p99_ms: ms(percentile(latest, 99)),
      latest_with_proof_cpu_us: Math.round(latestCpuUs),
      old_entry_proof_tiles: Number((tilesFetched / 200).toFixed(1)),
      old_entry_proof_p50_ms: ms(percentile(old, 50)),
      old_entry_proof_p99_ms: ms(percentile(old, 99)),
      cpu_us_per_tile: Math.round(tileCpuUs),
      db_bytes: statSync(dbPath).size,
      load_avg_1m_before: Number(load0.toFixed(1)),
      load_avg_1m_after: Number(loadavg()[0]!.toFixed(1)),
    });
    process.stderr.write(`log-size: ${JSON.stringify(points[points.length - 1])}\n`);
  }
  const compare = (a: Record<string, number>, b: Record<string, number>) => ({
    log_sizes: `${a.log_size} / ${b.log_size}`,
    anchors_per_s: ratio(a.anchors_per_s, b.anchors_per_s),
    cpu_us_per_anchor: ratio(a.cpu_us_per_anchor, b.cpu_us_per_anchor),
    latest_with_proof_p50: ratio(a.latest_with_proof_p50_ms, b.latest_with_proof_p50_ms),
    latest_with_proof_cpu_us: ratio(a.latest_with_proof_cpu_us, b.latest_with_proof_cpu_us),
    old_entry_proof_p50: ratio(a.old_entry_proof_p50_ms, b.old_entry_proof_p50_ms),
    cpu_us_per_tile: ratio(a.cpu_us_per_tile, b.cpu_us_per_tile),
    start_s: ratio(a.start_s, b.start_s),
    start_cpu_ms: ratio(a.start_cpu_ms, b.start_cpu_ms),
    rss_after_load: ratio(a.rss_mib_after_load, b.rss_mib_after_load),
  });
  const first = points[0]!;
  const last = points[points.length - 1]!;
  const previous = points[points.length - 2] ?? first;
  process.stdout.write(
    JSON.stringify(
      {
        bench: 'log-size',
        node: process.version,
        points,
        largest_vs_first: compare(last, first),
        last_vs_previous: compare(last, previous),
        target_rss_mib: 300,
      },
      null,
      2,
    ) + '\n',
  );
} finally {
  keepAlive.destroy();
  rmSync(dir, { recursive: true, force: true });
}
