/**
 * `node bench/_micro-anchor.ts`: in-process CPU cost of pieces of the anchor path, for issue 28's
 * levers measured before/after. BENCH_MICRO_TREES=label=/checkout,label=/checkout (default: this
 * checkout alone) names the trees; each round runs one child process per tree, interleaved
 * (A B A B …, BENCH_MICRO_ROUNDS rounds, default 3), and every child imports that tree's own
 * modules. Per piece, the event-loop thread's CPU µs per operation (process.threadCpuUsage):
 *  - `json_parse_us`: parseStrictJson of a POST /v1/anchor body (as the server's body parser calls it);
 *  - `seed_put_us`: a batch's seed upserts and quota events through the SQLite store's transaction
 *    (batches of BENCH_MICRO_BATCH, default 100, over 2 000 seeds: mostly updates, as at peak),
 *    BEGIN and COMMIT included, per anchor;
 *  - `reply_us`: the 200 body's JSON text from the stored record and its inclusion material, per
 *    reply, as sendOutcome writes it (cosignedBodyJson where the tree has it, else
 *    anchorBodyJson(cosignedBody(…)), which trees before lever 5 had);
 *  - `hex32_us`, `hex64_us`: encodeHex of 32 and 64 bytes.
 * Prints a JSON line per child and, at the end, each figure's ratio against the first tree per round.
 * Not part of `npm run bench`.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROUNDS = Number(process.env.BENCH_MICRO_ROUNDS ?? 3);
const BATCH = Number(process.env.BENCH_MICRO_BATCH ?? 100);
/** BENCH_MICRO_PARTS=json,hex,reply,store (default all): the pieces to measure. */
const PARTS = new Set((process.env.BENCH_MICRO_PARTS ?? 'json,hex,reply,store').split(','));
const STORE_SECONDS = Number(process.env.BENCH_MICRO_STORE_SECONDS ?? 3);

type Figures = Record<string, number>;

/** Event-loop thread CPU µs per call of `fn` over about `ms` of it (after a warm-up). */
function cpuPerOp(fn: () => void, ms = 1500, warm = 300): number {
  const end0 = performance.now() + warm;
  while (performance.now() < end0) fn();
  let ops = 0;
  const t0 = process.threadCpuUsage();
  const end = performance.now() + ms;
  while (performance.now() < end) {
    for (let i = 0; i < 20; i++) fn();
    ops += 20;
  }
  const t = process.threadCpuUsage(t0);
  return (t.user + t.system) / ops;
}

async function child(tree: string): Promise<Figures> {
  const mod = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(tree, path)).href)) as T;
  const json = await mod<typeof import('../src/encoding/json.ts')>('src/encoding/json.ts');
  const hex = await mod<typeof import('../src/encoding/hex.ts')>('src/encoding/hex.ts');
  const codec = await mod<typeof import('../src/anchor/codec.ts')>('src/anchor/codec.ts');
  const reply = await mod<typeof import('../src/anchoring/reply.ts') & Record<string, unknown>>('src/anchoring/reply.ts');
  const proofs = await mod<typeof import('../src/log/proofs.ts')>('src/log/proofs.ts');
  const sqlite = await mod<typeof import('../src/store/sqlite/store.ts')>('src/store/sqlite/store.ts');
  type Anchor = import('../src/anchor/types.ts').Anchor;
  type SeedRecord = import('../src/store/types.ts').SeedRecord;

  const parties = Array.from({ length: 20 }, (_, i) => `did:keri:EParty${i}`);
  const anchor = (seedId: Uint8Array, index: number): Anchor => ({
    seedId,
    index,
    head: randomBytes(32),
    cumulative: BigInt(index),
    timestamp: 1700000000 + index,
    witnessSet: { said: 'EBench', threshold: 1 },
    sigParty: { curve: 'ed25519', publicKey: randomBytes(32), signature: randomBytes(64) },
  });
  const seeds = Array.from({ length: 2000 }, () => randomBytes(32));
  const figures: Figures = {};

  // json: request bodies as bench/_load.ts makeLanes writes them
  const keys = new Set(['cumulative']);
  const bodies = seeds.slice(0, 500).map((s, i) =>
    json.stringifyJson({
      anchor: codec.encodeAnchor(anchor(s, i + 1)),
      party: { agent: parties[i % 20]!, root: parties[i % 20]!, scope: `S${i}-${randomBytes(4).toString('hex')}` },
    }),
  );
  let k = 0;
  if (PARTS.has('json'))
    figures.json_parse_us = cpuPerOp(() => json.parseStrictJson(bodies[k++ % bodies.length]!, { bigIntegerKeys: keys }));

  // hex
  const b32 = randomBytes(32);
  const b64 = randomBytes(64);
  if (PARTS.has('hex')) {
    figures.hex32_us = cpuPerOp(() => hex.encodeHex(b32));
    figures.hex64_us = cpuPerOp(() => hex.encodeHex(b64));
  }

  // reply: a batch's replies share the checkpoint note and the cosignature time
  const witness = { name: 'witness.example/anchor', publicKeyHex: randomBytes(32).toString('hex') };
  const note = `witness.example/anchor\n1234567\n${randomBytes(32).toString('base64')}\n\n— witness.example/anchor ${randomBytes(68).toString('base64')}\n`;
  const checkpoint = { size: 1234567, root: randomBytes(32), note };
  const records: { record: SeedRecord; proof: Uint8Array[] }[] = seeds.slice(0, BATCH).map((s, i) => ({
    record: {
      seedId: s,
      owner: parties[i % 20]!,
      createdAt: 1700000000,
      latest: anchor(s, i + 1),
      cosignature: { signature: randomBytes(64), timestamp: 1700000500, leafIndex: 1234467 + i },
    },
    proof: Array.from({ length: 21 }, () => randomBytes(32)),
  }));
  const inclusions = records.map((r) =>
    proofs.formatInclusion('witness.example/anchor', r.record.cosignature.leafIndex, checkpoint, r.proof),
  );
  const direct = reply.cosignedBodyJson as
    ((w: typeof witness, r: SeedRecord, i: (typeof inclusions)[number], replay: boolean) => string) | undefined;
  const legacy = reply.anchorBodyJson as ((body: unknown) => string) | undefined;
  let j = 0;
  if (PARTS.has('reply'))
    figures.reply_us = cpuPerOp(() => {
      const n = j++ % records.length;
      const r = records[n]!.record;
      const inc = inclusions[n]!;
      if (direct !== undefined) direct(witness, r, inc, false);
      else legacy!(reply.cosignedBody(witness, r, inc, false));
    });
  let f = 0;
  if (PARTS.has('reply'))
    figures.format_inclusion_us = cpuPerOp(() => {
      const r = records[f++ % records.length]!;
      proofs.formatInclusion('witness.example/anchor', r.record.cosignature.leafIndex, checkpoint, r.proof);
    });

  // store: batches of seed upserts and quota events, BEGIN … COMMIT (durable) included
  if (!PARTS.has('store')) return round3(figures);
  const dir = mkdtempSync(join(tmpdir(), 'aw-micro-'));
  try {
    const store = sqlite.SqliteStore.open(join(dir, 'w.db'));
    // The records are made before the clock runs (their random bytes would cost more than the rows):
    // the seeds' anchors in turn, each seed's index rising.
    const pool: { record: SeedRecord; isNew: boolean; party: string }[] = [];
    const index = new Map<number, number>();
    for (let i = 0; i < 4 * seeds.length; i++) {
      const n = i % seeds.length;
      const ix = (index.get(n) ?? 0) + 1;
      index.set(n, ix);
      const s = seeds[n]!;
      pool.push({
        record: {
          seedId: s,
          owner: parties[n % 20]!,
          createdAt: 1700000000,
          latest: anchor(s, ix),
          cosignature: { signature: b64, timestamp: 1700000000 + ix, leafIndex: i },
        },
        isNew: ix === 1,
        party: parties[n % 20]!,
      });
    }
    let next = 0;
    const batch = async (): Promise<void> => {
      await store.transaction(async (tx) => {
        for (let i = 0; i < BATCH; i++) {
          const p = pool[next++ % pool.length]!;
          await tx.anchors.putSeed(p.record, p.isNew, p.party);
        }
      });
    };
    for (let i = 0; i < 2 * Math.ceil(seeds.length / BATCH); i++) await batch(); // every seed exists
    let anchors = 0;
    const t0 = process.threadCpuUsage();
    const end = performance.now() + STORE_SECONDS * 1000;
    while (performance.now() < end) {
      await batch();
      anchors += BATCH;
    }
    const t = process.threadCpuUsage(t0);
    figures.seed_put_us = (t.user + t.system) / anchors;
    await store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return round3(figures);
}

function round3(figures: Figures): Figures {
  for (const key of Object.keys(figures)) figures[key] = Number(figures[key]!.toFixed(3));
  return figures;
}

if (process.argv[2] === '--child') {
  process.stdout.write(JSON.stringify(await child(resolve(process.argv[3]!))) + '\n');
} else {
  const trees = (process.env.BENCH_MICRO_TREES ?? `this=${resolve(import.meta.dirname, '..')}`).split(',').map((v) => {
    const cut = v.indexOf('=');
    return { label: v.slice(0, cut), path: v.slice(cut + 1) };
  });
  const results: Figures[][] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const round: Figures[] = [];
    for (const t of trees) {
      const out = spawnSync(process.execPath, [import.meta.filename, '--child', t.path], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      if (out.status !== 0) throw new Error(`child for ${t.label} failed (${String(out.status)})`);
      const figures = JSON.parse(out.stdout) as Figures;
      round.push(figures);
      process.stdout.write(JSON.stringify({ round: r + 1, tree: t.label, ...figures }) + '\n');
    }
    results.push(round);
  }
  if (trees.length > 1) {
    const keys = Object.keys(results[0]![0]!);
    for (let v = 1; v < trees.length; v++) {
      const ratios: Record<string, number[]> = {};
      for (const key of keys) ratios[key] = results.map((round) => Number((round[v]![key]! / round[0]![key]!).toFixed(3)));
      process.stdout.write(JSON.stringify({ ratio: `${trees[v]!.label} / ${trees[0]!.label}`, ...ratios }) + '\n');
    }
  }
}
