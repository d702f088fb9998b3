// Hostile input, pure layer: property-based fuzzing (fast-check) of every parser and verifier the
// servers run on untrusted bytes. Properties: never a crash (only a typed ProtocolError with a
// snake_case code), canonical codecs round-trip exactly what they accept (no lenient decoding),
// strict JSON accepts nothing JSON.parse refuses and agrees with it on what it accepts, and no
// mutated proof or signed object verifies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { decodeAnchor, decodeDuplicityProof, encodeAnchor, encodeDuplicityProof } from '../../src/anchor/codec.ts';
import { makeDuplicityProof, verifyDuplicityProof } from '../../src/anchor/duplicity.ts';
import { parseRegistry } from '../../src/anchor/registry.ts';
import type { AnchorWire, DuplicityProofWire } from '../../src/anchor/types.ts';
import { decodeAttestation } from '../../src/bridge/attestation.ts';
import { buildDidKeyChain, buildTokenRequest, hexKey } from '../../src/bridge/client.ts';
import { decideToken } from '../../src/bridge/decide.ts';
import { BRIDGE_STATUS } from '../../src/bridge/errors.ts';
import { decodeTokenRequest } from '../../src/bridge/request.ts';
import { parseTrustedRoots } from '../../src/bridge/trusted-roots.ts';
import { parseLogsConfig } from '../../src/cosign/logs.ts';
import { formatAddCheckpointRequest, parseAddCheckpointRequest } from '../../src/note/tlog-witness.ts';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { decodeBase58, encodeBase58 } from '../../src/encoding/base58.ts';
import { decodeBase64, decodeBase64url, encodeBase64, encodeBase64url } from '../../src/encoding/base64.ts';
import { formatDecimal, parseDecimal } from '../../src/encoding/decimal.ts';
import { decodeHex, encodeHex } from '../../src/encoding/hex.ts';
import { decodeUtf8, JsonError, parseStrictJson } from '../../src/encoding/json.ts';
import { formatTimestamp, parseRfc3339, parseTimestamp } from '../../src/encoding/time.ts';
import { EncodingError } from '../../src/encoding/errors.ts';
import { formatCheckpoint, parseCheckpoint } from '../../src/note/checkpoint.ts';
import { formatCosignatureLine, parseCosignatureLine } from '../../src/note/cosignature.ts';
import { formatNote, parseNote, parseSignatureLine, verifyNote } from '../../src/note/signed-note.ts';
import { formatTlogProof, parseTlogProof } from '../../src/note/tlog-proof.ts';
import { ed25519NoteSigner, parseVkey } from '../../src/note/vkey.ts';
import { hashLeaf } from '../../src/tlog/hash.ts';
import { consistencyProof, inclusionProof, memoryHashReader, treeRoot, verifyConsistency, verifyInclusion } from '../../src/tlog/merkle.ts';
import { decodeEntryBundle, decodeTile, encodeEntryBundle, entryBundlePath, parseTilePath, tilePath } from '../../src/tlog/tiles.ts';
import { edParty, fill, signAnchor } from '../helpers/anchors.ts';
import { SyntheticLog } from '../helpers/cosign-harness.ts';
import { figures, PROFILE } from '../helpers/rel-common.ts';
import { applyStruct, hostileValue, mutatedJson, mutatedText, refusalOrValue, structOp, textOp, applyText } from '../helpers/rel-fuzz.ts';
import { ed25519Cosigner } from '../../src/note/cosigner.ts';

const SEED = Number(process.env.REL_SEED ?? 0x5eed);
const counts = new Map<string, number>();
const refusals = new Map<string, number>();
let seedBump = 0;

/** fc.assert with this suite's seed and run count; tallies inputs per target. */
function check<T>(name: string, runs: number, arb: fc.Arbitrary<T>, prop: (v: T) => void): void {
  const numRuns = runs * PROFILE.fuzz;
  fc.assert(fc.property(arb, prop), { numRuns, seed: SEED + seedBump++, endOnFailure: false });
  counts.set(name, (counts.get(name) ?? 0) + numRuns);
}

function refused(code: string): void {
  refusals.set(code, (refusals.get(code) ?? 0) + 1);
}

/** The value, or undefined after tallying the typed refusal. */
function attempt<T>(fn: () => T, input: unknown): T | undefined {
  const r = refusalOrValue(fn, input);
  if (r.ok) return r.value;
  refused(r.code);
  return undefined;
}

void test('strict JSON: never crashes, never more lenient than JSON.parse, agrees with it', () => {
  const deepOrWide = fc.oneof(
    fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v)),
    fc.nat({ max: 40 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
    fc.nat({ max: 40 }).map((n) => '{"a":'.repeat(n) + '1' + '}'.repeat(n)),
  );
  const texts = fc.oneof(
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) },
    { weight: 3, arbitrary: deepOrWide },
    { weight: 5, arbitrary: fc.jsonValue({ maxDepth: 4 }).chain((v) => mutatedJson(v)) },
  );
  check('json', 20_000, texts, (text) => {
    let ours: unknown;
    let threw = false;
    try {
      ours = parseStrictJson(text, { bigIntegerKeys: new Set(['cumulative']) });
    } catch (e) {
      if (!(e instanceof JsonError) && !(e instanceof EncodingError)) throw e;
      refused(e.code);
      threw = true;
    }
    if (threw) return;
    // Accepted: JSON.parse must accept it too, with the same value (-0 reads as 0; big integers
    // only under `cumulative`, as decimal strings).
    const theirs: unknown = JSON.parse(text, (k, v: unknown) =>
      typeof v === 'number' && Object.is(v, -0) ? 0 : k === 'cumulative' && typeof v === 'number' && !Number.isSafeInteger(v) ? '(big)' : v,
    );
    const norm = JSON.parse(
      JSON.stringify(ours, (k, v: unknown) => (k === 'cumulative' && typeof v === 'string' && /^-?[0-9]{16,}$/.test(v) ? '(big)' : v)),
    ) as unknown;
    assert.deepEqual(norm, JSON.parse(JSON.stringify(theirs)));
  });
  check('utf8', 5_000, fc.uint8Array({ maxLength: 48 }), (bytes) => {
    const s = attempt(() => decodeUtf8(bytes), bytes);
    const fatal = (() => {
      try {
        return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
      } catch {
        return undefined;
      }
    })();
    assert.equal(s, fatal);
  });
});

void test('codecs: hex, base64, base64url, base58, timestamps, decimals round-trip exactly what they accept', () => {
  const near = (alphabet: string) =>
    fc.oneof(
      fc.string({ unit: fc.constantFrom(...alphabet.split('')), maxLength: 70 }),
      fc.string({ unit: 'binary-ascii', maxLength: 20 }),
    );
  check('hex', 3_000, near('0123456789abcdefABCDEFg '), (s) => {
    const b = attempt(() => decodeHex(s), s);
    if (b !== undefined) assert.equal(encodeHex(b), s.toLowerCase());
  });
  const b64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  check('base64', 3_000, near(b64 + '+/=-_'), (s) => {
    const b = attempt(() => decodeBase64(s), s);
    if (b !== undefined) assert.equal(encodeBase64(b), s);
  });
  check('base64url', 3_000, near(b64 + '+/=-_'), (s) => {
    const b = attempt(() => decodeBase64url(s), s);
    if (b !== undefined) assert.equal(encodeBase64url(b), s);
  });
  check('base58', 3_000, near('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0OIl'), (s) => {
    const b = attempt(() => decodeBase58(s), s);
    if (b !== undefined) assert.equal(encodeBase58(b), s);
  });
  const timestampish = fc.oneof(
    fc
      .tuple(
        fc.integer({ min: -10, max: 10_000 }),
        fc.integer({ min: -1, max: 13 }),
        fc.integer({ min: -1, max: 32 }),
        fc.integer({ min: -1, max: 25 }),
        fc.integer({ min: -1, max: 61 }),
        fc.integer({ min: -1, max: 61 }),
        fc.constantFrom('Z', 'z', '', '+00:00', '.5Z', '.123456789Z', '.1234567891Z', '-01:30'),
      )
      .map(
        ([y, mo, d, h, mi, s, tz]) =>
          `${String(y).padStart(4, '0')}-${String(mo).padStart(2, '0')}-${String(d).padStart(2, '0')}T${String(h).padStart(2, '0')}:${String(mi).padStart(2, '0')}:${String(s).padStart(2, '0')}${tz}`,
      ),
    mutatedText('2023-11-14T22:13:21Z'),
  );
  check('timestamp', 3_000, timestampish, (s) => {
    const t = attempt(() => parseTimestamp(s), s);
    if (t !== undefined) assert.equal(formatTimestamp(t), s);
  });
  check('rfc3339', 3_000, timestampish, (s) => {
    attempt(() => parseRfc3339(s), s);
  });
  check('decimal', 3_000, fc.oneof(near('0123456789-+. e'), fc.bigInt({ min: 0n, max: 2n ** 130n }).map(String)), (s) => {
    const v = attempt(() => parseDecimal(s), s);
    if (v !== undefined) {
      assert.equal(formatDecimal(v), s);
      assert.ok(v < 2n ** 128n);
    }
  });
});

// ---- anchors ------------------------------------------------------------------------------------

const party = edParty(0x21);
const validAnchor = encodeAnchor(
  signAnchor(party, { seedId: fill(0x22), index: 7, head: fill(0x23), cumulative: 1000n, timestamp: 1_700_000_000 }),
);

/** Anchors shaped like the route schema lets through (types right, values hostile). */
const schemaShapedAnchor: fc.Arbitrary<AnchorWire> = fc.record({
  seed_id: fc.oneof(fc.constant(validAnchor.seed_id), fc.stringMatching(/^[0-9a-fA-F]{64}$/)),
  index: fc.oneof(fc.nat(), fc.constantFrom(0, Number.MAX_SAFE_INTEGER)),
  head: fc.stringMatching(/^[0-9a-fA-F]{64}$/),
  cumulative: fc.oneof(
    fc.nat(),
    fc.constantFrom(
      '0',
      '340282366920938463463374607431768211455',
      '340282366920938463463374607431768211456',
      '99999999999999999999999999999999999999',
    ),
    fc.bigInt({ min: 0n, max: 2n ** 129n }).map(String),
  ),
  timestamp: fc.oneof(fc.constant('2023-11-14T22:13:21Z'), fc.stringMatching(/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$/)),
  witness_set: fc.record({
    said: fc.string({ unit: 'binary', minLength: 1, maxLength: 130 }),
    threshold: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  }),
  sig_party: fc.record({
    curve: fc.constantFrom('ed25519' as const, 'p256' as const),
    public_key: fc.oneof(fc.stringMatching(/^(?:[0-9a-fA-F]{2}){32,33}$/), fc.constant(validAnchor.sig_party.public_key)),
    signature: fc.stringMatching(/^(?:[0-9a-fA-F]{2}){64}$/),
  }),
});

void test('anchors and duplicity proofs: decode strictly, mutated proofs never verify', () => {
  check('anchor', 8_000, schemaShapedAnchor, (w) => {
    const a = attempt(() => decodeAnchor(w), w);
    if (a === undefined) return;
    const back = encodeAnchor(a);
    assert.equal(back.seed_id, w.seed_id.toLowerCase());
    assert.equal(String(back.cumulative), String(w.cumulative));
    assert.equal(back.timestamp, w.timestamp);
  });
  const other = signAnchor(party, { seedId: fill(0x22), index: 7, head: fill(0x24), cumulative: 1000n, timestamp: 1_700_000_000 });
  const proof = encodeDuplicityProof(makeDuplicityProof(decodeAnchor(validAnchor), other));
  const proofDoc = JSON.parse(JSON.stringify(proof, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))) as DuplicityProofWire;
  assert.deepEqual(verifyDuplicityProof(decodeDuplicityProof(proofDoc)), { valid: true });
  // Mutations that keep the shape (hex digits, numbers) but change meaning: must not verify.
  const hexMutation = fc.record({
    field: fc.constantFrom(
      'seed_id',
      'anchor_a.head',
      'anchor_b.head',
      'anchor_a.sig_party.signature',
      'anchor_b.sig_party.signature',
      'anchor_a.seed_id',
      'anchor_b.sig_party.public_key',
      'anchor_a.timestamp',
      'anchor_b.cumulative',
      'anchor_a.witness_set.said',
      'index',
      'anchor_a.index',
    ),
    pos: fc.nat(),
    digit: fc.integer({ min: 1, max: 15 }),
  });
  check('duplicity', 1_000, hexMutation, (m) => {
    const doc = structuredClone(proofDoc) as unknown as Record<string, unknown>;
    const parts = m.field.split('.');
    let o = doc;
    for (const p of parts.slice(0, -1)) o = o[p] as Record<string, unknown>;
    const k = parts[parts.length - 1]!;
    const v = o[k];
    if (typeof v === 'number') o[k] = v + m.digit;
    else if (k === 'timestamp') o[k] = '2023-11-14T22:13:22Z';
    else if (k === 'cumulative') o[k] = '1001';
    else if (k === 'said') o[k] = `${String(v)}x`;
    else {
      const s = String(v);
      const i = m.pos % s.length;
      o[k] = s.slice(0, i) + ((parseInt(s[i]!, 16) + m.digit) % 16).toString(16) + s.slice(i + 1);
    }
    const p = attempt(() => decodeDuplicityProof(doc as unknown as DuplicityProofWire), doc);
    if (p === undefined) return;
    assert.equal(verifyDuplicityProof(p).valid, false, `mutated ${m.field} still verifies`);
  });
});

// ---- notes, checkpoints, add-checkpoint, tlog-proof ---------------------------------------------

const log = new SyntheticLog('example.com/fuzz', ed25519KeyFromSeed(fill(0x31)));
const cosigner = ed25519KeyFromSeed(fill(0x32));

void test('signed notes, checkpoints, signature lines, vkeys, cosignature lines: strict and canonical', () => {
  const notes = fc.constantFrom(...Array.from({ length: 41 }, (_, n) => log.checkpoint(n)));
  check('note', 8_000, mutatedText(notes), (s) => {
    const note = attempt(() => parseNote(s), s);
    if (note === undefined) return;
    assert.equal(formatNote(note), s);
    const cp = attempt(() => parseCheckpoint(note.text), note.text);
    if (cp === undefined) return;
    assert.equal(formatCheckpoint(cp), note.text);
    // a mutated note that still parses must not verify under the log key unless it is byte-identical
    const ok = attempt(() => verifyNote(note, [ed25519NoteSigner(log.keyName, log.key).verifier]), note);
    if (ok !== undefined) assert.equal(note.text, log.text(cp.size), 'a mutated checkpoint text verified');
  });
  const line = ed25519Cosigner('witness.example/w', cosigner).noteSigner(1_700_000_000n).line(log.text(3));
  check('signature line', 3_000, mutatedText(line), (s) => {
    attempt(() => parseSignatureLine(s), s);
  });
  check('cosignature line', 3_000, mutatedText(line), (s) => {
    const c = attempt(() => parseCosignatureLine(s), s);
    if (c !== undefined) assert.equal(formatCosignatureLine(c), s.endsWith('\n') ? s : s + '\n');
  });
  check('vkey', 3_000, mutatedText(log.vkey), (s) => {
    attempt(() => parseVkey(s), s);
  });
});

void test('add-checkpoint bodies and tlog-proofs: strict, canonical round trip', () => {
  const pairs: string[] = [];
  for (let b = 0; b <= 30; b++) for (let a = 0; a <= b; a += 3) pairs.push(log.request(a, b));
  const bodies = fc.constantFrom(...pairs);
  check(
    'add-checkpoint',
    8_000,
    fc.oneof({ weight: 9, arbitrary: mutatedText(bodies) }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 100 }) }),
    (s) => {
      const r = attempt(() => parseAddCheckpointRequest(s), s);
      if (r !== undefined) assert.equal(formatAddCheckpointRequest(r.oldSize, r.proof, formatNote(r.note)), s);
      const bytes = Buffer.from(s, 'utf8');
      attempt(() => parseAddCheckpointRequest(bytes), s);
    },
  );
  check('add-checkpoint bytes', 2_000, fc.tuple(bodies, fc.nat(), fc.integer({ min: 0, max: 255 })), ([s, at, byte]) => {
    const b = Buffer.from(s, 'utf8');
    b[at % b.length] = byte;
    attempt(() => parseAddCheckpointRequest(b), b);
  });
  const leaves = Array.from({ length: 40 }, (_, i) => hashLeaf(Buffer.from(`leaf ${i}`)));
  const read = memoryHashReader(leaves);
  const all: string[] = [];
  for (let size = 1; size <= 40; size += 3) {
    const checkpoint = log.checkpoint(size, treeRoot(size, read));
    for (let index = 0; index < size; index += 2)
      all.push(formatTlogProof({ index, proof: inclusionProof(index, size, read), checkpoint }));
  }
  const proofs = fc.constantFrom(...all);
  check('tlog-proof', 5_000, mutatedText(proofs), (s) => {
    const p = attempt(() => parseTlogProof(s), s);
    if (p !== undefined) assert.equal(formatTlogProof(p), s);
  });
});

void test('Merkle proofs, tiles, entry bundles: no mutated proof verifies, strict tile paths and bundles', () => {
  const leafData = (i: number) => Buffer.from(`entry ${i}`);
  const leaves = Array.from({ length: 300 }, (_, i) => hashLeaf(leafData(i)));
  const read = memoryHashReader(leaves);
  const roots = new Map<number, Uint8Array>();
  const rootOf = (n: number) => {
    let r = roots.get(n);
    if (r === undefined) roots.set(n, (r = treeRoot(n, read)));
    return r;
  };
  const proofMutation = fc.record({
    kind: fc.constantFrom('byte', 'drop', 'add', 'dup', 'swap', 'leaf', 'root'),
    i: fc.nat(),
    j: fc.nat(),
    byte: fc.integer({ min: 1, max: 255 }),
  });
  const mutate = (proof: Uint8Array[], m: { kind: string; i: number; j: number; byte: number }): Uint8Array[] | null => {
    const p = proof.map((h) => Uint8Array.from(h));
    switch (m.kind) {
      case 'byte':
        if (p.length === 0) return null;
        p[m.i % p.length]![m.j % 32]! ^= m.byte;
        return p;
      case 'drop':
        if (p.length === 0) return null;
        p.splice(m.i % p.length, 1);
        return p;
      case 'add':
        p.splice(m.i % (p.length + 1), 0, createHash('sha256').update(String(m.j)).digest());
        return p;
      case 'dup':
        if (p.length === 0) return null;
        p.splice(m.i % p.length, 0, p[m.i % p.length]!);
        return p;
      case 'swap': {
        if (p.length < 2) return null;
        const a = m.i % p.length;
        const b = m.j % p.length;
        if (a === b || Buffer.compare(p[a]!, p[b]!) === 0) return null;
        [p[a], p[b]] = [p[b]!, p[a]!];
        return p;
      }
      default:
        return p;
    }
  };
  check('inclusion proof', 3_000, fc.tuple(fc.integer({ min: 1, max: 300 }), fc.nat(), proofMutation), ([size, i, m]) => {
    const index = i % size;
    const proof = inclusionProof(index, size, read);
    assert.ok(verifyInclusion(leaves[index]!, index, size, proof, rootOf(size)));
    const bad = mutate(proof, m);
    if (bad === null) return;
    const leaf = m.kind === 'leaf' ? hashLeaf(leafData(index + 1)) : leaves[index]!;
    const root = m.kind === 'root' ? rootOf(size === 1 ? 2 : size - 1) : rootOf(size);
    assert.equal(verifyInclusion(leaf, index, size, bad, root), false, `mutation ${m.kind} verified`);
  });
  check('consistency proof', 3_000, fc.tuple(fc.integer({ min: 1, max: 300 }), fc.nat(), proofMutation), ([size, o, m]) => {
    const old = 1 + (o % size);
    const proof = consistencyProof(old, size, read);
    assert.ok(verifyConsistency(old, size, rootOf(old), rootOf(size), proof));
    const bad = mutate(proof, m);
    if (bad === null) return;
    const oldRoot = m.kind === 'leaf' ? rootOf(old === 1 ? 2 : old - 1) : rootOf(old);
    const newRoot = m.kind === 'root' ? rootOf(size === 1 ? 2 : size - 1) : rootOf(size);
    assert.equal(verifyConsistency(old, size, oldRoot, newRoot, bad), false, `mutation ${m.kind} verified (${old} → ${size})`);
  });
  const tilePaths = fc.oneof(
    fc
      .tuple(fc.integer({ min: 0, max: 70 }), fc.nat({ max: 2 ** 40 }), fc.integer({ min: 1, max: 256 }))
      .map(([level, index, width]) => tilePath({ level: Math.min(level, 63), index, width })),
    fc.tuple(fc.nat({ max: 2 ** 30 }), fc.integer({ min: 1, max: 256 })).map(([index, width]) => entryBundlePath({ index, width })),
  );
  check('tile path', 3_000, fc.oneof(mutatedText(tilePaths), tilePaths), (s) => {
    const p = attempt(() => parseTilePath(s), s);
    if (p !== undefined) assert.equal(p.kind === 'tile' ? tilePath(p) : entryBundlePath(p), s);
  });
  const bundle = encodeEntryBundle([Buffer.from('a'), Buffer.alloc(0), Buffer.alloc(300, 7)]);
  check(
    'entry bundle / tile bytes',
    3_000,
    fc.oneof(
      fc.uint8Array({ maxLength: 200 }),
      fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([i, b]) => {
        const x = Uint8Array.from(bundle);
        x[i % x.length] = b;
        return x;
      }),
    ),
    (bytes) => {
      const e = attempt(() => decodeEntryBundle(bytes), bytes);
      if (e !== undefined) assert.deepEqual(Buffer.from(encodeEntryBundle(e)), Buffer.from(bytes));
      attempt(() => decodeEntryBundle(bytes, 3), bytes);
      attempt(() => decodeTile(bytes), bytes);
    },
  );
});

// ---- the token bridge ---------------------------------------------------------------------------

void test('token bridge: /token bodies and attestation chains decode strictly; decisions use only SPEC §7 codes', () => {
  const ISSUER = 'https://bridge.fuzz.example';
  const AUD = 'sts.amazonaws.com';
  const root = ed25519KeyFromSeed(fill(0x41));
  const d1 = ed25519KeyFromSeed(fill(0x42));
  const d2 = ed25519KeyFromSeed(fill(0x43));
  const now = Math.floor(Date.now() / 1000);
  const chain = buildDidKeyChain(root, [
    { deviceKey: d1, capabilities: ['deploy:staging', 'sign_commit'], expiresAt: now + 86_400, timestamp: now - 60 },
    { deviceKey: d2, capabilities: ['deploy:staging'], expiresAt: now + 86_400, timestamp: now - 60 },
  ]);
  const req = buildTokenRequest({
    chain,
    rootPublicKey: hexKey(root),
    audience: AUD,
    issuer: ISSUER,
    deviceKey: d2,
    iat: now,
    nonce: 'fuzz-nonce-0123456789',
  });
  const policy = {
    issuer: ISSUER,
    audiences: [AUD],
    defaultTtl: 900,
    maxTtl: 3600,
    proofOfPossession: true,
    awsSessionTags: false,
    startedAt: (now - 3600) * 1000,
  };
  const base = decideToken(structuredClone(req), policy, undefined, now * 1000, 'jti');
  if (!base.ok) throw base.error;
  const subject = base.grant.claims.sub;
  const structMutation = fc.array(structOp, { minLength: 1, maxLength: 3 });
  check('token request (decode)', 8_000, structMutation, (ops) => {
    const doc = applyStruct(req, ops);
    attempt(() => decodeTokenRequest(doc), doc);
  });
  check('token request (decide)', 2_000, structMutation, (ops) => {
    const doc = applyStruct(req, ops);
    const d = decideToken(doc, policy, undefined, now * 1000, 'jti');
    if (d.ok) {
      assert.equal(d.grant.claims.sub, subject);
      return;
    }
    assert.ok(d.error.code in BRIDGE_STATUS, `undocumented code ${d.error.code}`);
    refused(d.error.code);
  });
  const link = chain[0] as unknown as Record<string, unknown>;
  check(
    'attestation',
    5_000,
    fc.oneof(
      structMutation.map((ops) => applyStruct(link, ops)),
      hostileValue,
    ),
    (doc) => {
      attempt(() => decodeAttestation(doc, '/attestation_chain/0'), doc);
    },
  );
  // the same, through text: duplicate members, truncation, lone surrogates
  check('token request (text)', 3_000, fc.tuple(structMutation, fc.array(textOp, { minLength: 1, maxLength: 2 })), ([ops, tops]) => {
    const text = applyText(JSON.stringify(applyStruct(req, ops)), tops);
    const doc = attempt(() => parseStrictJson(text), text);
    if (doc !== undefined) attempt(() => decodeTokenRequest(doc), doc);
  });
});

// ---- operator files (registry, trusted roots, known logs) ---------------------------------------

void test('operator documents: registry, trusted roots, known logs refuse with typed errors', (t) => {
  const pk = encodeHex(ed25519PublicKeyBytes(ed25519KeyFromSeed(fill(0x51))));
  const registry = {
    parties: [
      {
        id: 'did:keri:EAlice',
        keys: [{ curve: 'ed25519', public_key: pk }],
        delegator: 'did:keri:ERoot',
        limits: { anchors_per_minute: 5, new_seeds_per_day: 2 },
      },
    ],
  };
  const roots = { ...registry, revoked: [{ device_public_key: pk }, { rid: 'r1' }] };
  const logs = { logs: [{ origin: 'example.com/log', keys: [log.vkey], qpd: 100 }] };
  const structMutation = fc.array(structOp, { minLength: 1, maxLength: 3 });
  check('registry', 2_000, structMutation, (ops) => {
    const doc = applyStruct(registry, ops);
    attempt(() => parseRegistry(doc), doc);
  });
  check('trusted roots', 2_000, structMutation, (ops) => {
    const doc = applyStruct(roots, ops);
    attempt(() => parseTrustedRoots(doc), doc);
  });
  check('logs config', 2_000, structMutation, (ops) => {
    const doc = applyStruct(logs, ops);
    attempt(() => parseLogsConfig(doc, 'own.example/anchors'), doc);
  });
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  figures(t, 'fuzz-parsers', {
    inputs: total,
    per_target: Object.fromEntries(counts),
    seed: SEED,
    refusal_codes: Object.fromEntries([...refusals].sort((a, b) => b[1] - a[1])),
  });
  assert.ok(total >= 100_000, `only ${total} inputs`);
});

void test('decideToken refuses a lone surrogate in an attestation string as malformed_body', () => {
  const ISSUER = 'https://bridge.fuzz.example';
  const root = ed25519KeyFromSeed(fill(0x44));
  const dev = ed25519KeyFromSeed(fill(0x45));
  const now = Math.floor(Date.now() / 1000);
  const chain = buildDidKeyChain(root, [
    { deviceKey: dev, capabilities: ['deploy:staging'], expiresAt: now + 86_400, timestamp: now - 60 },
  ]);
  const req = structuredClone(
    buildTokenRequest({
      chain,
      rootPublicKey: hexKey(root),
      audience: 'sts.amazonaws.com',
      issuer: ISSUER,
      deviceKey: dev,
      iat: now,
      nonce: 'fuzz-nonce-0123456789',
    }),
  );
  (req.attestation_chain as Record<string, unknown>[])[0]!.rid = '\ud800';
  const policy = {
    issuer: ISSUER,
    audiences: ['sts.amazonaws.com'],
    defaultTtl: 900,
    maxTtl: 3600,
    proofOfPossession: true,
    awsSessionTags: false,
    startedAt: (now - 3600) * 1000,
  };
  const d = decideToken(req, policy, undefined, now * 1000, 'jti');
  assert.equal(d.ok ? 'ok' : d.error.code, 'malformed_body');
});
