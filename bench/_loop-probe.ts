/**
 * The witness's event loop seen from inside, for the benchmarks (issue 28: where the anchor path's
 * tail comes from). Loaded into a witness child with `node --import bench/_loop-probe.ts` (see
 * bench/_load.ts, BENCH_LOOP_PROBE); it changes nothing on the wire and is never part of a
 * deployed witness. Each SIGUSR2 appends one JSON line to $BENCH_LOOP_REPORT describing the time
 * since the previous one, then starts afresh:
 *
 * - `delay_ms`: perf_hooks.monitorEventLoopDelay (1 ms resolution): p50, p99, max;
 * - `gc`: PerformanceObserver 'gc' entries by kind: count, total and longest pause (ms);
 * - `server_ms`: per HTTP request, from its parse (`http.server.request.start`) to the end of its
 *   response (`http.server.response.finish`): p50, p99, max;
 * - `long_turns` (only with BENCH_LOOP_TRACE=1: the ticker and the per-request marks cost CPU): a 2 ms ticker that is late by more than BENCH_LONG_TURN_MS (default 10) marks
 *   the loop busy for that window; each such turn lists what started inside it: GC pauses, the
 *   anchor path's steps (src/anchoring/trace.ts: verify-pool send, reply and round trip with their item counts,
 *   batch commits and answers with their request counts), HTTP requests parsed and answered.
 *   Reported: how many, their total time, the share of it spent in GC, and the longest ones.
 */
import diagnostics_channel from 'node:diagnostics_channel';
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import type { ServerResponse } from 'node:http';
import { ANCHOR_PATH_CHANNEL, type AnchorPathMark } from '../src/anchoring/trace.ts';

const OUT = process.env.BENCH_LOOP_REPORT;
const TRACE = process.env.BENCH_LOOP_TRACE === '1';
const LONG_MS = Number(process.env.BENCH_LONG_TURN_MS ?? 10);
const TICK_MS = 2;
const GC_KINDS: Record<number, string> = { 1: 'scavenge', 2: 'mark_compact', 4: 'incremental', 8: 'weak_cb', 16: 'minor_mark_sweep' };

interface Ev {
  what: string;
  at: number;
  ms: number;
  n: number;
}

let delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
let recent: Ev[] = []; // recent events (at least the last 0.6 s), for attributing a long turn
let gc = new Map<string, { count: number; ms: number; max: number }>();
let marks = new Map<string, { count: number; n: number; nMax: number; ms: number; msMax: number }>();
let server: number[] = [];
let turns: { ms: number; gc_ms: number; events: Record<string, number> }[] = [];
const started = new WeakMap<ServerResponse, number>();

function note(e: Ev): void {
  recent.push(e);
  if (recent.length > 16384) recent = recent.filter((x) => x.at > e.at - 600);
}

new PerformanceObserver((list) => {
  for (const e of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
    const kind = GC_KINDS[e.detail?.kind ?? 0] ?? 'other';
    const g = gc.get(kind) ?? { count: 0, ms: 0, max: 0 };
    g.count++;
    g.ms += e.duration;
    g.max = Math.max(g.max, e.duration);
    gc.set(kind, g);
    note({ what: `gc_${kind}`, at: e.startTime, ms: e.duration, n: 1 });
  }
}).observe({ entryTypes: ['gc'] });

if (TRACE)
  diagnostics_channel.subscribe(ANCHOR_PATH_CHANNEL, (msg) => {
    const m = msg as AnchorPathMark;
    const s = marks.get(m.what) ?? { count: 0, n: 0, nMax: 0, ms: 0, msMax: 0 };
    s.count++;
    s.n += m.n;
    s.nMax = Math.max(s.nMax, m.n);
    s.ms += m.ms;
    s.msMax = Math.max(s.msMax, m.ms);
    marks.set(m.what, s);
    note({ what: m.what, at: m.at, ms: m.ms, n: m.n });
  });
if (TRACE)
  diagnostics_channel.subscribe('http.server.request.start', (msg) => {
    const now = performance.now();
    started.set((msg as { response: ServerResponse }).response, now);
    note({ what: 'http_parsed', at: now, ms: 0, n: 1 });
  });
if (TRACE)
  diagnostics_channel.subscribe('http.server.response.finish', (msg) => {
    const now = performance.now();
    const t = started.get((msg as { response: ServerResponse }).response);
    if (t !== undefined) server.push(now - t);
    note({ what: 'http_answered', at: now, ms: 0, n: 1 });
  });

let last = performance.now();
/** Busy windows not yet attributed: GC entries reach the observer a little after the pause. */
let windows: { from: number; to: number }[] = [];
function attribute(w: { from: number; to: number }): void {
  const events: Record<string, number> = {};
  let gcMs = 0;
  for (const e of recent) {
    if (e.at + e.ms < w.from - 0.5 || e.at > w.to) continue;
    events[e.what] = (events[e.what] ?? 0) + e.n;
    if (e.what.startsWith('gc_')) gcMs += e.ms;
  }
  turns.push({ ms: Number((w.to - w.from).toFixed(1)), gc_ms: Number(gcMs.toFixed(1)), events });
}
if (TRACE)
  setInterval(() => {
    const now = performance.now();
    if (now - last - TICK_MS > LONG_MS) windows.push({ from: last + TICK_MS, to: now });
    last = now;
    while (windows.length > 0 && windows[0]!.to < now - 100) attribute(windows.shift()!);
  }, TICK_MS).unref();

const pct = (xs: number[], p: number): number => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return Number(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!.toFixed(2));
};
const r2 = (x: number) => Number(x.toFixed(2));

process.on('SIGUSR2', () => {
  for (const w of windows.splice(0)) attribute(w);
  const longTotal = turns.reduce((a, t) => a + t.ms, 0);
  const report = {
    delay_ms: { p50: r2(delay.percentile(50) / 1e6), p99: r2(delay.percentile(99) / 1e6), max: r2(delay.max / 1e6) },
    gc: Object.fromEntries([...gc].map(([k, g]) => [k, { count: g.count, ms: r2(g.ms), max_ms: r2(g.max) }])),
    anchor_path: Object.fromEntries(
      [...marks].map(([k, s]) => [
        k,
        { count: s.count, n_mean: r2(s.n / s.count), n_max: s.nMax, ms_mean: r2(s.ms / s.count), ms_max: r2(s.msMax) },
      ]),
    ),
    ...(TRACE
      ? {
          server_ms: { count: server.length, p50: pct(server, 50), p99: pct(server, 99), max: pct(server, 100) },
          long_turns: {
            threshold_ms: LONG_MS,
            count: turns.length,
            total_ms: r2(longTotal),
            gc_share: longTotal === 0 ? 0 : r2(turns.reduce((a, t) => a + Math.min(t.gc_ms, t.ms), 0) / longTotal),
            longest: [...turns].sort((a, b) => b.ms - a.ms).slice(0, 8),
          },
        }
      : {}),
  };
  if (OUT !== undefined) appendFileSync(OUT, JSON.stringify(report) + '\n');
  delay.disable();
  delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  gc = new Map();
  marks = new Map();
  server = [];
  turns = [];
  recent = [];
  windows = [];
});
