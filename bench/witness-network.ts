/**
 * The witness-network capacity profile (issue 28 §4): a witness that imports a generated
 * `logs/v0` list of 40 000 logs (Ed25519 and ML-DSA-44 log keys mixed; qpd 216 each, i.e. 100
 * requests/s over the list, as the witness-network's "100qps-40klogs" list asks) and then serves
 * add-checkpoint with Poisson arrivals spread uniformly over the logs, open loop (latency counted
 * from each request's due time), over keep-alive loopback, SQLite (every commit synced before its replies).
 *
 * Reported: the first start (it waits for the list's first read, i.e. importing every origin), a
 * restart with the origins already imported, RSS after the restart and after the load, errors by
 * status, p50/p99/max, CPU per request (the figure that does not depend on what else the machine
 * runs: 10^6 / cpu_us_per_request is the rate one core sustains), and the store's growth
 * (measured, and per hour at this rate). Then, when PostgreSQL binaries are found (test/helpers/pg-server.ts), the same against a
 * throwaway PostgreSQL server.
 *
 * Knobs: BENCH_WN_SECONDS (load phase, default 60), BENCH_WN_FULL=1 (the documented 10-minute
 * profile: 600 s), BENCH_WN_LOGS (default 40 000), BENCH_WN_RATE (default 100/s),
 * BENCH_WN_MLDSA_EVERY (every n-th log has an ML-DSA-44 key, default 8), BENCH_WN_PG=0 (skip
 * PostgreSQL), BENCH_WN_SQLITE=0 (skip SQLite).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ed25519PrivateKeyToPem, generateEd25519 } from '../src/crypto/ed25519.ts';
import { generateMlDsa44, mlDsa44Supported } from '../src/crypto/ml-dsa.ts';
import { encodeBase64 } from '../src/encoding/base64.ts';
import { writeNewKeyFile } from '../src/keys/keyfile.ts';
import { formatCheckpoint } from '../src/note/checkpoint.ts';
import { mlDsa44Cosigner } from '../src/note/cosigner.ts';
import { signNote, SIG_TYPE_ED25519, SIG_TYPE_SUBTREE_V1, type NoteSigner } from '../src/note/signed-note.ts';
import { ed25519NoteSigner, formatVkey } from '../src/note/vkey.ts';
import { hashLeaf } from '../src/tlog/hash.ts';
import { consistencyProof, memoryHashReader, treeRoot } from '../src/tlog/merkle.ts';
import { pgBinDir, startPgServer } from '../test/helpers/pg-server.ts';
import { LoadClient, spawnWitness } from './_load.ts';
import { percentile } from './_measure.ts';

const SECONDS = process.env.BENCH_WN_FULL === '1' ? 600 : Number(process.env.BENCH_WN_SECONDS ?? 60);
const LOGS = Number(process.env.BENCH_WN_LOGS ?? 40_000);
const RATE = Number(process.env.BENCH_WN_RATE ?? 100);
const MLDSA_EVERY = mlDsa44Supported() ? Number(process.env.BENCH_WN_MLDSA_EVERY ?? 8) : 0;
const QPD = Math.round((RATE * 86_400) / LOGS);
const CONNECTIONS = 32;
const dir = mkdtempSync(join(tmpdir(), 'aw-bench-wn-'));

// ---- the list: LOGS logs, every MLDSA_EVERY-th with an ML-DSA-44 key (subtree/v1, T = 0). The
// key pairs come from a small pool (generating 40 000 takes minutes on a loaded machine); each
// log's vkey is still its own (the key name is the origin, so the key ID differs), and the
// witness checks and caches keys by vkey text, so every log costs it one key check as with
// distinct keys.
const t0 = performance.now();
const edPool = Array.from({ length: 256 }, () => generateEd25519());
const mlPool = MLDSA_EVERY > 0 ? Array.from({ length: 16 }, () => generateMlDsa44()) : [];
// A log's note signer is made when the schedule first needs it (making one checks the key: 40 000
// of them took minutes on a loaded machine, and at 100/s for 60 s only about 6 000 logs are hit).
const logs = Array.from({ length: LOGS }, (_, i) => {
  const origin = `wn.bench.example/log${i}`;
  if (MLDSA_EVERY > 0 && i % MLDSA_EVERY === MLDSA_EVERY - 1) {
    const k = mlPool[i % mlPool.length]!;
    return {
      origin,
      vkey: formatVkey(origin, SIG_TYPE_SUBTREE_V1, k.publicKey),
      signer: (): NoteSigner => mlDsa44Cosigner(origin, k.privateKey).noteSigner(0n),
    };
  }
  const k = edPool[i % edPool.length]!;
  return {
    origin,
    vkey: formatVkey(origin, SIG_TYPE_ED25519, k.publicKey),
    signer: (): NoteSigner => ed25519NoteSigner(origin, k.privateKey),
  };
});
const listFile = join(dir, 'log-list');
writeFileSync(listFile, `logs/v0\n${logs.map((l) => `vkey ${l.vkey}\norigin ${l.origin}\nqpd ${QPD}\n`).join('')}`);
const keygenS = (performance.now() - t0) / 1000;

// ---- the schedule: Poisson arrivals at RATE, each to a uniformly chosen log, growing it by one leaf
const MAX_SIZE = 64;
const leaves = Array.from({ length: MAX_SIZE + 1 }, (_, i) => hashLeaf(Buffer.from(`leaf ${i}`)));
const read = memoryHashReader(leaves);
const roots = Array.from({ length: MAX_SIZE + 1 }, (_, n) => (n === 0 ? new Uint8Array(32) : treeRoot(n, read)));
const proofs = Array.from({ length: MAX_SIZE + 1 }, (_, n) =>
  n <= 1
    ? ''
    : consistencyProof(n - 1, n, read)
        .map((h) => encodeBase64(h) + '\n')
        .join(''),
);

interface Req {
  due: number; // ms from the start
  log: number;
  body: Buffer;
}
function schedule(): Req[] {
  const sizes = new Uint16Array(LOGS);
  const signers = new Map<number, NoteSigner>();
  const out: Req[] = [];
  for (let t = 0; ;) {
    t += (-Math.log(1 - Math.random()) * 1000) / RATE;
    if (t >= SECONDS * 1000) break;
    const i = Math.floor(Math.random() * LOGS);
    const n = ++sizes[i]!;
    if (n > MAX_SIZE) continue;
    const l = logs[i]!;
    let signer = signers.get(i);
    if (signer === undefined) signers.set(i, (signer = l.signer()));
    const note = signNote(formatCheckpoint({ origin: l.origin, size: n, rootHash: roots[n]!, extensions: [] }), [signer]);
    out.push({ due: t, log: i, body: Buffer.from(`old ${n - 1}\n${proofs[n]!}\n${note}`) });
  }
  return out;
}

const rssMiB = (pid: number): { rss: number; hwm: number } => {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? NaN);
  return { rss: Math.round(kb('VmRSS') / 1024), hwm: Math.round(kb('VmHWM') / 1024) };
};
const dirBytes = (d: string): number => readdirSync(d).reduce((a, f) => a + statSync(join(d, f)).size, 0);
const ms = (v: number) => Number(v.toFixed(2));

writeNewKeyFile(join(dir, 'w.pem'), ed25519PrivateKeyToPem(generateEd25519().privateKey));
writeNewKeyFile(join(dir, 'c.pem'), ed25519PrivateKeyToPem(generateEd25519().privateKey));

/**
 * `probe`, sampled every 500 ms during the load: what the store's connections are doing (PostgreSQL:
 * `state/wait_event` of each of the witness's backends), as shares of the samples.
 */
async function profile(dataDir: string, store: string[], storeBytes: () => Promise<number>, probe?: () => Promise<string[]>) {
  const args = [
    '--data-dir',
    join(dir, dataDir),
    ...store,
    '--key',
    join(dir, 'w.pem'),
    '--cosign-key',
    join(dir, 'c.pem'),
    '--name',
    'witness.bench/wn',
    '--roles',
    'cosign',
    '--logs-list',
    listFile,
  ];
  let t = performance.now();
  let w = await spawnWitness(args);
  const firstStartS = (performance.now() - t) / 1000;
  await w.stop();
  const bytesStopped0 = await storeBytes();
  t = performance.now();
  w = await spawnWitness(args);
  const restartS = (performance.now() - t) / 1000;
  const pid = w.pid;
  const rssStart = rssMiB(pid);
  const bytes0 = await storeBytes();
  const reqs = schedule();

  const client = new LoadClient(w.url, CONNECTIONS);
  const chains = new Map<number, Promise<unknown>>();
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let behind = 0;
  const cpu0 = w.cpuMs();
  const start = performance.now();
  const pending: Promise<void>[] = [];
  const probed = new Map<string, number>();
  let probes = 0;
  const probing = { on: probe !== undefined };
  const prober = (async () => {
    while (probe !== undefined && probing.on) {
      await new Promise((res) => setTimeout(res, 500));
      probes++;
      for (const k of await probe().catch(() => ['probe_failed'])) probed.set(k, (probed.get(k) ?? 0) + 1);
    }
  })();
  for (const r of reqs) {
    const wait = start + r.due - performance.now();
    if (wait > 1) await new Promise((res) => setTimeout(res, wait));
    else behind = Math.max(behind, -wait);
    const prev = chains.get(r.log) ?? Promise.resolve();
    const p = prev
      .then(() => client.post('/add-checkpoint', r.body))
      .then(
        (status) => {
          latencies.push(performance.now() - start - r.due);
          statuses[status] = (statuses[status] ?? 0) + 1;
        },
        () => {
          statuses.socket_error = (statuses.socket_error ?? 0) + 1;
        },
      );
    chains.set(r.log, p);
    pending.push(p);
  }
  await Promise.all(pending);
  const elapsedS = (performance.now() - start) / 1000;
  probing.on = false;
  await prober;
  const cpuMs = w.cpuMs() - cpu0;
  const rssEnd = rssMiB(pid);
  client.close();
  const bytes1 = await storeBytes();
  await w.stop();
  const bytesStopped = await storeBytes();
  latencies.sort((a, b) => a - b);
  const ok = statuses['200'] ?? 0;
  return {
    first_start_s: Number(firstStartS.toFixed(2)),
    restart_s: Number(restartS.toFixed(2)),
    requests: reqs.length,
    achieved_per_s: Number((latencies.length / elapsedS).toFixed(1)),
    statuses,
    errors: reqs.length - ok,
    p50_ms: ms(percentile(latencies, 50)),
    p99_ms: ms(percentile(latencies, 99)),
    max_ms: ms(latencies[latencies.length - 1] ?? NaN),
    target_p99_ms: 50,
    generator_behind_ms_max: ms(behind),
    cpu_us_per_request: Math.round((cpuMs * 1000) / reqs.length),
    cpu_share_of_one_core: Number((cpuMs / 1000 / elapsedS).toFixed(3)),
    rss_mib_after_restart: rssStart.rss,
    rss_mib_after_load: rssEnd.rss,
    rss_mib_peak: rssEnd.hwm,
    store_bytes_stopped_before_load: bytesStopped0,
    store_bytes_after_restart: bytes0,
    store_bytes_after_load: bytes1,
    store_bytes_after_stop: bytesStopped,
    // between the two stopped states (SQLite: the WAL checkpointed into the database at close)
    store_growth_bytes_per_request: Math.round((bytesStopped - bytesStopped0) / ok),
    store_growth_mib_per_hour: Number(((((bytesStopped - bytesStopped0) / elapsedS) * 3600) / 2 ** 20).toFixed(1)),
    ...(probe === undefined
      ? {}
      : {
          // mean number of the witness's backends in each state per sample
          store_connections: Object.fromEntries(
            [...probed.entries()].sort((a, b) => b[1] - a[1]).map(([k, n]) => [k, Number((n / Math.max(1, probes)).toFixed(2))]),
          ),
        }),
  };
}

try {
  const sqlite =
    process.env.BENCH_WN_SQLITE === '0'
      ? { skipped: 'BENCH_WN_SQLITE=0' }
      : await profile('data-sqlite', [], () => Promise.resolve(dirBytes(join(dir, 'data-sqlite'))));
  let postgres: unknown = { skipped: 'PostgreSQL binaries not found (install Debian postgresql or set PG_BIN)' };
  if (process.env.BENCH_WN_PG === '0') postgres = { skipped: 'BENCH_WN_PG=0' };
  else if (pgBinDir() !== undefined) {
    const server = await startPgServer();
    try {
      const url = await server.createDatabase('wn');
      const c = new pg.Client(url);
      await c.connect();
      try {
        postgres = await profile(
          'data-pg',
          ['--store', url],
          async () => Number((await c.query<{ n: string }>('select pg_database_size(current_database()) as n')).rows[0]!.n),
          async () =>
            (
              await c.query<{ s: string }>(
                "select coalesce(state, '?') || '/' || coalesce(wait_event, 'cpu') || ' ' || left(regexp_replace(query, '\\s+', ' ', 'g'), 40) as s from pg_stat_activity where application_name = 'anchor-witness' and pid <> pg_backend_pid()",
              )
            ).rows.map((r) => r.s),
        );
      } finally {
        await c.end();
      }
    } finally {
      await server.stop();
    }
  }
  process.stdout.write(
    JSON.stringify(
      {
        bench: 'witness-network',
        node: process.version,
        logs: LOGS,
        ml_dsa_44_logs: MLDSA_EVERY > 0 ? Math.floor(LOGS / MLDSA_EVERY) : 0,
        qpd_per_log: QPD,
        offered_per_s: RATE,
        seconds: SECONDS,
        list_bytes: statSync(listFile).size,
        list_keygen_s: Number(keygenS.toFixed(1)),
        sqlite,
        postgres,
      },
      null,
      2,
    ) + '\n',
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
