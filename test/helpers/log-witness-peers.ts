/**
 * Anchor witnesses that cosign each other's own logs (SPEC §4.1), in process on loopback: each runs
 * the anchor and cosign roles, lists the others' log origins and log vkeys in --logs and the
 * others' URLs and cosigner vkeys in --log-witnesses. Ports are chosen before start so each file
 * can name the others; a peer restarts on its port and data dir.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import type { KeyObject } from 'node:crypto';
import { pino } from 'pino';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { mlDsa44KeyFromSeed, mlDsa44PublicKeyBytes } from '../../src/crypto/ml-dsa.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { SIG_TYPE_COSIGNATURE_V1, SIG_TYPE_ED25519, SIG_TYPE_SUBTREE_V1 } from '../../src/note/signed-note.ts';
import { formatVkey } from '../../src/note/vkey.ts';
import { startWitness, type RunningWitness, type WitnessConfig } from '../../src/witness/node.ts';
import { encodeAnchor } from '../../src/anchor/codec.ts';
import { sha256Hex } from '../../src/crypto/sha256.ts';
import { parseCheckpoint, type Checkpoint } from '../../src/note/checkpoint.ts';
import { parseNote } from '../../src/note/signed-note.ts';
import { deriveSeedId } from '../../src/anchor/seed.ts';
import { edParty, fill, signAnchor } from './anchors.ts';
import { get, post } from './witness.ts';

export const alice = edParty(0x09);
export const REGISTRY = { parties: [{ id: 'EAlice', keys: [{ curve: 'ed25519', public_key: encodeHex(alice.publicKey) }] }] };

export interface Peer {
  name: string;
  origin: string;
  dir: string;
  port: number;
  url: string;
  witnessKey: KeyObject;
  cosignKey: KeyObject;
  /** The own log's vkey (type 0x01, name = origin). */
  logVkey: string;
  /** The cosigner vkey (type 0x04, name = the witness name). */
  cosignVkey: string;
  /** A second cosign key, ML-DSA-44 (type 0x06), when asked for. */
  mlDsaKey: KeyObject | undefined;
  /** Every cosigner vkey, in --cosign-key order (what --log-witnesses lists for this peer). */
  cosignVkeys: string[];
  node: RunningWitness | undefined;
}

/**
 * A free loopback port for a node that must be named before it starts (its peers list its URL).
 * Picked below Linux's ephemeral range (32768–60999 by default): a port the kernel hands out for
 * `listen(0)` or an outgoing connection elsewhere in a parallel test run cannot take it between this
 * probe and the node's own listen (a race seen once under load).
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const srv = net.createServer();
    const ok = await new Promise<boolean>((r) => {
      srv.once('error', () => {
        r(false);
      });
      srv.listen(port, '127.0.0.1', () => {
        r(true);
      });
    });
    if (ok) {
      await new Promise((r) => srv.close(r));
      return port;
    }
    if (attempt > 50) throw new Error('no free loopback port below the ephemeral range');
  }
}

export async function makePeer(i: number, dir: string, opts: { mlDsa?: boolean } = {}): Promise<Peer> {
  const name = `w${i}.test`;
  const origin = `${name}/anchors`;
  const witnessKey = ed25519KeyFromSeed(fill(0x10 + i));
  const cosignKey = ed25519KeyFromSeed(fill(0x20 + i));
  const port = await freePort();
  const mlDsaKey = opts.mlDsa === true ? mlDsa44KeyFromSeed(fill(0x30 + i)) : undefined;
  const cosignVkey = formatVkey(name, SIG_TYPE_COSIGNATURE_V1, ed25519PublicKeyBytes(cosignKey));
  return {
    name,
    origin,
    dir: join(dir, name),
    port,
    url: `http://127.0.0.1:${port}`,
    witnessKey,
    cosignKey,
    logVkey: formatVkey(origin, SIG_TYPE_ED25519, ed25519PublicKeyBytes(witnessKey)),
    cosignVkey,
    mlDsaKey,
    cosignVkeys:
      mlDsaKey === undefined ? [cosignVkey] : [cosignVkey, formatVkey(name, SIG_TYPE_SUBTREE_V1, mlDsa44PublicKeyBytes(mlDsaKey))],
    node: undefined,
  };
}

function writeKey(path: string, key: KeyObject): void {
  try {
    writeNewKeyFile(
      path,
      key.asymmetricKeyType === 'ed25519' ? ed25519PrivateKeyToPem(key) : (key.export({ format: 'pem', type: 'pkcs8' }) as string),
    );
  } catch (e) {
    if ((e as { code?: string }).code !== 'key_exists') throw e;
  }
}

/** Start `p` with the others as its logs and its log witnesses (quorum = all of them unless given; none: no --log-witnesses). */
export async function startPeer(
  p: Peer,
  others: readonly Peer[],
  over: Partial<WitnessConfig> = {},
  quorum = others.length,
): Promise<Peer> {
  mkdirSync(p.dir, { recursive: true });
  const keyFile = join(p.dir, 'witness.pem');
  const cosignFile = join(p.dir, 'cosign.pem');
  writeKey(keyFile, p.witnessKey);
  writeKey(cosignFile, p.cosignKey);
  const mlDsaFile = join(p.dir, 'cosign-mldsa.pem');
  if (p.mlDsaKey !== undefined) writeKey(mlDsaFile, p.mlDsaKey);
  const f = (n: string) => join(p.dir, n);
  writeFileSync(f('registry.json'), JSON.stringify(REGISTRY));
  writeFileSync(f('logs.json'), JSON.stringify({ logs: others.map((o) => ({ origin: o.origin, keys: [o.logVkey] })) }));
  writeFileSync(
    f('log-witnesses.json'),
    JSON.stringify({ quorum, witnesses: others.map((o) => ({ url: `${o.url}/`, vkeys: o.cosignVkeys })) }),
  );
  p.node = await startWitness(
    {
      host: '127.0.0.1',
      port: p.port,
      dataDir: f('data'),
      keyFile,
      cosignKeyFiles: p.mlDsaKey === undefined ? [cosignFile] : [cosignFile, mlDsaFile],
      name: p.name,
      roles: ['anchor', 'cosign'],
      registryFile: f('registry.json'),
      logsFile: f('logs.json'),
      ...(others.length > 0 ? { logWitnessesFile: f('log-witnesses.json') } : {}),
      logWitnessIntervalMs: 100,
      allowUnderivedSeeds: true,
      dev: false,
      quota: { anchorsPerMinute: 1_000_000, newSeedsPerDay: 1_000_000 },
      verifyThreads: 0,
      ...over,
    },
    pino({ level: 'silent' }),
  );
  return p;
}

let anchorsSent = 0;

/** Anchor `n` new seeds at `p` (sequentially); returns the log size after the last. */
export async function anchorAt(p: Peer, n: number): Promise<number> {
  let size = 0;
  for (let k = 0; k < n; k++) {
    const a = signAnchor(alice, {
      seedId: deriveSeedId('did:keri:EAlice', 'did:keri:EAlice', `lw${anchorsSent++}`),
      index: 1,
      head: fill(1),
      cumulative: 1n,
      timestamp: 1700000000,
    });
    const r = await post(`${p.url}/v1/anchor`, { anchor: encodeAnchor(a), party: { agent: 'EAlice' } });
    if (r.status !== 200) throw new Error(`anchor at ${p.name}: ${r.status} ${r.text}`);
    size = (r.body as { inclusion: { tree_size: number } }).inclusion.tree_size;
  }
  return size;
}

/** `p`'s published GET /log/checkpoint (`query` e.g. '?unwitnessed=1'): the signed note and its checkpoint. */
export async function publishedCheckpoint(p: Peer, query = ''): Promise<{ text: string; cp: Checkpoint }> {
  const r = await get(`${p.url}/log/checkpoint${query}`);
  if (r.status !== 200) throw new Error(`GET ${p.name}/log/checkpoint: ${r.status} ${r.text}`);
  return { text: r.text, cp: parseCheckpoint(parseNote(r.text).text) };
}

/** What `p`'s cosign role serves for the log `origin` at its monitoring endpoint GET /<sha256(origin)>/checkpoint. */
export async function monitoringCheckpoint(p: Peer, origin: string): Promise<{ status: number; text: string }> {
  const r = await get(`${p.url}/${sha256Hex(origin)}/checkpoint`);
  return { status: r.status, text: r.text };
}

/** A sample of a metric from /metrics text (0 when absent). */
export function metricValue(text: string, name: string, labels: Record<string, string>): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const inner = line.slice(name.length + 1, line.indexOf('}'));
    if (want.every((w) => inner.split(',').includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}
