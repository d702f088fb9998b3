/**
 * Log size (issue 28 §5): the witness's own log grown to 1 M entries (10 M with
 * BENCH_LOGSIZE_FULL=1; BENCH_LOGSIZE_SIZES=comma-separated sizes overrides both) by appending
 * through the store directly (TransparencyLog on SqliteStore, 20 000 entries per transaction, as
 * the witness's batches do), then at each size the witness is started on that data directory and
 * measured through HTTP: start-up time (spawn to listening), RSS, `POST /v1/anchor` (append +
 * group commit + the inclusion proof in each 200) closed loop with 16 clients, and
 * `GET /v1/anchor/:seed` (the latest anchor with an inclusion proof at the current size) one at a
 * time. The first size (1 000) is the baseline: `*_vs_first` ratios ≈ 1 mean flat.
 * BENCH_SECONDS (default 8) sets the anchor phase.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ed25519PrivateKeyToPem, generateEd25519 } from '../src/crypto/ed25519.ts';
import { encodeHex } from '../src/encoding/hex.ts';
import { writeNewKeyFile } from '../src/keys/keyfile.ts';
import { TransparencyLog } from '../src/log/log.ts';
import { LogSigner } from '../src/log/signer.ts';
import { SqliteStore } from '../src/store/sqlite/store.ts';
import { closedLoop, LoadClient, makeLanes, spawnWitness } from './_load.ts';
import { percentile } from './_measure.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const SIZES = (process.env.BENCH_LOGSIZE_SIZES ?? (process.env.BENCH_LOGSIZE_FULL === '1' ? '1000,1000000,10000000' : '1000,1000000'))
  .split(',')
  .map(Number);
const CONCURRENCY = 16;
const dir = mkdtempSync(join(tmpdir(), 'aw-bench-logsize-'));
const dataDir = join(dir, 'data');
const parties = Array.from({ length: 20 }, (_, i) => ({ id: `did:keri:EParty${i}`, ...generateEd25519() }));
writeFileSync(
  join(dir, 'registry.json'),
  JSON.stringify({ parties: parties.map((p) => ({ id: p.id, keys: [{ curve: 'ed25519', public_key: encodeHex(p.publicKey) }] })) }),
);
const witness = generateEd25519();
writeNewKeyFile(join(dir, 'w.pem'), ed25519PrivateKeyToPem(witness.privateKey));
const NAME = 'witness.bench/w';

const ms = (v: number) => Number(v.toFixed(2));
const rssMiB = (pid: number) => {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/^VmRSS:\s+(\d+)/m.exec(s)?.[1] ?? NaN) / 1024);
};

/** Grow the log to `target` entries through the store; resolves with its size. */
async function grow(from: number, target: number): Promise<number> {
  const store = SqliteStore.open(join(dataDir, 'witness.db'));
  const log = new TransparencyLog(store, new LogSigner(`${NAME}/anchors`, witness.privateKey));
  const entry = Buffer.alloc(520, 0x61);
  let size = from;
  while (size < target) {
    const n = Math.min(20_000, target - size);
    await log.transaction((_tx, batch) => {
      for (let i = 0; i < n; i++) {
        const e = Buffer.from(entry);
        e.writeUIntBE(size + i, 0, 6);
        batch.append(e);
      }
      return Promise.resolve();
    });
    size += n;
  }
  await store.close();
  return size;
}

function get(url: URL, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: url.hostname, port: url.port, path, agent: keepAlive }, (res) => {
        res.resume();
        res.on('end', () => {
          resolve(res.statusCode ?? 0);
        });
      })
      .on('error', reject);
  });
}
const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });

try {
  const points: Record<string, number>[] = [];
  let size = 0;
  for (const target of SIZES) {
    let t = performance.now();
    // the witness appends its own entries while serving: grow past what it added
    size = await grow(size, Math.max(target, size));
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
    const proofTimes: number[] = [];
    const seeds = lanes.filter((l) => l.next > 0).map((l) => l.seed!);
    for (let i = 0; i < 400; i++) {
      const tp = performance.now();
      const status = await get(w.url, `/v1/anchor/${seeds[i % seeds.length]!}`);
      if (status !== 200) throw new Error(`GET /v1/anchor/:seed answered ${status}`);
      proofTimes.push(performance.now() - tp);
    }
    proofTimes.sort((a, b) => a - b);
    const rssEnd = rssMiB(w.pid);
    await w.stop();
    size += r.count + 100; // upper bound of what the warm-up and the phase appended
    points.push({
      log_size: target,
      build_s: ms(buildS),
      start_s: ms(startS),
      rss_mib_after_start: rssStart,
      rss_mib_after_load: rssEnd,
      anchors_per_s: Math.round(r.count / elapsed),
      anchor_errors: r.errors,
      anchor_p50_ms: ms(percentile(r.latencies, 50)),
      anchor_p99_ms: ms(percentile(r.latencies, 99)),
      cpu_us_per_anchor: Math.round(cpuUs),
      latest_with_proof_p50_ms: ms(percentile(proofTimes, 50)),
      latest_with_proof_p99_ms: ms(percentile(proofTimes, 99)),
      db_bytes: statSync(join(dataDir, 'witness.db')).size,
    });
  }
  const first = points[0]!;
  const last = points[points.length - 1]!;
  process.stdout.write(
    JSON.stringify(
      {
        bench: 'log-size',
        node: process.version,
        points,
        largest_vs_first: {
          log_size: last.log_size,
          anchors_per_s: Number((last.anchors_per_s! / first.anchors_per_s!).toFixed(2)),
          cpu_us_per_anchor: Number((last.cpu_us_per_anchor! / first.cpu_us_per_anchor!).toFixed(2)),
          latest_with_proof_p50: Number((last.latest_with_proof_p50_ms! / first.latest_with_proof_p50_ms!).toFixed(2)),
          start_s: Number((last.start_s! / first.start_s!).toFixed(2)),
        },
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
