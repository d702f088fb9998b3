/** Shared load-generation pieces for the benchmarks: a witness child process, keep-alive POSTs, pre-signed anchor lanes. */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { encodeAnchor } from '../src/anchor/codec.ts';
import { deriveSeedId } from '../src/anchor/messages.ts';
import { signAnchor } from '../src/client/party.ts';
import { stringifyJson } from '../src/encoding/json.ts';

const ROOT = join(import.meta.dirname, '..');

/** `anchor-witness serve <args>` as a child (listening on a free loopback port); BENCH_PROF adds --cpu-prof. */
export async function spawnWitness(args: string[]): Promise<{ url: URL; stop: () => Promise<void> }> {
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_PROF !== undefined ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROF] : []),
      join(ROOT, 'bin', 'anchor-witness.js'), 'serve', '--listen', '127.0.0.1:0', '--log-level', 'warn', ...args,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  return {
    url: new URL(line.replace('listening on ', '')),
    stop: () =>
      new Promise((r) => {
        child.once('exit', () => {
          r();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** POST `body` over a keep-alive agent; resolves with the status once the response is read. */
export function post(agent: http.Agent, url: URL, path: string, body: Buffer, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path, method: 'POST', agent, headers: { ...headers, 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', () => {
        resolve(res.statusCode ?? 0);
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

export interface Lane {
  bodies: Buffer[];
  next: number;
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
        const a = signAnchor(p.privateKey, 'ed25519', { seedId, index: i, head: randomBytes(32), cumulative: BigInt(i), timestamp: 1700000000 + i, witnessSet: { said: 'EBench', threshold: 1 } });
        bodies.push(Buffer.from(stringifyJson({ anchor: encodeAnchor(a), party: { agent: p.id, root: p.id, scope } })));
      }
      lanes.push({ bodies, next: 0 });
    }
  }
  return lanes;
}
