// Receipts per second of the KERI witness role (SPEC §3.6.10 "a bench"), and their ratio to the
// same run's Ed25519 verify + sign ceiling (the two signature operations every receipt needs).
// signify-ts controllers send pre-signed ixns over loopback to in-process nodes (SQLite, fsync per
// commit): one controller at a time (`sequential`: its KEL grows to N events), and C controllers at
// once (`concurrent`), to a node with group commit (the default) and to one committing each event
// alone (`maxGroup: 1`), the two interleaved round by round so both see the same machine load.
// `cpu_ms_per_receipt` is this process's CPU (client and server: they share the process) per receipt.
// `worst_case` (SPEC §3.6.2 "Off the event loop", src/kel-witness/offload.ts): W replays of the worst
// event the grammar allows (32 keys, 256 long seals, ≈ 48 KB), C at a time, to a node checking them
// inline (offloadWorkers 0) and to one checking them on a verification worker, interleaved round by
// round: the event loop's CPU time per event (the main thread's: client and server, the client's
// share being the same in both), the other threads' (workers), and the slowest GET /health meanwhile.
//   node bench/kel-receipts.ts [N=300] [C=8] [ROUNDS=2] [W=48] (W=0: skip worst_case)
import { join } from 'node:path';
import { generateEd25519, signEd25519, verifyEd25519, ed25519PublicKeyBytes } from '../src/crypto/ed25519.ts';
import type { RunningWitness } from '../src/witness/node.ts';
import { tempDir } from '../test/helpers/tmp.ts';
import { Controller, send, startKelNode } from '../test/kel-witness/harness.ts';
import { worstCase, type Wire } from '../test/kel-witness/offload-events.ts';

const n = Number(process.argv[2] ?? 300);
const concurrency = Number(process.argv[3] ?? 8);
const rounds = Number(process.argv[4] ?? 2);
const worstCount = Number(process.argv[5] ?? 48);

interface Phase {
  receipts: number;
  ms: number;
  cpuMs: number;
}

let tag = 1;

/** `controllers` controllers incept, then send `perController` ixns each, all at once; timed from the first ixn. */
async function phase(node: RunningWitness, controllers: number, perController: number): Promise<Phase> {
  const w = node.kel!.identity.prefix;
  const ctls = await Promise.all(Array.from({ length: controllers }, () => Controller.create(tag++)));
  const work: { raw: string; att: string }[][] = [];
  for (const c of ctls) {
    const icp = c.incept([w]);
    const r = await send(node.url, '/receipts', icp.raw, c.sign(icp));
    if (r.status !== 200) throw new Error(`icp: ${r.status} ${r.text}`);
    work.push(
      Array.from({ length: perController }, () => {
        const e = c.interact();
        return { raw: e.raw, att: c.sign(e) };
      }),
    );
  }
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    work.map(async (events) => {
      for (const e of events) {
        const r = await send(node.url, '/receipts', e.raw, e.att);
        if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
      }
    }),
  );
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { receipts: controllers * perController, ms, cpuMs: (cpu.user + cpu.system) / 1000 };
}

function ceiling(): number {
  const { privateKey } = generateEd25519();
  const pub = ed25519PublicKeyBytes(privateKey);
  const msg = new TextEncoder().encode('{"v":"KERI10JSON0000cb_","t":"ixn"}'.padEnd(200, ' '));
  const count = 2000;
  const t = performance.now();
  for (let i = 0; i < count; i++) verifyEd25519(pub, msg, signEd25519(privateKey, msg));
  return count / ((performance.now() - t) / 1000);
}

interface Burst {
  events: number;
  /** CPU time of the main thread (the event loop), and of the other threads (the workers). */
  loopMs: number;
  otherMs: number;
  ms: number;
  slowestHealthMs: number;
}

/** `count` posts of `m`, `concurrency` at a time (`probing`: while GET /health is polled); the main thread's CPU time. */
async function burst(node: RunningWitness, m: Wire, count: number, concurrency: number, probing: boolean): Promise<Burst> {
  let done = !probing;
  let slowest = 0;
  const probe = (async () => {
    while (!done) {
      const s = performance.now();
      await (await fetch(`${node.url}/health`)).arrayBuffer();
      slowest = Math.max(slowest, performance.now() - s);
    }
  })();
  const main0 = process.threadCpuUsage();
  const all0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        const r = await send(node.url, '/receipts', m.raw, m.att);
        if (r.status !== 200) throw new Error(`worst case: ${r.status} ${r.text}`);
      }
    }),
  );
  const ms = performance.now() - t0;
  const main = process.threadCpuUsage(main0);
  const all = process.cpuUsage(all0);
  done = true;
  await probe;
  const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
  return { events: count, loopMs: cpuMs(main), otherMs: cpuMs(all) - cpuMs(main), ms, slowestHealthMs: slowest };
}

async function worstCasePhase(dir: string): Promise<Record<string, unknown>> {
  const inline = await startKelNode(join(dir, 'inline'), { kelLimits: { ...limits, offloadWorkers: 0 } });
  const workers = await startKelNode(join(dir, 'workers'), { kelLimits: { ...limits, offloadWorkers: 1 } });
  try {
    const m = worstCase(inline.kel!.identity.prefix).icp;
    const sums: Record<string, Burst> = {};
    for (const node of [inline, workers]) {
      await send(node.url, '/receipts', m.raw, m.att); // incepted; then every post is a replay, checked in full
      await burst(node, m, 8, concurrency, false); // warm
    }
    for (let r = 0; r < rounds; r++) {
      for (const [name, node] of [
        ['inline', inline],
        ['workers', workers],
      ] as const) {
        // CPU without the /health probe (which answers more often when the loop is free), then the probe.
        const b = await burst(node, m, worstCount, concurrency, false);
        b.slowestHealthMs = (await burst(node, m, worstCount, concurrency, true)).slowestHealthMs;
        const s = sums[name] ?? { events: 0, loopMs: 0, otherMs: 0, ms: 0, slowestHealthMs: 0 };
        sums[name] = {
          events: s.events + b.events,
          loopMs: s.loopMs + b.loopMs,
          otherMs: s.otherMs + b.otherMs,
          ms: s.ms + b.ms,
          slowestHealthMs: Math.max(s.slowestHealthMs, b.slowestHealthMs),
        };
      }
    }
    const out: Record<string, unknown> = { body_bytes: m.raw.length, attachment_bytes: m.att.length };
    for (const [name, b] of Object.entries(sums)) {
      out[name] = {
        loop_cpu_ms_per_event: +(b.loopMs / b.events).toFixed(2),
        other_threads_cpu_ms_per_event: +(b.otherMs / b.events).toFixed(2),
        ms_per_event: +(b.ms / b.events).toFixed(2),
        slowest_health_ms: +b.slowestHealthMs.toFixed(1),
      };
    }
    return out;
  } finally {
    await inline.close();
    await workers.close();
  }
}

const tmp = tempDir();
const limits = { prefixEventsPerMinute: 1_000_000, rateLimit: null, ipBytesPerDay: 0, newPrefixesPerDay: 0 };
const grouped = await startKelNode(join(tmp.dir, 'g'), { kelLimits: limits });
const single = await startKelNode(join(tmp.dir, 's'), { kelLimits: { ...limits, maxGroup: 1 } });
try {
  const sum = new Map<string, Phase>();
  const add = (k: string, p: Phase) => {
    const s = sum.get(k) ?? { receipts: 0, ms: 0, cpuMs: 0 };
    sum.set(k, { receipts: s.receipts + p.receipts, ms: s.ms + p.ms, cpuMs: s.cpuMs + p.cpuMs });
  };
  const ceilings: number[] = [];
  for (let r = 0; r < rounds; r++) {
    ceilings.push(ceiling());
    add('sequential', await phase(grouped, 1, n));
    add(`concurrent_${concurrency}`, await phase(grouped, concurrency, Math.ceil(n / concurrency)));
    add(`concurrent_${concurrency}_no_group_commit`, await phase(single, concurrency, Math.ceil(n / concurrency)));
    ceilings.push(ceiling());
  }
  const ceil = ceilings.reduce((a, b) => a + b, 0) / ceilings.length;
  const doc: Record<string, unknown> = { receipts_per_phase: n, concurrency, rounds, crypto_ceiling_per_s: Math.round(ceil) };
  for (const [k, p] of sum) {
    const rate = p.receipts / (p.ms / 1000);
    doc[k] = {
      receipts_per_s: Math.round(rate),
      ratio_to_ceiling: +(rate / ceil).toFixed(3),
      ms_per_receipt: +(p.ms / p.receipts).toFixed(2),
      cpu_ms_per_receipt: +(p.cpuMs / p.receipts).toFixed(2),
    };
  }
  const metrics = await (await fetch(`${grouped.url}/metrics`)).text();
  const count = Number(/^kel_commit_group_events_count (\d+)/m.exec(metrics)?.[1] ?? 0);
  const total = Number(/^kel_commit_group_events_sum (\d+)/m.exec(metrics)?.[1] ?? 0);
  doc.mean_group = count === 0 ? null : +(total / count).toFixed(2);
  if (worstCount > 0) doc.worst_case = await worstCasePhase(join(tmp.dir, 'w'));
  process.stdout.write(`${JSON.stringify(doc)}\n`);
} finally {
  await grouped.close();
  await single.close();
  tmp.cleanup();
}
