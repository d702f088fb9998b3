/**
 * `node bench/_profile-anchor.ts`: a CPU profile of the anchor path. Starts the witness (role
 * anchor, SQLite, commits synced before replies) with `--cpu-prof` (one profile per thread: the event loop and
 * each worker), drives it for BENCH_SECONDS (default 15) with BENCH_CONCURRENCY (default 256)
 * closed-loop clients of pre-signed anchors, stops it, and prints as JSON the top
 * BENCH_PROFILE_TOP (default 10) functions and areas by self time, per thread kind and for all
 * threads together. BENCH_PROFILE_RATE=<n> drives it open loop at n anchors/s instead (the
 * half-peak case). Not part of `npm run bench` (the profiler itself costs CPU).
 * BENCH_PROFILE_KEEP=<dir> keeps the .cpuprofile files there (open them in Chrome DevTools).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ed25519PrivateKeyToPem, generateEd25519 } from '../src/crypto/ed25519.ts';
import { encodeHex } from '../src/encoding/hex.ts';
import { writeNewKeyFile } from '../src/keys/keyfile.ts';
import { anchorServeArgs, closedLoop, LoadClient, makeLanes, openLoop, spawnWitness, threadCpuPerOpUs } from './_load.ts';
import { summarizeProfiles, type CpuProfile } from './_cpuprofile.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 256);
const TOP = Number(process.env.BENCH_PROFILE_TOP ?? 10);
const RATE = Number(process.env.BENCH_PROFILE_RATE ?? 0);
const dir = mkdtempSync(join(tmpdir(), 'aw-bench-prof-'));
const profDir = process.env.BENCH_PROFILE_KEEP ?? join(dir, 'prof');
mkdirSync(profDir, { recursive: true });
const parties = Array.from({ length: 20 }, (_, i) => ({ id: `did:keri:EParty${i}`, ...generateEd25519() }));
writeFileSync(
  join(dir, 'registry.json'),
  JSON.stringify({ parties: parties.map((p) => ({ id: p.id, keys: [{ curve: 'ed25519', public_key: encodeHex(p.publicKey) }] })) }),
);
writeNewKeyFile(join(dir, 'w.pem'), ed25519PrivateKeyToPem(generateEd25519().privateKey));

try {
  const before = new Set(readdirSync(profDir));
  process.env.BENCH_PROF = profDir;
  const spawned = performance.now();
  const w = await spawnWitness(anchorServeArgs(dir, join(dir, 'data')));
  const lanes = makeLanes(parties, 100, Math.ceil(((SECONDS + 2) * 4000) / 2000) + 5);
  const sources = ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4'];
  const client = new LoadClient(w.url, CONCURRENCY, sources);
  await closedLoop(lanes, CONCURRENCY, 2, (_w, body) => client.post('/v1/anchor', body, 'application/json')); // warm-up
  const t = performance.now();
  // the profile starts with the process: count from the end of the warm-up (µs)
  const afterUs = (t - spawned) * 1000;
  const send = (_w: number, body: Buffer) => client.post('/v1/anchor', body, 'application/json');
  const cpu0 = w.threadCpuMs();
  const r = RATE > 0 ? await openLoop(lanes, RATE, SECONDS, send) : await closedLoop(lanes, CONCURRENCY, SECONDS, send);
  const cpu1 = w.threadCpuMs();
  const anchorsPerS = Math.round(r.count / ((performance.now() - t) / 1000));
  client.close();
  await w.stop();
  const files = readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile') && !before.has(f));
  // Node names them CPU.<date>.<time>.<pid>.<tid>.<seq>.cpuprofile; thread 0 is the event loop
  const load = (f: string) => JSON.parse(readFileSync(join(profDir, f), 'utf8')) as CpuProfile;
  const isMain = (f: string) => f.split('.')[4] === '0';
  const all = files.map(load);
  const origin = Math.min(...all.map((p) => p.startTime));
  const summary = (ps: CpuProfile[]) => summarizeProfiles(ps, TOP, afterUs, origin);
  process.stdout.write(
    JSON.stringify(
      {
        bench: 'profile-anchor',
        node: process.version,
        seconds: SECONDS,
        concurrency: CONCURRENCY,
        anchors: r.count,
        anchors_per_s: anchorsPerS,
        open_loop_rate: RATE > 0 ? RATE : undefined,
        witness_cpu_us_per_anchor: threadCpuPerOpUs(cpu0, cpu1, r.count),
        errors: r.errors,
        profiles: files.length,
        all_threads: summary(all),
        event_loop: summary(files.filter(isMain).map(load)),
        workers: summary(files.filter((f) => !isMain(f)).map(load)),
      },
      null,
      2,
    ) + '\n',
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
