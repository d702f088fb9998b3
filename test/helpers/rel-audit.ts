/**
 * Auditing a witness from the outside, the way a monitor does: the log from its tiles (entry
 * bundles and hash tiles, checked against the signed checkpoint), every checkpoint ever seen
 * checked against the final tree (a prefix: no rollback, no fork), every acknowledged anchor at its
 * leaf index, no two co-signed heads at one (seed, index); and the cosign role's per-origin
 * checkpoints (never behind what was acknowledged, only real roots, times never going backwards).
 */
import assert from 'node:assert/strict';
import { cosignMessage } from '../../src/anchor/messages.ts';
import type { Anchor } from '../../src/anchor/types.ts';
import { sha256Hex } from '../../src/crypto/sha256.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { parseCheckpoint } from '../../src/note/checkpoint.ts';
import { parseCosignatureLine } from '../../src/note/cosignature.ts';
import { verifyNote, formatSignatureLine } from '../../src/note/signed-note.ts';
import { cosignatureNoteVerifier, ed25519NoteVerifier, type NoteVerifier } from '../../src/note/vkey.ts';
import { hashLeaf } from '../../src/tlog/hash.ts';
import { memoryHashReader, treeRoot } from '../../src/tlog/merkle.ts';
import { decodeEntryBundle, decodeTile, entryBundlePath, tilePath } from '../../src/tlog/tiles.ts';
import type { SyntheticLog } from './cosign-harness.ts';

async function getBytes(url: string): Promise<Uint8Array> {
  const res = await fetch(url);
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${Buffer.from(bytes).toString().slice(0, 200)}`);
  return bytes;
}

export interface AckedAnchor {
  anchor: Anchor;
  leafIndex: number;
}

export class WitnessAudit {
  readonly origin: string;
  private readonly verifier: NoteVerifier;
  /** entry bytes from full (immutable) entry bundles; partial ones are re-read each audit */
  private fullEntries: Uint8Array[] = [];
  /** size → root hex of every checkpoint seen (responses and audits) */
  readonly seen = new Map<number, string>();
  equivocations = 0;
  audits = 0;
  lastSize = 0;

  constructor(origin: string, witnessPublicKey: Uint8Array) {
    this.origin = origin;
    this.verifier = ed25519NoteVerifier(origin, witnessPublicKey);
  }

  /** Record a checkpoint note returned to a client (verifies the witness signature). */
  record(note: string): { size: number; root: string } {
    verifyNote(note, [this.verifier]);
    const cp = parseCheckpoint(note.slice(0, note.indexOf('\n\n') + 1));
    assert.equal(cp.origin, this.origin);
    const root = encodeHex(cp.rootHash);
    const prev = this.seen.get(cp.size);
    if (prev !== undefined && prev !== root) this.equivocations++;
    this.seen.set(cp.size, root);
    return { size: cp.size, root };
  }

  /**
   * Audit the served log: checkpoint signature; entries and level-0/1 hash tiles agree with its
   * root; every checkpoint seen so far is a prefix of it; the log never shrank. Returns the entries.
   */
  async audit(url: string): Promise<Uint8Array[]> {
    this.audits++;
    const note = Buffer.from(await getBytes(`${url}/log/checkpoint`)).toString('utf8');
    const { size, root } = this.record(note);
    assert.ok(size >= this.lastSize, `log shrank from ${this.lastSize} to ${size}`);
    this.lastSize = size;
    const fullBundles = Math.floor(size / 256);
    const entries = this.fullEntries.slice(0, fullBundles * 256);
    for (let n = Math.floor(entries.length / 256); n * 256 < size; n++) {
      const width = Math.min(256, size - n * 256);
      const bundle = decodeEntryBundle(await getBytes(`${url}/log/${entryBundlePath({ index: n, width })}`), width);
      entries.push(...bundle);
      if (width === 256) this.fullEntries.push(...bundle);
    }
    assert.equal(entries.length, size);
    const leafHashes = entries.map(hashLeaf);
    const read = memoryHashReader(leafHashes);
    assert.equal(encodeHex(treeRoot(size, read)), root, 'entries do not hash to the checkpoint root');
    // hash tiles: level 0 (leaf hashes) for the last two tiles, level 1 (256-leaf subtrees) in full
    for (let n = Math.max(0, Math.ceil(size / 256) - 2); n * 256 < size; n++) {
      const width = Math.min(256, size - n * 256);
      const tile = decodeTile(await getBytes(`${url}/log/${tilePath({ level: 0, index: n, width })}`), width);
      tile.forEach((h, i) => {
        assert.equal(encodeHex(h), encodeHex(leafHashes[n * 256 + i]!), `tile 0/${n} hash ${i}`);
      });
    }
    const level1 = Math.floor(size / 256);
    for (let n = 0; n * 256 < level1; n++) {
      const width = Math.min(256, level1 - n * 256);
      const tile = decodeTile(await getBytes(`${url}/log/${tilePath({ level: 1, index: n, width })}`), width);
      tile.forEach((h, i) => {
        assert.equal(encodeHex(h), encodeHex(read(8, n * 256 + i)), `tile 1/${n} hash ${i}`);
      });
    }
    for (const [s, r] of this.seen) {
      assert.ok(s <= size, `a checkpoint of size ${s} was served, but the log now has ${size} entries (rollback)`);
      assert.equal(encodeHex(treeRoot(s, read)), r, `checkpoint of size ${s} is not a prefix of the log (fork)`);
    }
    return entries;
  }
}

/** Acknowledged anchors are in the log at their leaf index; no two heads at one (seed, index). */
export function checkAnchors(
  entries: readonly Uint8Array[],
  acked: readonly AckedAnchor[],
): { found: number; cosignEntries: number; duplicityEntries: number } {
  let found = 0;
  for (const a of acked) {
    const e = entries[a.leafIndex];
    assert.ok(e !== undefined, `acknowledged anchor at leaf ${a.leafIndex} is missing (log size ${entries.length})`);
    assert.equal(
      Buffer.from(e).toString(),
      Buffer.from(cosignMessage(a.anchor)).toString(),
      `leaf ${a.leafIndex} is not the acknowledged anchor`,
    );
    found++;
  }
  const heads = new Map<string, string>();
  let cosignEntries = 0;
  let duplicityEntries = 0;
  for (const e of entries) {
    const o = JSON.parse(Buffer.from(e).toString()) as { v: string; seedId: string; index: number; head: string };
    if (o.v === 'auths-anchor/duplicity/v1') duplicityEntries++;
    if (o.v !== 'auths-anchor/cosign/v1') continue;
    cosignEntries++;
    const k = `${o.seedId}/${o.index}`;
    const h = heads.get(k);
    assert.ok(h === undefined || h === o.head, `equivocation: two heads co-signed at ${k}`);
    heads.set(k, o.head);
  }
  return { found, cosignEntries, duplicityEntries };
}

/** The cosign role's view of each synthetic log: what `/<hash>/checkpoint` serves. */
export class CosignAudit {
  private readonly name: string;
  private readonly verifier: NoteVerifier;
  readonly lastTime = new Map<string, bigint>();

  constructor(name: string, cosignPublicKey: Uint8Array) {
    this.name = name;
    this.verifier = cosignatureNoteVerifier(name, cosignPublicKey);
  }

  /** The cosigned size of `log` (0 when never); checks the cosignature, the root and the time. */
  async size(url: string, log: SyntheticLog): Promise<number> {
    const res = await fetch(`${url}/${sha256Hex(log.origin)}/checkpoint`);
    const text = await res.text();
    if (res.status === 404) return 0;
    assert.equal(res.status, 200, text);
    const v = verifyNote(text, [this.verifier]);
    const cp = parseCheckpoint(v.text);
    assert.equal(
      encodeHex(cp.rootHash),
      encodeHex(log.root(cp.size)),
      `${log.origin}: cosigned a root that is not the log's (size ${cp.size})`,
    );
    const line = formatSignatureLine(v.verified[0]!.signature);
    const t = parseCosignatureLine(line).timestamp;
    const prev = this.lastTime.get(log.origin) ?? 0n;
    assert.ok(t >= prev, `${log.origin}: cosignature time went backwards (${prev} → ${t})`);
    this.lastTime.set(log.origin, t);
    return cp.size;
  }
}
