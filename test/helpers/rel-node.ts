/**
 * A witness deployment for the reliability suites: key files, a party registry, a known-logs file
 * with synthetic logs (so add-checkpoint load has real checkpoints and consistency proofs), and the
 * real `anchor-witness serve` command line run as a child process (so SIGKILL, RSS and latency are
 * those of a separate server process), or the node in-process (`startTestNode`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash, type KeyObject } from 'node:crypto';
import { pino } from 'pino';
import { encodeAnchor } from '../../src/anchor/codec.ts';
import { deriveSeedId } from '../../src/anchor/seed.ts';
import type { Anchor } from '../../src/anchor/types.ts';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { startWitness, type RunningWitness, type WitnessConfig } from '../../src/witness/node.ts';
import { edParty, fill, signAnchor, type TestParty } from './anchors.ts';
import { SyntheticLog } from './cosign-harness.ts';
import { toJson } from './rel-common.ts';
import { spawnServe, type ServeChild as BaseServeChild } from './spawn-serve.ts';

export const NAME = 'witness.rel/w1';
export const ORIGIN = `${NAME}/anchors`;
export const AGENT = 'did:keri:ERelAgent';

export interface Deployment {
  dir: string;
  keyFile: string;
  cosignKeyFile: string;
  registryFile: string;
  logsFile: string;
  dataDir: string;
  witnessSeed: Uint8Array;
  cosignSeed: Uint8Array;
  party: TestParty;
  logs: SyntheticLog[];
}

/** Write keys (0600), a registry with one party (no quota to speak of) and `logCount` synthetic logs. */
export function makeDeployment(dir: string, opts: { logCount?: number; dataDir?: string } = {}): Deployment {
  const witnessSeed = fill(0x71);
  const cosignSeed = fill(0x72);
  const keyFile = join(dir, 'witness.pem');
  const cosignKeyFile = join(dir, 'cosign.pem');
  writeNewKeyFile(keyFile, ed25519PrivateKeyToPem(ed25519KeyFromSeed(witnessSeed)));
  writeNewKeyFile(cosignKeyFile, ed25519PrivateKeyToPem(ed25519KeyFromSeed(cosignSeed)));
  const party = edParty(0x73);
  const registryFile = join(dir, 'registry.json');
  writeFileSync(
    registryFile,
    JSON.stringify({
      parties: [
        {
          id: AGENT,
          keys: [{ curve: 'ed25519', public_key: encodeHex(party.publicKey) }],
          limits: { anchors_per_minute: 100_000_000, new_seeds_per_day: 100_000_000 },
        },
      ],
    }),
  );
  const logs = Array.from(
    { length: opts.logCount ?? 4 },
    (_, i) => new SyntheticLog(`log${i}.rel.example/log`, ed25519KeyFromSeed(fill(0x80 + i))),
  );
  const logsFile = join(dir, 'logs.json');
  writeFileSync(logsFile, JSON.stringify({ logs: logs.map((l) => ({ origin: l.origin, keys: [l.vkey] })) }));
  return {
    dir,
    keyFile,
    cosignKeyFile,
    registryFile,
    logsFile,
    dataDir: opts.dataDir ?? join(dir, 'data'),
    witnessSeed,
    cosignSeed,
    party,
    logs,
  };
}

/** A derived seed (root = agent, scope = `scope`) and its anchors: index i gets head H(lane, i). */
export class Lane {
  readonly scope: string;
  readonly seedId: Uint8Array;
  readonly party: TestParty;
  /** next index to submit */
  next = 1;

  constructor(party: TestParty, scope: string) {
    this.party = party;
    this.scope = scope;
    this.seedId = deriveSeedId(AGENT, AGENT, scope);
  }

  anchor(index = this.next): Anchor {
    const head = createHash('sha256').update(`${this.scope}#${index}`).digest();
    return signAnchor(this.party, {
      seedId: this.seedId,
      index,
      head,
      cumulative: BigInt(index) * 10n,
      timestamp: 1_700_000_000 + index,
      witnessSet: { said: 'ERelSet', threshold: 1 },
    });
  }

  body(index = this.next): string {
    return toJson({ anchor: encodeAnchor(this.anchor(index)), party: { agent: AGENT, root: AGENT, scope: this.scope } });
  }
}

export interface ServeChild extends BaseServeChild {
  /** peak resident set size so far (VmHWM, KiB), or NaN when /proc is not readable */
  peakRssKiB(): number;
  rssKiB(): number;
}

function procStatus(pid: number | undefined, field: string): number {
  if (pid === undefined) return NaN;
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? NaN : Number(m[1]);
  } catch {
    return NaN;
  }
}

/** The serve flags for a deployment (roles anchor and cosign). */
export function serveArgs(d: Deployment, extra: readonly string[] = []): string[] {
  return [
    'serve',
    '--listen',
    '127.0.0.1:0',
    '--data-dir',
    d.dataDir,
    '--key',
    d.keyFile,
    '--name',
    NAME,
    '--roles',
    'anchor,cosign',
    '--cosign-key',
    d.cosignKeyFile,
    '--registry',
    d.registryFile,
    '--logs',
    d.logsFile,
    ...extra,
  ];
}

/** Run `anchor-witness <args>` and resolve once it prints `listening on URL`. */
export async function startServe(args: readonly string[], env: Record<string, string> = {}): Promise<ServeChild> {
  const w = await spawnServe(args, { env });
  return { ...w, peakRssKiB: () => procStatus(w.child.pid, 'VmHWM'), rssKiB: () => procStatus(w.child.pid, 'VmRSS') };
}

/** The node in-process (for fuzzing: the store is at hand to compare state before and after). */
export async function startTestNode(d: Deployment, over: Partial<WitnessConfig> = {}): Promise<RunningWitness> {
  return startWitness(
    {
      host: '127.0.0.1',
      port: 0,
      dataDir: d.dataDir,
      keyFile: d.keyFile,
      cosignKeyFiles: [d.cosignKeyFile],
      name: NAME,
      roles: ['anchor', 'cosign'],
      registryFile: d.registryFile,
      logsFile: d.logsFile,
      allowUnderivedSeeds: false,
      dev: false,
      quota: { anchorsPerMinute: 100_000_000, newSeedsPerDay: 100_000_000 },
      ...over,
    },
    pino({ level: 'silent' }),
  );
}

export const witnessPublicKey = (d: Deployment): Uint8Array => ed25519PublicKeyBytes(ed25519KeyFromSeed(d.witnessSeed));
export const cosignPublicKey = (d: Deployment): Uint8Array => ed25519PublicKeyBytes(ed25519KeyFromSeed(d.cosignSeed));
export type { KeyObject };
