// Receipts per second of the KERI witness role (SPEC §3.6.10 "a bench"), and their ratio to the
// same run's Ed25519 verify + sign ceiling (the two signature operations every receipt needs).
// signify-ts controllers send pre-signed ixns over loopback to in-process nodes (SQLite, fsync per
// commit): one controller at a time (`sequential`: its KEL grows to N events), and C controllers at
// once (`concurrent`), to a node with group commit (the default) and to one committing each event
// alone (`maxGroup: 1`), the two interleaved round by round so both see the same machine load.
// `cpu_ms_per_receipt` is this process's CPU (client and server: they share the process) per receipt.
//   node bench/kel-receipts.ts [N=300] [C=8] [ROUNDS=2]
import { join } from 'node:path';
import { generateEd25519, signEd25519, verifyEd25519, ed25519PublicKeyBytes } from '../src/crypto/ed25519.ts';
import type { RunningWitness } from '../src/witness/node.ts';
import { tempDir } from '../test/helpers/tmp.ts';
import { Controller, send, startKelNode } from '../test/kel-witness/harness.ts';

const n = Number(process.argv[2] ?? 300);
const concurrency = Number(process.argv[3] ?? 8);
const rounds = Number(process.argv[4] ?? 2);

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
  process.stdout.write(`${JSON.stringify(doc)}\n`);
} finally {
  await grouped.close();
  await single.close();
  tmp.cleanup();
}
