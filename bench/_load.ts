/** Shared load-generation pieces for the benchmarks: a witness child process, keep-alive POSTs, pre-signed anchor lanes. */
import http from 'node:http';
import { existsSync, readdirSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { tmpdir } from 'node:os';
import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { KeyObject } from 'node:crypto';
import { encodeAnchor } from '../src/anchor/codec.ts';
import { deriveSeedId } from '../src/anchor/seed.ts';
import { cosignMessage, partyMessage } from '../src/anchor/messages.ts';
import { signAnchor } from '../src/client/party.ts';
import { ed25519PublicKeyBytes, signEd25519, verifyEd25519 } from '../src/crypto/ed25519.ts';
import { stringifyJson } from '../src/encoding/json.ts';
import { spawnServe } from '../test/helpers/spawn-serve.ts';
import { rate } from './_measure.ts';

/**
 * The `serve` arguments of an anchor-role bench witness whose key (`w.pem`) and registry file are in
 * `dir`: the per-party quotas and the queue opened wide, so that a bench measures the anchor path,
 * not the limits.
 */
export function anchorServeArgs(dir: string, dataDir: string, registry = 'registry.json'): string[] {
  return [
    '--data-dir',
    dataDir,
    '--key',
    join(dir, 'w.pem'),
    '--name',
    'witness.bench/w',
    '--roles',
    'anchor',
    '--registry',
    join(dir, registry),
    '--party-anchors-per-minute',
    '1000000000',
    '--party-new-seeds-per-day',
    '1000000000',
    '--max-queue',
    '100000',
  ];
}

/**
 * `anchor-witness serve <args>` as a child (listening on a free loopback port, its stderr shown);
 * BENCH_PROF adds --cpu-prof, BENCH_CHILD_NODE_FLAGS other Node/V8 flags (whose stdout lines
 * BENCH_CHILD_STDOUT shows). `entry`, or BENCH_WITNESS_CHECKOUT=<dir> for every bench, runs
 * another checkout's bin/anchor-witness.js (before/after runs of a lever).
 * `nodeFlags` are more Node/V8 flags for this child. `probe` (or BENCH_LOOP_PROBE=1) loads bench/_loop-probe.ts into the child: `loopReport()` then
 * returns its event-loop delay and GC figures since the previous call (and, with
 * BENCH_LOOP_TRACE=1, the long-turn tracer's).
 */
export async function spawnWitness(
  args: string[],
  entry?: string,
  probe = process.env.BENCH_LOOP_PROBE === '1',
  nodeFlags: readonly string[] = [],
): Promise<{
  url: URL;
  pid: number;
  cpuMs: () => number;
  threadCpuMs: () => ThreadCpu;
  loopReport: () => Promise<Record<string, unknown> | undefined>;
  stop: () => Promise<void>;
}> {
  const checkout = process.env.BENCH_WITNESS_CHECKOUT;
  const program = entry ?? (checkout === undefined ? undefined : join(checkout, 'bin', 'anchor-witness.js'));
  const reportFile = probe ? join(mkdtempSync(join(tmpdir(), 'aw-loop-')), 'loop.jsonl') : undefined;
  const w = await spawnServe(['serve', '--listen', '127.0.0.1:0', '--log-level', 'warn', ...args], {
    ...(program === undefined ? {} : { entry: program }),
    ...(reportFile === undefined ? {} : { env: { BENCH_LOOP_REPORT: reportFile } }),
    nodeArgs: [
      ...(reportFile === undefined ? [] : ['--import', join(import.meta.dirname, '_loop-probe.ts')]),
      ...(process.env.BENCH_PROF !== undefined ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROF] : []),
      ...(process.env.BENCH_CHILD_NODE_FLAGS ?? '').split(' ').filter(Boolean),
      ...nodeFlags,
    ],
    stderr: 'inherit',
    onOtherLine: (l) => {
      if (process.env.BENCH_CHILD_STDOUT !== undefined) process.stderr.write(`[witness] ${l}\n`);
    },
  });
  const pid = w.child.pid!;
  return {
    url: new URL(w.url),
    pid,
    cpuMs: () => processCpuMs(pid),
    threadCpuMs: () => threadCpuMs(pid),
    loopReport: async () => {
      if (reportFile === undefined) return undefined;
      const lines = () => (existsSync(reportFile) ? readFileSync(reportFile, 'utf8').split('\n').filter(Boolean) : []);
      const before = lines().length;
      process.kill(pid, 'SIGUSR2');
      for (let i = 0; i < 200; i++) {
        const now = lines();
        if (now.length > before) return JSON.parse(now[now.length - 1]!) as Record<string, unknown>;
        await new Promise((r) => setTimeout(r, 10));
      }
      return undefined;
    },
    stop: async () => {
      await w.stop();
      if (reportFile !== undefined) rmSync(dirname(reportFile), { recursive: true, force: true });
    },
  };
}

/** POST `body` over a keep-alive agent; resolves with the status once the response is read. */
export function post(agent: http.Agent, url: URL, path: string, body: Buffer, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, path, method: 'POST', agent, headers: { ...headers, 'content-length': body.length } },
      (res) => {
        res.resume();
        res.on('end', () => {
          resolve(res.statusCode ?? 0);
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** CPU time (user + system, all threads) a process has used so far, in ms (Linux /proc). */
export function processCpuMs(pid: number): number {
  return statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/** utime + stime of a /proc `stat` line (process or thread), in ms. */
function statCpuMs(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}
const CLOCK_TICKS = 100; // USER_HZ on Linux

/**
 * CPU time (ms) a Node process has used so far, by kind of thread (Linux /proc, from each
 * thread's name): `event_loop` (the main thread: HTTP, JSON, the sequencer, SQLite statements and
 * COMMIT), `workers` (worker_threads: the Ed25519 verify/sign pool and the WAL checkpointer),
 * `v8_helpers` (V8's GC and compiler threads) and `other` (libuv's pool, signal thread, …).
 * Threads that ended before the call are missing, so take differences over a phase in which
 * the set of threads does not change.
 */
export interface ThreadCpu {
  event_loop: number;
  workers: number;
  v8_helpers: number;
  other: number;
}

export function threadCpuMs(pid: number): ThreadCpu {
  const out: ThreadCpu = { event_loop: 0, workers: 0, v8_helpers: 0, other: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const kind: keyof ThreadCpu =
      tid === String(pid) ? 'event_loop' : name === 'WorkerThread' ? 'workers' : name.startsWith('V8') ? 'v8_helpers' : 'other';
    out[kind] += statCpuMs(stat);
  }
  return out;
}

/** The witness's group-commit histograms (GET /metrics): committed batches, requests in them, seconds in their transactions. */
export interface BatchTotals {
  batches: number;
  requests: number;
  seconds: number;
}

export async function batchTotals(url: URL): Promise<BatchTotals> {
  // From a loopback address the load clients do not use, on a connection of its own: the load
  // already holds the witness's 64 connections per client IP.
  const text = await new Promise<string>((resolve, reject) => {
    const req = http.get({ host: url.hostname, port: url.port, path: '/metrics', localAddress: '127.0.0.9', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => {
        resolve(body);
      });
    });
    req.on('error', reject);
  });
  const value = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return {
    batches: value('anchor_batch_requests_count'),
    requests: value('anchor_batch_requests_sum'),
    seconds: value('anchor_batch_seconds_sum'),
  };
}

/** Mean requests per committed batch and mean transaction time (ms) between two readings. */
export function groupCommit(
  before: BatchTotals,
  after: BatchTotals,
): { batches: number; requests_per_batch: number; batch_ms_mean: number } {
  const batches = after.batches - before.batches;
  return {
    batches,
    requests_per_batch: Number(((after.requests - before.requests) / batches).toFixed(1)),
    batch_ms_mean: Number((((after.seconds - before.seconds) * 1000) / batches).toFixed(2)),
  };
}

/** `after − before`, per thread kind, in µs per `count` operations. */
export function threadCpuPerOpUs(before: ThreadCpu, after: ThreadCpu, count: number): ThreadCpu {
  const per = (k: keyof ThreadCpu) => Math.round(((after[k] - before[k]) * 1000) / count);
  return { event_loop: per('event_loop'), workers: per('workers'), v8_helpers: per('v8_helpers'), other: per('other') };
}

export interface Lane {
  bodies: Buffer[];
  next: number;
  /** The seed id (hex) of an anchor lane. */
  seed?: string;
}

/** Pre-signed POST /v1/anchor bodies: per party, `seedsPerParty` seeds, each a run of indices 1..perSeed. */
export function makeLanes(parties: { id: string; privateKey: KeyObject }[], seedsPerParty: number, perSeed: number): Lane[] {
  const lanes: Lane[] = [];
  for (const p of parties) {
    for (let s = 0; s < seedsPerParty; s++) {
      const scope = `S${s}-${randomBytes(4).toString('hex')}`;
      const seedId = deriveSeedId(p.id, p.id, scope);
      const bodies: Buffer[] = [];
      for (let i = 1; i <= perSeed; i++) {
        const a = signAnchor(p.privateKey, 'ed25519', {
          seedId,
          index: i,
          head: randomBytes(32),
          cumulative: BigInt(i),
          timestamp: 1700000000 + i,
          witnessSet: { said: 'EBench', threshold: 1 },
        });
        bodies.push(Buffer.from(stringifyJson({ anchor: encodeAnchor(a), party: { agent: p.id, root: p.id, scope } })));
      }
      lanes.push({ bodies, next: 0, seed: Buffer.from(seedId).toString('hex') });
    }
  }
  return lanes;
}

/**
 * One anchor's signature work as the witness does it, in this process: the party's strict verify and
 * the witness's sign of the cosign message. Returns a function that measures one round (`rate()` of
 * each, about 1 s apart); the sample anchor is made once.
 */
export function anchorCryptoRounds(
  party: KeyObject,
  witness: KeyObject,
): () => { verify: ReturnType<typeof rate>; sign: ReturnType<typeof rate> } {
  const sample = signAnchor(party, 'ed25519', {
    seedId: randomBytes(32),
    index: 1,
    head: randomBytes(32),
    cumulative: 1n,
    timestamp: 1700000000,
    witnessSet: { said: 'E', threshold: 1 },
  });
  const pk = ed25519PublicKeyBytes(party);
  const pm = partyMessage(sample);
  const cm = cosignMessage(sample);
  return () => ({
    verify: rate(() => verifyEd25519(pk, pm, sample.sigParty.signature), 1, 2000),
    sign: rate(() => signEd25519(witness, cm), 1, 2000),
  });
}

/**
 * A lean HTTP/1.1 load client: `connections` keep-alive sockets, one request in flight per socket
 * (no pipelining), requests written as one buffer, responses parsed only as far as the status
 * line and Content-Length. It exists so that the load generator, which shares this machine's
 * cores with the node under test, spends a fraction of what node:http's client does per request
 * (measured: ~135 µs per request with http.Agent), leaving the CPU to the server being measured.
 * A response without Content-Length (chunked) is an error: the benchmarked routes never send one.
 */
export class LoadClient {
  private readonly idle: Conn[] = [];
  private readonly waiting: ((c: Conn) => void)[] = [];
  private readonly all = new Set<Conn>();
  private readonly url: URL;
  private readonly host: string;

  private readonly sources: string[];
  private opened = 0;

  /** `sources`: local addresses to connect from, round-robin (the witness allows 64 connections per client IP). */
  constructor(url: URL, connections: number, sources: string[] = []) {
    this.url = url;
    this.host = url.host;
    this.sources = sources;
    for (let i = 0; i < connections; i++) this.idle.push(this.open());
  }

  private open(): Conn {
    const source = this.sources.length === 0 ? undefined : this.sources[this.opened++ % this.sources.length];
    const c = new Conn(Number(this.url.port), this.url.hostname, source);
    this.all.add(c);
    return c;
  }

  /** Resolves with the response status once the whole response has been read. */
  async post(path: string, body: Buffer, contentType?: string): Promise<number> {
    const head = `POST ${path} HTTP/1.1\r\nhost: ${this.host}\r\n${contentType === undefined ? '' : `content-type: ${contentType}\r\n`}content-length: ${body.length}\r\n\r\n`;
    let conn = this.idle.pop() ?? (await new Promise<Conn>((r) => this.waiting.push(r)));
    if (conn.closed) conn = this.replace(conn); // e.g. closed by the server's keep-alive idle timeout
    try {
      return await conn.request(Buffer.concat([Buffer.from(head, 'latin1'), body]));
    } catch (e) {
      this.all.delete(conn);
      conn.destroy();
      this.release(this.open());
      throw e;
    } finally {
      if (this.all.has(conn)) this.release(conn.closed ? this.replace(conn) : conn);
    }
  }

  private replace(conn: Conn): Conn {
    this.all.delete(conn);
    return this.open();
  }

  private release(conn: Conn): void {
    const next = this.waiting.shift();
    if (next !== undefined) next(conn);
    else this.idle.push(conn);
  }

  close(): void {
    for (const c of this.all) c.destroy();
    this.all.clear();
  }
}

class Conn {
  private readonly socket: Socket;
  closed = false;
  private buf: Buffer = Buffer.alloc(0);
  private pending: { resolve: (status: number) => void; reject: (e: Error) => void } | undefined;

  constructor(port: number, host: string, localAddress: string | undefined) {
    this.socket = connect({ port, host, noDelay: true, ...(localAddress === undefined ? {} : { localAddress }) });
    this.socket.on('data', (d: Buffer) => {
      this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
      this.parse();
    });
    const fail = (e: Error) => {
      this.closed = true;
      const p = this.pending;
      this.pending = undefined;
      p?.reject(e);
    };
    this.socket.on('error', fail);
    this.socket.on('close', () => {
      fail(new Error('connection closed before the response'));
    });
  }

  request(bytes: Buffer): Promise<number> {
    if (this.closed) return Promise.reject(new Error('connection closed'));
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.socket.write(bytes);
    });
  }

  private parse(): void {
    const end = this.buf.indexOf('\r\n\r\n');
    if (end < 0 || this.pending === undefined) return;
    const head = this.buf.toString('latin1', 0, end);
    const status = Number(head.slice(9, 12));
    const m = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (m === null) {
      this.socket.destroy(new Error(`response without content-length: ${head.split('\r\n')[0]}`));
      return;
    }
    const total = end + 4 + Number(m[1]);
    if (this.buf.length < total) return;
    this.buf = this.buf.subarray(total);
    if (/\r\nconnection: *close/i.test(head)) this.closed = true;
    const p = this.pending;
    this.pending = undefined;
    p.resolve(status);
  }

  destroy(): void {
    this.closed = true;
    this.socket.destroy();
  }
}

export interface LoopResult {
  count: number;
  errors: number;
  /** Milliseconds, ascending. */
  latencies: number[];
}

/**
 * Closed loop: `concurrency` workers for `seconds`, each sending the next body of its own lanes
 * (worker w owns lanes w, w+C, w+2C, …, so no two requests of one seed are ever in flight at once)
 * through `send(worker, body)`, the next only once the previous answered. Non-200 counts as an error.
 */
export async function closedLoop(
  lanes: Lane[],
  concurrency: number,
  seconds: number,
  send: (worker: number, body: Buffer) => Promise<number>,
): Promise<LoopResult> {
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      const own = lanes.filter((_, i) => i % concurrency === w);
      for (let k = 0; performance.now() < end; k++) {
        const lane = own[k % own.length]!;
        const body = lane.bodies[lane.next++];
        if (body === undefined) break;
        const t = performance.now();
        const status = await send(w, body);
        latencies.push(performance.now() - t);
        if (status !== 200) errors++;
      }
    }),
  );
  return { count: latencies.length, errors, latencies: latencies.sort((a, b) => a - b) };
}

/**
 * Open loop at a fixed rate for `seconds`, request i taking the next body of lane i mod lanes and
 * going out through `send(i, body)`. Latency counts from each request's scheduled send time, so a
 * generator that falls behind, or a request waiting for a free connection, counts against the
 * result (no coordinated omission).
 */
export async function openLoop(
  lanes: Lane[],
  perSecond: number,
  seconds: number,
  send: (i: number, body: Buffer) => Promise<number>,
): Promise<LoopResult & { achieved_per_s: number; generator_behind_ms_max: number; generator: GeneratorStats }> {
  const latencies: number[] = [];
  const late: number[] = [];
  const fromSend: number[] = [];
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const cpu0 = process.cpuUsage();
  let behindMs = 0;
  let errors = 0;
  const total = Math.floor(perSecond * seconds);
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    else behindMs = Math.max(behindMs, -wait);
    const sent = performance.now();
    late.push(sent - due);
    const lane = lanes[i % lanes.length]!;
    const body = lane.bodies[lane.next++];
    if (body === undefined) break;
    pending.push(
      send(i, body).then((status) => {
        const now = performance.now();
        latencies.push(now - due);
        fromSend.push(now - sent);
        if (status !== 200) errors++;
      }),
    );
  }
  await Promise.all(pending);
  delay.disable();
  const cpu = process.cpuUsage(cpu0);
  late.sort((a, b) => a - b);
  fromSend.sort((a, b) => a - b);
  const at = (xs: number[], p: number) => Number((xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0).toFixed(2));
  return {
    count: latencies.length,
    errors,
    latencies: latencies.sort((a, b) => a - b),
    achieved_per_s: Math.round(latencies.length / ((performance.now() - start) / 1000)),
    generator_behind_ms_max: Number(behindMs.toFixed(2)),
    generator: {
      send_late_ms: { p50: at(late, 50), p99: at(late, 99), max: at(late, 100) },
      from_send_ms: { p50: at(fromSend, 50), p99: at(fromSend, 99) },
      loop_delay_ms: {
        p50: Number((delay.percentile(50) / 1e6).toFixed(2)),
        p99: Number((delay.percentile(99) / 1e6).toFixed(2)),
        max: Number((delay.max / 1e6).toFixed(2)),
      },
      cpu_us_per_request: Math.round((cpu.user + cpu.system) / Math.max(1, latencies.length)),
    },
  };
}

/**
 * The open-loop generator seen from inside: how late each request went out against its due time
 * (p50/p99/max), its own event-loop delay (monitorEventLoopDelay), and its CPU per request. A
 * generator that is itself late would show here, and every request's latency already counts from
 * its due time.
 */
export interface GeneratorStats {
  send_late_ms: { p50: number; p99: number; max: number };
  /** Latency counted from when each request actually went out: beside the due-time figures, what the generator's lateness adds. */
  from_send_ms: { p50: number; p99: number };
  loop_delay_ms: { p50: number; p99: number; max: number };
  cpu_us_per_request: number;
}
