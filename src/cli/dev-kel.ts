/**
 * The `npm start` demo of parties' keys from key event logs (SPEC §3.5): a root and an agent it
 * delegates, as KEL files in a `dir:` source under the dev data dir, built from seeds kept in
 * `kel-demo.json` (0600) there. Rebuilding from the same seeds gives the same events (Ed25519 is
 * deterministic), so a rotation only appends: `node src/cli/dev-kel.ts rotate` adds a `drt` with a
 * new key, has the root anchor it, rewrites both files by rename and writes a demo anchor request
 * signed by the new key. The running witness follows without a registry edit.
 */
import { randomBytes, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { anchorRequest, signAnchor } from '../client/party.ts';
import { ed25519KeyFromSeed } from '../crypto/ed25519.ts';
import { decodeHex, encodeHex } from '../encoding/hex.ts';
import { stringifyJson } from '../encoding/json.ts';
import { writeFileAtomic } from '../client/files.ts';
import { deriveSeedId } from '../anchor/seed.ts';
import { ed25519Signer, KelBuilder } from '../keri/build.ts';

/** The seeds of the demo: the root's current and next key, and the agent's keys in rotation order. */
interface DemoSeeds {
  root: [string, string];
  agent: string[];
}

export interface KelDemo {
  kelDir: string;
  rootId: string;
  agentId: string;
  /** The agent's current key (the last of its seeds). */
  agentKeySeed: Uint8Array;
  rotations: number;
}

const seed = (): string => encodeHex(randomBytes(32));

function loadSeeds(file: string): DemoSeeds {
  if (!existsSync(file)) {
    const fresh: DemoSeeds = { root: [seed(), seed()], agent: [seed(), seed()] };
    writeFileAtomic(file, JSON.stringify(fresh, null, 2) + '\n', 0o600);
    return fresh;
  }
  return JSON.parse(readFileSync(file, 'utf8')) as DemoSeeds;
}

const signer = (hex: string) => ed25519Signer(decodeHex(hex, 32));

/** Build both KELs from the seeds and write them into `kelDir` by rename. */
function writeKels(kelDir: string, seeds: DemoSeeds): KelDemo {
  const root = KelBuilder.incept({ signers: [signer(seeds.root[0])], next: [signer(seeds.root[1])] });
  // The agent: a dip with key 0, then one drt per later key (the last seed is always the next key).
  const agent = KelBuilder.incept({ signers: [signer(seeds.agent[0]!)], next: [signer(seeds.agent[1]!)], delegator: root.prefix });
  root.interact([agent.sealOf(0)]);
  for (let i = 1; i < seeds.agent.length - 1; i++) {
    agent.rotate({ signers: [signer(seeds.agent[i]!)], next: [signer(seeds.agent[i + 1]!)] });
    root.interact([agent.sealOf(i)]);
  }
  mkdirSync(kelDir, { recursive: true });
  for (const kel of [root, agent]) {
    const file = join(kelDir, `${kel.prefix}.kel.json`);
    writeFileSync(`${file}.tmp`, JSON.stringify(kel.document()) + '\n');
    renameSync(`${file}.tmp`, file);
  }
  return {
    kelDir,
    rootId: `did:keri:${root.prefix}`,
    agentId: `did:keri:${agent.prefix}`,
    agentKeySeed: decodeHex(seeds.agent[seeds.agent.length - 2]!, 32),
    rotations: seeds.agent.length - 2,
  };
}

/** The demo's KEL files (created on first use), as they stand. */
export function ensureKelDemo(dataDir: string): KelDemo {
  return writeKels(join(dataDir, 'kels'), loadSeeds(join(dataDir, 'kel-demo.json')));
}

/** Rotate the agent to its next key (anchored by the root at once); rewrites the files by rename. */
export function rotateKelDemo(dataDir: string): KelDemo {
  const file = join(dataDir, 'kel-demo.json');
  const seeds = loadSeeds(file);
  seeds.agent.push(seed());
  writeFileAtomic(file, JSON.stringify(seeds, null, 2) + '\n', 0o600);
  return writeKels(join(dataDir, 'kels'), seeds);
}

export const KEL_DEMO_SCOPE = 'EKelDemoScope';

/** The party of a demo anchor request: the seed is deriveSeedId(root, agent, scope). */
export interface DemoParty {
  agent: string;
  root: string;
  scope: string;
}

/**
 * A signed demo anchor request (JSON text) of `party` with its Ed25519 `key`: index and cumulative
 * grow with the clock, so a fresh one co-signs on top of earlier runs.
 */
export function demoAnchorRequest(key: KeyObject, party: DemoParty, now = Math.floor(Date.now() / 1000)): string {
  const anchor = signAnchor(key, 'ed25519', {
    seedId: deriveSeedId(party.root, party.agent, party.scope),
    index: now,
    head: new Uint8Array(32).fill(now % 251),
    cumulative: BigInt(now) * 100n,
    timestamp: now,
    witnessSet: { said: 'EDemoWitnessSet', threshold: 1 },
  });
  return stringifyJson(anchorRequest(anchor, party), 2) + '\n';
}

/** A signed anchor request of the demo agent with its current key. */
export function kelDemoRequest(demo: KelDemo, now = Math.floor(Date.now() / 1000)): string {
  const party = { agent: demo.agentId, root: demo.rootId, scope: KEL_DEMO_SCOPE };
  return demoAnchorRequest(ed25519KeyFromSeed(demo.agentKeySeed), party, now);
}

if (import.meta.main) {
  const dataDir = resolve(process.env.AW_DEV_DATA_DIR ?? '.data/dev');
  if (process.argv[2] !== 'rotate') {
    process.stderr.write('usage: node src/cli/dev-kel.ts rotate\n');
    process.exit(2);
  }
  const demo = rotateKelDemo(dataDir);
  const requestFile = join(dataDir, 'demo-kel-anchor-request.json');
  writeFileSync(requestFile, kelDemoRequest(demo));
  process.stdout.write(`rotated ${demo.agentId} (rotation ${demo.rotations}); the root anchored it; files renamed into ${demo.kelDir}
a fresh anchor request signed by the new key: ${requestFile}
the witness reloads within about a second (rename watched); resend the old request to see key_not_current.
`);
}
