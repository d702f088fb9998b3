/**
 * The `npm start` demo of parties' keys from key event logs (SPEC §3.5): a root and an agent it
 * delegates, as KEL files in a `dir:` source under the dev data dir (`kels/`), made and rotated
 * with the code of `anchor-witness kel init | delegate | rotate` (src/cli/kel-author.ts): seeds in
 * `kel-keys/` (0600 files), the two prefixes in `kel-demo.json`. `node src/cli/dev-kel.ts rotate`
 * (the same as `anchor-witness kel rotate --dir kels --keys kel-keys --prefix AGENT`) appends a
 * `drt` with the next key, has the root anchor it, rewrites both files by rename and writes a demo
 * anchor request signed by the new key. The running witness follows without a registry edit.
 */
import type { KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { anchorRequest, signAnchor } from '../client/party.ts';
import { ed25519KeyFromSeed } from '../crypto/ed25519.ts';
import { decodeHex } from '../encoding/hex.ts';
import { stringifyJson } from '../encoding/json.ts';
import { writeFileAtomic } from '../client/files.ts';
import { deriveSeedId } from '../anchor/seed.ts';
import { ed25519Signer, KelBuilder } from '../keri/build.ts';
import { currentSeed, delegateKel, importKelSeeds, initKel, readKelDocument, rotateKel } from './kel-author.ts';

/** kel-demo.json: the prefixes of the demo's root and agent. */
interface DemoState {
  root: string;
  agent: string;
}

export interface KelDemo {
  kelDir: string;
  rootId: string;
  agentId: string;
  /** The agent's current key. */
  agentKeySeed: Uint8Array;
  rotations: number;
}

const dirsOf = (dataDir: string): { kelDir: string; keysDir: string; stateFile: string } => ({
  kelDir: join(dataDir, 'kels'),
  keysDir: join(dataDir, 'kel-keys'),
  stateFile: join(dataDir, 'kel-demo.json'),
});

/**
 * Data dirs of earlier releases kept the seeds themselves in kel-demo.json (`{root: [key, next],
 * agent: [keys in rotation order]}`), the same order kel-author keeps: move them to key files.
 */
function migrateSeeds(keysDir: string, old: { root: string[]; agent: string[] }): DemoState {
  const signer = (hex: string) => ed25519Signer(decodeHex(hex, 32));
  const root = KelBuilder.incept({ signers: [signer(old.root[0]!)], next: [signer(old.root[1]!)] }).prefix;
  const agent = KelBuilder.incept({ signers: [signer(old.agent[0]!)], next: [signer(old.agent[1]!)], delegator: root }).prefix;
  if (!existsSync(join(keysDir, `${root}.kel-keys.json`))) importKelSeeds(keysDir, root, old.root);
  if (!existsSync(join(keysDir, `${agent}.kel-keys.json`))) importKelSeeds(keysDir, agent, old.agent);
  return { root, agent };
}

function loadState(dataDir: string): DemoState {
  const { kelDir, keysDir, stateFile } = dirsOf(dataDir);
  mkdirSync(kelDir, { recursive: true });
  mkdirSync(keysDir, { recursive: true, mode: 0o700 });
  let state: DemoState;
  if (!existsSync(stateFile)) {
    const root = initKel(kelDir, keysDir);
    state = { root: root.prefix, agent: delegateKel(kelDir, keysDir, root.prefix).prefix };
  } else {
    const doc = JSON.parse(readFileSync(stateFile, 'utf8')) as DemoState | { root: string[]; agent: string[] };
    if (typeof doc.root === 'string') return doc as DemoState;
    state = migrateSeeds(keysDir, doc as { root: string[]; agent: string[] });
  }
  writeFileAtomic(stateFile, JSON.stringify(state, null, 2) + '\n', 0o600);
  return state;
}

function demoOf(dataDir: string, state: DemoState): KelDemo {
  const { kelDir, keysDir } = dirsOf(dataDir);
  return {
    kelDir,
    rootId: `did:keri:${state.root}`,
    agentId: `did:keri:${state.agent}`,
    agentKeySeed: currentSeed(kelDir, keysDir, state.agent),
    rotations: readKelDocument(kelDir, state.agent).events.filter((e) => e.t === 'drt').length,
  };
}

/** The demo's KEL files (created on first use), as they stand. */
export function ensureKelDemo(dataDir: string): KelDemo {
  return demoOf(dataDir, loadState(dataDir));
}

/** Rotate the agent to its next key (anchored by the root at once); rewrites the files by rename. */
export function rotateKelDemo(dataDir: string): KelDemo {
  const state = loadState(dataDir);
  const { kelDir, keysDir } = dirsOf(dataDir);
  rotateKel(kelDir, keysDir, state.agent);
  return demoOf(dataDir, state);
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
