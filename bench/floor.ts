/**
 * `node bench/floor.ts`: the floor under issue 28's per-request CPU goals. Runs, interleaved, the
 * least an HTTP server can do for an add-checkpoint-sized request on this runtime and on Go
 * (bench/_floor-server.ts: node:http alone and fastify 5; bench/go-floor: net/http), each alone
 * and with the request's signature work inline (one Ed25519 verify and one sign), driven by the
 * benches' own load client (64 keep-alive connections, closed loop), and prints each server's CPU
 * µs per request (all threads, /proc) and rate. What our witness spends above these floors is
 * what its own code costs; what the floor itself costs against Go's says how far a goal such as
 * "CPU per add-checkpoint ≤ the Go reference's" can be reached on Node at all.
 * Knobs: BENCH_SECONDS (each phase, default 5), BENCH_FLOOR_ROUNDS (default 2).
 * Needs `go` for the Go rows (reported as skipped without it).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { closedLoop, LoadClient, processCpuMs, type Lane } from './_load.ts';
import { percentile } from './_measure.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_FLOOR_ROUNDS ?? 2);
const CONNECTIONS = 64;
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'aw-bench-floor-'));

interface Server {
  url: URL;
  pid: number;
  child: ChildProcess;
}

function start(cmd: string, args: string[]): Promise<Server> {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      reject(new Error(`${cmd} exited with ${code}`));
    });
    createInterface({ input: child.stdout }).once('line', (l) => {
      resolve({ url: new URL(l.trim()), pid: child.pid!, child });
    });
  });
}

async function stop(s: Server): Promise<void> {
  const exited = new Promise((r) => s.child.once('exit', r));
  s.child.kill('SIGKILL');
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

async function phase(
  s: Server,
): Promise<{ requests_per_s: number; cpu_us_per_request: number; p50_ms: number; p99_ms: number; errors: number }> {
  const client = new LoadClient(s.url, CONNECTIONS);
  const send = (_w: number, b: Buffer) => client.post('/add-checkpoint', b, 'text/plain');
  await closedLoop(lanes(), CONNECTIONS, 1, send); // warm-up
  const cpu0 = processCpuMs(s.pid);
  const t = performance.now();
  const r = await closedLoop(lanes(), CONNECTIONS, SECONDS, send);
  const elapsed = (performance.now() - t) / 1000;
  const cpu = processCpuMs(s.pid) - cpu0;
  client.close();
  return {
    requests_per_s: Math.round(r.count / elapsed),
    cpu_us_per_request: Math.round((cpu * 1000) / r.count),
    p50_ms: Number(percentile(r.latencies, 50).toFixed(2)),
    p99_ms: Number(percentile(r.latencies, 99).toFixed(2)),
    errors: r.errors,
  };
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
  for (let round = 0; round < ROUNDS; round++) {
    for (const v of variants) {
      const s = await v.start();
      try {
        (results[v.name] ??= []).push(await phase(s));
      } finally {
        await stop(s);
      }
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
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
      },
      null,
      2,
    ) + '\n',
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
