/**
 * `node bench/floor.ts`: the floor under issue 28's per-request CPU goals. Runs, interleaved, the
 * least an HTTP server can do for an add-checkpoint-sized request on this runtime and on Go
 * (bench/_floor-server.ts: node:http alone and fastify 5; bench/go-floor: net/http), each alone
 * and with the request's signature work inline (one Ed25519 verify and one sign), driven by the
 * benches' own load client (64 keep-alive connections, closed loop), and prints each server's CPU
 * µs per request (all threads, /proc) and rate. What our witness spends above these floors is
 * what its own code costs; what the floor itself costs against Go's says how far a goal such as
 * "CPU per add-checkpoint ≤ the Go reference's" can be reached on Node at all.
 * The anchor floor, interleaved the same way (256 closed-loop clients, as bench/anchor): the
 * witness's POST /v1/anchor minus its state (bench/_floor-server.ts `fastify-anchor`, the signatures
 * inline, and `fastify-anchor-pool`, on one worker as the witness does here) against the witness
 * itself, with the crypto cost per anchor (strict verify + sign, CPU µs in this process) measured
 * in the same run: the CPU efficiency each reaches (crypto ÷ CPU per anchor) says how much of issue
 * 28's goal 1 (≥ 0.35) the stack leaves to the witness's own code.
 * Knobs: BENCH_SECONDS (each phase, default 5), BENCH_FLOOR_ROUNDS (default 2), BENCH_FLOOR_ONLY
 * (`request` or `anchor`: only that part).
 * Needs `go` for the Go rows (reported as skipped without it).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { ed25519PrivateKeyToPem, generateEd25519 } from '../src/crypto/ed25519.ts';
import { encodeHex } from '../src/encoding/hex.ts';
import { writeNewKeyFile } from '../src/keys/keyfile.ts';
import { anchorCryptoRounds, anchorServeArgs, closedLoop, LoadClient, makeLanes, processCpuMs, spawnWitness, type Lane } from './_load.ts';
import { percentile } from './_measure.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_FLOOR_ROUNDS ?? 2);
const ONLY = process.env.BENCH_FLOOR_ONLY;
const CONNECTIONS = 64;
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'aw-bench-floor-'));

interface Server {
  url: URL;
  pid: number;
  stop: () => Promise<void>;
}

function start(cmd: string, args: string[]): Promise<Server> {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      reject(new Error(`${cmd} exited with ${code}`));
    });
    createInterface({ input: child.stdout }).once('line', (l) => {
      resolve({ url: new URL(l.trim()), pid: child.pid!, stop: () => kill(child) });
    });
  });
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

// an add-checkpoint-sized body (a 3-line checkpoint, one signature line, a 20-hash proof)
const body = Buffer.from(
  `witness.example/log\n1234567\n${'A'.repeat(44)}\n\n— witness.example/log ${'B'.repeat(96)}\n` +
    Array.from({ length: 20 }, () => 'C'.repeat(44)).join('\n') +
    '\n',
);
/** Lanes that never run dry: one lane per connection, each a long list of the same body. */
function lanes(): Lane[] {
  const perLane = Math.ceil(((SECONDS + 1) * 20_000) / CONNECTIONS); // more than 20 000/s can use
  return Array.from({ length: CONNECTIONS }, () => ({ bodies: new Array<Buffer>(perLane).fill(body), next: 0 }));
}

/** `connections` closed-loop clients POSTing `lanes()`' bodies to `path`: 1 s of warm-up, then SECONDS measured. */
async function drive(
  s: Server,
  lanes: () => Lane[],
  connections: number,
  path: string,
  type: string,
  sources: string[] = [],
): Promise<{ per_s: number; cpu_us: number; p50_ms: number; p99_ms: number; errors: number }> {
  const client = new LoadClient(s.url, connections, sources);
  const send = (_w: number, b: Buffer) => client.post(path, b, type).catch(() => 0);
  await closedLoop(lanes(), connections, 1, send); // warm-up
  const cpu0 = processCpuMs(s.pid);
  const t = performance.now();
  const r = await closedLoop(lanes(), connections, SECONDS, send);
  const elapsed = (performance.now() - t) / 1000;
  const cpu = processCpuMs(s.pid) - cpu0;
  client.close();
  return {
    per_s: Math.round(r.count / elapsed),
    cpu_us: Math.round((cpu * 1000) / r.count),
    p50_ms: Number(percentile(r.latencies, 50).toFixed(2)),
    p99_ms: Number(percentile(r.latencies, 99).toFixed(2)),
    errors: r.errors,
  };
}

async function phase(
  s: Server,
): Promise<{ requests_per_s: number; cpu_us_per_request: number; p50_ms: number; p99_ms: number; errors: number }> {
  const r = await drive(s, lanes, CONNECTIONS, '/add-checkpoint', 'text/plain');
  return { requests_per_s: r.per_s, cpu_us_per_request: r.cpu_us, p50_ms: r.p50_ms, p99_ms: r.p99_ms, errors: r.errors };
}

const ANCHOR_CLIENTS = 256;
const parties = Array.from({ length: 20 }, (_, i) => ({ id: `did:keri:EParty${i}`, ...generateEd25519() }));
const witnessKey = generateEd25519();

const cryptoRound = anchorCryptoRounds(parties[0]!.privateKey, witnessKey.privateKey);
/** Strict verify + sign of one anchor, CPU µs in this process (best of three rounds). */
function anchorCryptoUs(): number {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const r = cryptoRound();
    best = Math.min(best, r.verify.cpu_us_per_op + r.sign.cpu_us_per_op);
  }
  return best;
}

async function anchorPhase(
  s: Server,
  lanes: Lane[],
): Promise<{ anchors_per_s: number; cpu_us_per_anchor: number; p99_ms: number; errors: number }> {
  for (const l of lanes) l.next = 0; // a fresh witness each phase: the same anchors are new to it
  // four source addresses, as bench/anchor: the witness bounds connections per address
  const r = await drive(s, () => lanes, ANCHOR_CLIENTS, '/v1/anchor', 'application/json', [
    '127.0.0.1',
    '127.0.0.2',
    '127.0.0.3',
    '127.0.0.4',
  ]);
  return { anchors_per_s: r.per_s, cpu_us_per_anchor: r.cpu_us, p99_ms: r.p99_ms, errors: r.errors };
}

try {
  const node = process.execPath;
  const script = join(import.meta.dirname, '_floor-server.ts');
  const variants: { name: string; start: () => Promise<Server> }[] = [
    { name: 'node-http', start: () => start(node, [script, 'node-http']) },
    { name: 'fastify', start: () => start(node, [script, 'fastify']) },
    { name: 'node-http-crypto', start: () => start(node, [script, 'node-http-crypto']) },
    { name: 'fastify-crypto', start: () => start(node, [script, 'fastify-crypto']) },
  ];
  let goSkipped: string | undefined;
  try {
    await run('go', ['version'], { timeout: 10_000 });
    const bin = join(dir, 'go-floor');
    await run('go', ['build', '-o', bin, join(import.meta.dirname, 'go-floor', 'main.go')], {
      env: { ...process.env, GO111MODULE: 'off', GOFLAGS: '', GOCACHE: join(tmpdir(), 'anchor-witness-gocache') },
      cwd: dir,
      timeout: 180_000,
    });
    variants.push({ name: 'go', start: () => start(bin, []) }, { name: 'go-crypto', start: () => start(bin, ['-crypto']) });
  } catch (e) {
    goSkipped = `go build failed or go missing: ${(e as Error).message.split('\n')[0]}`;
  }
  const results: Record<string, Awaited<ReturnType<typeof phase>>[]> = {};
  for (let round = 0; round < (ONLY === 'anchor' ? 0 : ROUNDS); round++) {
    for (const v of variants) {
      const s = await v.start();
      try {
        (results[v.name] ??= []).push(await phase(s));
      } finally {
        await s.stop();
      }
    }
  }

  // The anchor floor against the witness.
  writeFileSync(
    join(dir, 'registry.json'),
    JSON.stringify({ parties: parties.map((p) => ({ id: p.id, keys: [{ curve: 'ed25519', public_key: encodeHex(p.publicKey) }] })) }),
  );
  writeNewKeyFile(join(dir, 'w.pem'), ed25519PrivateKeyToPem(witnessKey.privateKey));
  const anchorLanes = makeLanes(parties, 100, Math.ceil(((SECONDS + 1) * 6000) / 2000) + 5);
  const anchorVariants: { name: string; start: (round: number) => Promise<Server> }[] = [
    { name: 'fastify-anchor', start: () => start(node, [script, 'fastify-anchor']) },
    { name: 'fastify-anchor-pool', start: () => start(node, [script, 'fastify-anchor-pool']) },
    {
      name: 'witness',
      start: async (round) => {
        const w = await spawnWitness(anchorServeArgs(dir, join(dir, `data-${round}`)));
        return { url: w.url, pid: w.pid, stop: w.stop };
      },
    },
  ];
  const anchorResults: Record<string, (Awaited<ReturnType<typeof anchorPhase>> & { crypto_us: number; cpu_efficiency: number })[]> = {};
  const cryptoRuns: number[] = [];
  // The host's speed drifts (the same verify + sign took 94–258 µs within one hour here), so each
  // round measures the crypto cost next to its phases, and each phase's efficiency uses its round's.
  for (let round = 0; round < (ONLY === 'request' ? 0 : ROUNDS); round++) {
    const crypto = anchorCryptoUs();
    cryptoRuns.push(crypto);
    for (const v of anchorVariants) {
      const s = await v.start(round);
      try {
        const r = await anchorPhase(s, anchorLanes);
        (anchorResults[v.name] ??= []).push({
          ...r,
          crypto_us: Number(crypto.toFixed(1)),
          cpu_efficiency: Number((crypto / r.cpu_us_per_anchor).toFixed(3)),
        });
      } finally {
        await s.stop();
      }
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const byAnchorVariant = (f: (r: (typeof anchorResults)[string][number]) => number) =>
    Object.fromEntries(Object.entries(anchorResults).map(([k, rs]) => [k, median(rs.map(f))]));
  // The witness's CPU per anchor ÷ the stateless floor's (on a worker, as the witness), per round.
  const overFloor = (anchorResults.witness ?? []).map((w, i) =>
    Number((w.cpu_us_per_anchor / anchorResults['fastify-anchor-pool']![i]!.cpu_us_per_anchor).toFixed(2)),
  );
  const cpu = (name: string) => (results[name] === undefined ? undefined : median(results[name].map((r) => r.cpu_us_per_request)));
  const ratio = (a: string, b: string) => {
    const x = cpu(a);
    const y = cpu(b);
    return x === undefined || y === undefined ? undefined : Number((x / y).toFixed(2));
  };
  process.stdout.write(
    JSON.stringify(
      {
        bench: 'floor',
        node: process.version,
        connections: CONNECTIONS,
        seconds_per_phase: SECONDS,
        body_bytes: body.length,
        phases: results,
        median_cpu_us_per_request: Object.fromEntries(Object.keys(results).map((k) => [k, cpu(k)])),
        node_http_over_go: ratio('node-http', 'go'),
        fastify_over_go: ratio('fastify', 'go'),
        node_http_crypto_over_go_crypto: ratio('node-http-crypto', 'go-crypto'),
        fastify_crypto_over_go_crypto: ratio('fastify-crypto', 'go-crypto'),
        ...(goSkipped === undefined ? {} : { go_skipped: goSkipped }),
        anchor: {
          clients: ANCHOR_CLIENTS,
          crypto_us_per_anchor: cryptoRuns.map((c) => Number(c.toFixed(1))),
          phases: anchorResults,
          median_cpu_us_per_anchor: byAnchorVariant((r) => r.cpu_us_per_anchor),
          median_cpu_efficiency: byAnchorVariant((r) => r.cpu_efficiency),
          witness_over_floor: overFloor,
        },
      },
      null,
      2,
    ) + '\n',
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
