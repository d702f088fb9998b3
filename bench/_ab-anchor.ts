/**
 * `node bench/_ab-anchor.ts`: before/after runs of the anchor path, interleaved (A B A B …), for
 * one lever at a time (issue 28). BENCH_AB (required) names the variants as
 * `label=/path/to/checkout,label=/path/to/checkout` (each checkout's bin/anchor-witness.js runs the
 * witness; `label=/path|--flag --flag|--arg x` adds Node/V8 flags and `serve` arguments to that variant's witness); BENCH_AB_PAIRS (default 3) rounds of one phase per variant, each on a fresh witness:
 * a 2 s warm-up, then BENCH_SECONDS (default 8) of BENCH_CONCURRENCY (default 256) closed-loop
 * clients. Per phase: the witness's CPU µs per anchor (all threads, and by kind of thread),
 * anchors/s and p99; BENCH_AB_RATE (e.g. 600) adds an open-loop phase at that fixed rate (the same
 * for every variant) with its p99 and CPU per anchor. The crypto cost per anchor (strict verify +
 * sign, CPU µs, this process, best of the rounds) gives each phase's CPU efficiency. Every witness
 * runs with bench/_loop-probe.ts: the open-loop phase also reports the witness's event-loop delay
 * (p99, max), its longest GC pause and the generator's own lateness and loop delay;
 * BENCH_AB_LOOP=1 adds the probe's whole report per phase (with BENCH_LOOP_TRACE=1, long turns). Prints JSON
 * lines per phase and, at the end, each figure's B ÷ A ratio per pair. Not part of `npm run bench`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ed25519PrivateKeyToPem, generateEd25519 } from '../src/crypto/ed25519.ts';
import { encodeHex } from '../src/encoding/hex.ts';
import { writeNewKeyFile } from '../src/keys/keyfile.ts';
import { percentile } from './_measure.ts';
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
  threadCpuMs,
  type ThreadCpu,
} from './_load.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 256);
const PAIRS = Number(process.env.BENCH_AB_PAIRS ?? 3);
const RATE = Number(process.env.BENCH_AB_RATE ?? 0);
const variants = (process.env.BENCH_AB ?? '')
  .split(',')
  .filter(Boolean)
  .map((v) => {
    const cut = v.indexOf('=');
    const [label, rest] = cut < 0 ? [undefined, undefined] : [v.slice(0, cut), v.slice(cut + 1)];
    const [checkout, flags, args] = (rest ?? '').split('|');
    if (label === undefined || !checkout) throw new Error(`BENCH_AB: ${v} is not label=/path`);
    return {
      label,
      entry: join(checkout, 'bin', 'anchor-witness.js'),
      flags: (flags ?? '').split(' ').filter(Boolean),
      args: (args ?? '').split(' ').filter(Boolean),
    };
  });
if (variants.length < 2) throw new Error('BENCH_AB=label=/checkout,label=/checkout (two or more) is required');

const dir = mkdtempSync(join(tmpdir(), 'aw-bench-ab-'));
const parties = Array.from({ length: 20 }, (_, i) => ({ id: `did:keri:EParty${i}`, ...generateEd25519() }));
writeFileSync(
  join(dir, 'registry.json'),
  JSON.stringify({ parties: parties.map((p) => ({ id: p.id, keys: [{ curve: 'ed25519', public_key: encodeHex(p.publicKey) }] })) }),
);
const witness = generateEd25519();
writeNewKeyFile(join(dir, 'w.pem'), ed25519PrivateKeyToPem(witness.privateKey));

// Pre-signed once; each phase's fresh witness sees them as new (BENCH_AB_MAX_RATE bounds the peak).
const perSeed = Math.ceil(((SECONDS + 2) * Number(process.env.BENCH_AB_MAX_RATE ?? 5000) + RATE * SECONDS) / 2000) + 5;
const lanes = makeLanes(parties, 100, perSeed);

const cryptoRound = anchorCryptoRounds(parties[0]!.privateKey, witness.privateKey);
function cryptoUs(): number {
  const r = cryptoRound();
  return r.verify.cpu_us_per_op + r.sign.cpu_us_per_op;
}

const perUs = (a: ThreadCpu, b: ThreadCpu, n: number) => {
  const k = (x: keyof ThreadCpu) => ((b[x] - a[x]) * 1000) / n;
  const t = { event_loop: k('event_loop'), workers: k('workers'), v8_helpers: k('v8_helpers'), other: k('other') };
  return { ...t, total: t.event_loop + t.workers + t.v8_helpers + t.other };
};

async function phase(
  label: string,
  entry: string,
  flags: string[],
  args: string[],
  round: number,
): Promise<Record<string, number | string>> {
  const w = await spawnWitness([...anchorServeArgs(dir, join(dir, `data-${label}-${round}`)), ...args], entry, true, flags);
  try {
    for (const l of lanes) l.next = 0; // a fresh witness: the same pre-signed anchors are new to it
    const client = new LoadClient(w.url, CONCURRENCY, ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4']);
    // A connection the server closed as it went idle resets the request sent on it: counted as an error.
    const send = (_w: number, body: Buffer) => client.post('/v1/anchor', body, 'application/json').catch(() => 0);
    await closedLoop(lanes, CONCURRENCY, 2, send); // warm-up
    await w.loopReport(); // from here on
    const c0 = threadCpuMs(w.pid);
    const b0 = await batchTotals(w.url);
    const t0 = performance.now();
    const r = await closedLoop(lanes, CONCURRENCY, SECONDS, send);
    const b1 = await batchTotals(w.url);
    const wall = (performance.now() - t0) / 1000;
    const cpu = perUs(c0, threadCpuMs(w.pid), r.count);
    const out: Record<string, number | string> = {
      variant: label,
      round,
      anchors_per_s: Math.round(r.count / wall),
      errors: r.errors,
      p99_ms: Math.round(percentile(r.latencies, 99)),
      cpu_us_per_anchor: Math.round(cpu.total),
      event_loop_us: Math.round(cpu.event_loop),
      workers_us: Math.round(cpu.workers),
      v8_helpers_us: Math.round(cpu.v8_helpers),
      other_us: Math.round(cpu.other),
      requests_per_commit: groupCommit(b0, b1).requests_per_batch,
    };
    const peakLoop = await w.loopReport();
    if (process.env.BENCH_AB_LOOP === '1') out.loop = JSON.stringify(peakLoop);
    if (RATE > 0) {
      const o0 = threadCpuMs(w.pid);
      const o = await openLoop(lanes, RATE, SECONDS, send);
      const oc = perUs(o0, threadCpuMs(w.pid), o.count);
      const b2 = await batchTotals(w.url);
      Object.assign(out, {
        open_rate_achieved: o.achieved_per_s,
        open_errors: o.errors,
        open_p50_ms: Number(percentile(o.latencies, 50).toFixed(1)),
        open_p99_ms: Number(percentile(o.latencies, 99).toFixed(1)),
        open_cpu_us_per_anchor: Math.round(oc.total),
        open_event_loop_us: Math.round(oc.event_loop),
        open_requests_per_commit: groupCommit(b1, b2).requests_per_batch,
      });
      const loop = await w.loopReport();
      const d = loop?.delay_ms as { p99: number; max: number } | undefined;
      const gcs = Object.values((loop?.gc ?? {}) as Record<string, { max_ms: number }>);
      Object.assign(out, {
        open_loop_delay_p99_ms: d?.p99 ?? NaN,
        open_loop_delay_max_ms: d?.max ?? NaN,
        open_gc_max_ms: Math.max(0, ...gcs.map((g) => g.max_ms)),
        open_generator_late_p99_ms: o.generator.send_late_ms.p99,
        open_p99_from_send_ms: o.generator.from_send_ms.p99,
        open_generator_delay_p99_ms: o.generator.loop_delay_ms.p99,
      });
      if (process.env.BENCH_AB_LOOP === '1') out.open_loop = JSON.stringify(loop);
    }
    client.close();
    return out;
  } finally {
    await w.stop();
  }
}

try {
  const crypto: number[] = [cryptoUs()];
  const rows: Record<string, number | string>[] = [];
  for (let round = 0; round < PAIRS; round++) {
    for (const v of variants) {
      const row = await phase(v.label, v.entry, v.flags, v.args, round);
      rows.push(row);
      process.stdout.write(JSON.stringify(row) + '\n');
    }
    crypto.push(cryptoUs());
  }
  const cryptoBest = Math.min(...crypto);
  const [a, ...others] = variants;
  const keys = [
    'anchors_per_s',
    'p99_ms',
    'cpu_us_per_anchor',
    'event_loop_us',
    'workers_us',
    'v8_helpers_us',
    'requests_per_commit',
    'open_p50_ms',
    'open_p99_ms',
    'open_cpu_us_per_anchor',
    'open_requests_per_commit',
    'open_loop_delay_p99_ms',
    'open_loop_delay_max_ms',
    'open_gc_max_ms',
  ];
  const summary: Record<string, unknown> = { crypto_us_per_anchor: Number(cryptoBest.toFixed(1)), pairs: PAIRS };
  for (const v of [a!, ...others]) {
    const mine = rows.filter((r) => r.variant === v.label);
    summary[v.label] = Object.fromEntries(
      [...keys, 'efficiency'].map((k) => [
        k,
        mine
          .map((r) => (k === 'efficiency' ? Number((cryptoBest / Number(r.cpu_us_per_anchor)).toFixed(3)) : r[k]))
          .filter((x) => x !== undefined),
      ]),
    );
  }
  for (const v of others) {
    summary[`${v.label}/${a!.label}`] = Object.fromEntries(
      keys.map((k) => [
        k,
        Array.from({ length: PAIRS }, (_, i) => {
          const x = rows.find((r) => r.variant === v.label && r.round === i)?.[k];
          const y = rows.find((r) => r.variant === a!.label && r.round === i)?.[k];
          return x === undefined || y === undefined ? undefined : Number((Number(x) / Number(y)).toFixed(3));
        }).filter((x) => x !== undefined),
      ]),
    );
  }
  process.stdout.write(JSON.stringify(summary, null, 1) + '\n');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
