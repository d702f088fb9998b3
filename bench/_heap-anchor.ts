/**
 * `node bench/_heap-anchor.ts`: what the anchor path keeps alive for a while (issue 28: objects
 * that outlive a scavenge are copied and promoted, and make the young-generation pauses long).
 * Drives a witness child open loop at BENCH_HEAP_RATE (default 400) anchors/s and takes two heap
 * snapshots BENCH_HEAP_GAP_S (default 2) seconds apart (`--heapsnapshot-signal`); prints the
 * objects of the second that were allocated after the first, by kind, with their count and bytes
 * per anchor sent in between, and their total bytes and objects per anchor. BENCH_WITNESS_CHECKOUT
 * runs another checkout's witness (a before/after of a change). Not part of `npm run bench`.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ed25519PrivateKeyToPem, generateEd25519 } from '../src/crypto/ed25519.ts';
import { encodeHex } from '../src/encoding/hex.ts';
import { writeNewKeyFile } from '../src/keys/keyfile.ts';
import { anchorServeArgs, LoadClient, makeLanes, openLoop, spawnWitness } from './_load.ts';

const RATE = Number(process.env.BENCH_HEAP_RATE ?? 400);
const GAP = Number(process.env.BENCH_HEAP_GAP_S ?? 2);
const dir = mkdtempSync(join(tmpdir(), 'aw-bench-heap-'));
const snaps = join(dir, 'snaps');
mkdirSync(snaps);
const parties = Array.from({ length: 20 }, (_, i) => ({ id: `did:keri:EParty${i}`, ...generateEd25519() }));
writeFileSync(
  join(dir, 'registry.json'),
  JSON.stringify({ parties: parties.map((p) => ({ id: p.id, keys: [{ curve: 'ed25519', public_key: encodeHex(p.publicKey) }] })) }),
);
writeNewKeyFile(join(dir, 'w.pem'), ed25519PrivateKeyToPem(generateEd25519().privateKey));

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

function objects(file: string): Map<number, string> & { sizes: Map<number, number> } {
  const s = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const f = s.snapshot.meta.node_fields;
  const n = f.length;
  const [iType, iName, iId, iSize] = ['type', 'name', 'id', 'self_size'].map((x) => f.indexOf(x)) as [number, number, number, number];
  const types = s.snapshot.meta.node_types[0];
  const out = new Map<number, string>() as Map<number, string> & { sizes: Map<number, number> };
  out.sizes = new Map();
  for (let i = 0; i < s.nodes.length; i += n) {
    const type = types[s.nodes[i + iType]!]!;
    const name = s.strings[s.nodes[i + iName]!]!;
    const kind =
      type === 'object' || type === 'closure'
        ? `${type} ${name}`
        : type === 'string' || type === 'concatenated string'
          ? 'string'
          : `${type} ${name.slice(0, 40)}`;
    out.set(s.nodes[i + iId]!, kind);
    out.sizes.set(s.nodes[i + iId]!, s.nodes[i + iSize]!);
  }
  return out;
}

try {
  const w = await spawnWitness(anchorServeArgs(dir, join(dir, 'data')), undefined, false, [
    `--heapsnapshot-signal=SIGUSR1`,
    `--diagnostic-dir=${snaps}`,
  ]);
  const lanes = makeLanes(parties, 100, Math.ceil((RATE * (GAP + 12)) / 2000) + 5);
  const client = new LoadClient(w.url, 64, ['127.0.0.1', '127.0.0.2']);
  const send = (_i: number, body: Buffer) => client.post('/v1/anchor', body, 'application/json');
  const load = openLoop(lanes, RATE, GAP + 10, send);
  const waitSnap = async (count: number) => {
    for (let i = 0; i < 600; i++) {
      const done = readdirSync(snaps).filter((f) => f.endsWith('.heapsnapshot'));
      if (done.length >= count) {
        await new Promise((r) => setTimeout(r, 1500)); // let the writer finish
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  await new Promise((r) => setTimeout(r, 4000));
  process.kill(w.pid, 'SIGUSR1');
  await waitSnap(1);
  const sent0 = lanes.reduce((a, l) => a + l.next, 0);
  await new Promise((r) => setTimeout(r, GAP * 1000));
  const sent1 = lanes.reduce((a, l) => a + l.next, 0);
  process.kill(w.pid, 'SIGUSR1');
  await waitSnap(2);
  const r = await load;
  client.close();
  await w.stop();
  const files = readdirSync(snaps)
    .filter((f) => f.endsWith('.heapsnapshot'))
    .sort();
  const a = objects(join(snaps, files[0]!));
  const b = objects(join(snaps, files[1]!));
  const anchors = sent1 - sent0;
  const byKind = new Map<string, { count: number; bytes: number }>();
  let total = 0;
  let count = 0;
  for (const [id, kind] of b) {
    if (a.has(id)) continue;
    const e = byKind.get(kind) ?? { count: 0, bytes: 0 };
    e.count++;
    count++;
    e.bytes += b.sizes.get(id)!;
    total += b.sizes.get(id)!;
    byKind.set(kind, e);
  }
  const top = [...byKind].sort((x, y) => y[1].bytes - x[1].bytes).slice(0, Number(process.env.BENCH_HEAP_TOP ?? 25));
  process.stdout.write(
    JSON.stringify(
      {
        bench: 'heap-anchor',
        rate: RATE,
        checkout: process.env.BENCH_WITNESS_CHECKOUT ?? 'this tree',
        anchors_between_snapshots: anchors,
        errors: r.errors,
        new_live_bytes_per_anchor: Math.round(total / anchors),
        new_live_objects_per_anchor: Number((count / anchors).toFixed(2)),
        top: top.map(([k, e]) => ({
          kind: k,
          per_anchor: Number((e.count / anchors).toFixed(2)),
          bytes_per_anchor: Math.round(e.bytes / anchors),
        })),
      },
      null,
      1,
    ) + '\n',
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
