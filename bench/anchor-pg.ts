/**
 * Scale-out benchmark (`npm run bench anchor-pg`, or `node bench/anchor-pg.ts`): anchor throughput
 * and latency of 1, 2 and 3 witness replicas on one PostgreSQL database against one SQLite node,
 * in the same run on the same machine. Child processes, keep-alive loopback HTTP, pre-signed
 * anchors over many seeds and parties (as bench/anchor.ts); the load is spread round-robin over
 * the replicas (a load balancer's job).
 *
 * Pass 1: closed loop (CONCURRENCY workers) per configuration → peak anchors/s, p50/p99.
 * Pass 2: open loop at ONE common rate (half the lowest peak of pass 1) per configuration →
 * p50/p99 at equal offered load, counted from each request's scheduled send time. Every run starts on an
 * empty store (a fresh database / data dir).
 *
 * PostgreSQL: a throwaway server (test/helpers/pg-server.ts: initdb + pg_ctl on loopback, default
 * settings, fsync and synchronous_commit on). Without the binaries the benchmark prints a skip.
 * BENCH_SECONDS (default 6) sets each phase.
 */
import http from 'node:http';
import { availableParallelism } from 'node:os';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ed25519PrivateKeyToPem, generateEd25519 } from '../src/crypto/ed25519.ts';
import { encodeHex } from '../src/encoding/hex.ts';
import { writeNewKeyFile } from '../src/keys/keyfile.ts';
import { pgBinDir, startPgServer, type PgServer } from '../test/helpers/pg-server.ts';
import { startReplica, type Replica } from '../test/helpers/pg-replicas.ts';
import { anchorServeArgs, closedLoop, makeLanes, openLoop, post, type Lane } from './_load.ts';
import { percentile } from './_measure.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const PARTIES = 20;
const SEEDS_PER_PARTY = 100;
const CONCURRENCY = 64;

if (pgBinDir() === undefined) {
  process.stdout.write(
    JSON.stringify({ bench: 'anchor-pg', skipped: 'PostgreSQL binaries not found (install Debian postgresql or set PG_BIN)' }, null, 2) +
      '\n',
  );
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), 'aw-bench-pg-'));
const parties = Array.from({ length: PARTIES }, (_, i) => ({ id: `did:keri:EParty${i}`, ...generateEd25519() }));
writeFileSync(
  join(dir, 'registry.json'),
  JSON.stringify({ parties: parties.map((p) => ({ id: p.id, keys: [{ curve: 'ed25519', public_key: encodeHex(p.publicKey) }] })) }),
);
writeNewKeyFile(join(dir, 'w.pem'), ed25519PrivateKeyToPem(generateEd25519().privateKey));

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
const postAnchor = (url: URL, body: Buffer): Promise<number> =>
  post(agent, url, '/v1/anchor', body, { 'content-type': 'application/json' });

function summary(latencies: number[]) {
  latencies.sort((a, b) => a - b);
  return { p50_ms: Number(percentile(latencies, 50).toFixed(2)), p99_ms: Number(percentile(latencies, 99).toFixed(2)) };
}

/** Closed loop: worker w talks to replica w mod n. */
async function peakLoop(urls: URL[], lanes: Lane[], seconds: number) {
  const r = await closedLoop(lanes, CONCURRENCY, seconds, (w, body) => postAnchor(urls[w % urls.length]!, body));
  return { anchors_per_s: Math.round(r.count / seconds), errors: r.errors, ...summary(r.latencies) };
}

/** Open loop at a fixed rate, requests round-robin over the replicas. */
async function rateLoop(urls: URL[], lanes: Lane[], perSecond: number, seconds: number) {
  const r = await openLoop(lanes, perSecond, seconds, (i, body) => postAnchor(urls[i % urls.length]!, body));
  return { offered_per_s: perSecond, achieved_per_s: r.achieved_per_s, errors: r.errors, ...summary(r.latencies) };
}

interface Config {
  store: 'sqlite' | 'postgres';
  replicas: number;
}
const CONFIGS: Config[] = [
  { store: 'sqlite', replicas: 1 },
  { store: 'postgres', replicas: 1 },
  { store: 'postgres', replicas: 2 },
  { store: 'postgres', replicas: 3 },
];

let runs = 0;
async function startConfig(server: PgServer, c: Config): Promise<Replica[]> {
  const run = ++runs;
  const store = c.store === 'postgres' ? ['--store', await server.createDatabase('bench')] : [];
  return Promise.all(
    Array.from({ length: c.replicas }, (_, i) =>
      startReplica([...anchorServeArgs(dir, join(dir, `run${run}-r${i}`)), '--log-level', 'warn', ...store], { stderr: 'inherit' }),
    ),
  );
}

const label = (c: Config) => (c.store === 'sqlite' ? 'sqlite, 1 node' : `postgres, ${c.replicas} replica${c.replicas > 1 ? 's' : ''}`);

let server: PgServer | undefined;
try {
  server = await startPgServer();
  const meta = new pg.Client(server.url());
  await meta.connect();
  const version = (await meta.query<{ v: string }>('SELECT version() AS v')).rows[0]!.v;
  await meta.end();

  const perSeed = Math.ceil((SECONDS * 2 * 5000) / (PARTIES * SEEDS_PER_PARTY)) + 2;
  const lanes = makeLanes(parties, SEEDS_PER_PARTY, perSeed);
  const reset = () => {
    for (const l of lanes) l.next = 0;
  };

  const peaks: Record<string, unknown>[] = [];
  for (const c of CONFIGS) {
    const rs = await startConfig(server, c);
    const urls = rs.map((r) => new URL(r.url));
    reset();
    await peakLoop(urls, lanes, 1); // warm-up (JIT, connections, pools)
    const peak = await peakLoop(urls, lanes, SECONDS);
    for (const r of rs) await r.stop();
    peaks.push({ config: label(c), ...peak });
    process.stderr.write(`# ${label(c)}: ${JSON.stringify(peak)}\n`);
  }
  const rate = Math.max(1, Math.floor(Math.min(...peaks.map((p) => p.anchors_per_s as number)) / 2));
  const atRate: Record<string, unknown>[] = [];
  for (const c of CONFIGS) {
    const rs = await startConfig(server, c);
    const urls = rs.map((r) => new URL(r.url));
    reset();
    await peakLoop(urls, lanes, 1);
    const r = await rateLoop(urls, lanes, rate, SECONDS);
    for (const x of rs) await x.stop();
    atRate.push({ config: label(c), ...r });
    process.stderr.write(`# ${label(c)} at ${rate}/s: ${JSON.stringify(r)}\n`);
  }
  process.stdout.write(
    JSON.stringify(
      {
        bench: 'anchor-pg',
        node: process.version,
        cpus: availableParallelism(),
        postgres: version,
        seconds: SECONDS,
        concurrency: CONCURRENCY,
        seeds: PARTIES * SEEDS_PER_PARTY,
        note: 'all replicas, PostgreSQL and the load generator share this machine',
        peak: peaks,
        common_rate_per_s: rate,
        at_common_rate: atRate,
      },
      null,
      2,
    ) + '\n',
  );
} finally {
  agent.destroy();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
}
