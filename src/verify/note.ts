/**
 * Signed notes, checkpoints and cosignature lines for the verifier SDK, async (WebCrypto): note
 * keys (types 0x01 Ed25519, 0x04 cosignature/v1 and 0x06 subtree/v1 ML-DSA-44) from vkeys or raw
 * keys, with key IDs by WebCrypto SHA-256; the signed-note rules are src/note/signed-note.ts's own
 * (verifyNoteWith: a known key that fails rejects the note, no known key verified rejects it), the
 * checkpoint parser src/note/checkpoint.ts's, the subtree/v1 message src/note/subtree-message.ts's.
 *
 * ML-DSA-44 is verified by the crypto backend the caller supplies (setCryptoBackend), else where
 * the platform's WebCrypto has it (Node ≥ 24.7; most browsers not yet). Elsewhere a line of a given
 * 0x06 key is never ignored (SPEC §6.2, one verdict on every platform): the verification fails with
 * `algorithm_unsupported`; and when a result falls short without such a line (no verified
 * signature, too few cosignatures) the failure is `algorithm_unsupported` too, instead of
 * `note_unverified` / `cosignature_missing`, so a caller can tell "not verifiable here" from "not
 * signed".
 *
 * Failures are VerificationError (`key_invalid`, `note_invalid`, `note_unverified`,
 * `checkpoint_invalid`, `checkpoint_wrong_origin`, `cosignature_invalid`, `cosignature_missing`,
 * `algorithm_unsupported`, `usage`).
 */
import { checkEd25519PublicKey } from '../crypto/ed25519-strict.ts';
import { decodeBase64, encodeBase64 } from '../encoding/base64.ts';
import { encodeHex } from '../encoding/hex.ts';
import { parseCheckpoint, type Checkpoint } from '../note/checkpoint.ts';
import { NoteError } from '../note/errors.ts';
import {
  SIG_TYPE_COSIGNATURE_V1,
  SIG_TYPE_ED25519,
  SIG_TYPE_SUBTREE_V1,
  isValidKeyName,
  verifyNoteWith,
  type NoteKeyType,
  type NoteVerifier,
  type SignatureCheck,
  type VerifiedNote,
} from '../note/signed-note.ts';
import { checkpointSubtreeInput } from '../note/subtree-message.ts';
import { MAX_COSIGNATURE_TIMESTAMP } from '../note/timestamped-signature.ts';
import { EMPTY_ROOT } from './merkle.ts';
import { mlDsa44Available, sha256, verifyEd25519, verifyMlDsa44 } from './crypto.ts';
import { fail, rethrow, VerificationError, UsageError, usage } from './errors.ts';
import { cosignerQuorum, countedCosigners } from './quorum.ts';

export type { Checkpoint, VerifiedNote, NoteKeyType };

/**
 * A trusted note key. Built only by noteKeyFromVkey / ed25519NoteKey / cosignatureNoteKey (which
 * compute the key ID); its signatures are checked by the async functions of this entry point.
 */
export type NoteKey = NoteVerifier;

const ENCODER = new TextEncoder();

async function keyIdOf(name: string, type: number, publicKey: Uint8Array): Promise<number> {
  const h = await sha256(ENCODER.encode(`${name}\n`), Uint8Array.of(type), publicKey);
  return new DataView(h.buffer, h.byteOffset, 4).getUint32(0);
}

const keyIdHex = (id: number): string => id.toString(16).padStart(8, '0');

/** cosignature/v1 (c2sp.org/tlog-cosignature): the signature bytes are u64be(time) ‖ Ed25519 signature over "cosignature/v1\ntime <T>\n" ‖ note text. */
function cosignatureInput(text: Uint8Array, signature: Uint8Array): { message: Uint8Array; signature: Uint8Array } | null {
  if (signature.length !== 72) return null;
  const t = new DataView(signature.buffer, signature.byteOffset, 8).getBigUint64(0);
  if (t > MAX_COSIGNATURE_TIMESTAMP) return null;
  const header = ENCODER.encode(`cosignature/v1\ntime ${t}\n`);
  const message = new Uint8Array(header.length + text.length);
  message.set(header, 0);
  message.set(text, header.length);
  return { message, signature: signature.subarray(8) };
}

const ML_DSA_44_PUBLIC_KEY_LENGTH = 1312;

async function makeKey(name: string, type: NoteKeyType, publicKey: Uint8Array): Promise<NoteKey> {
  if (!isValidKeyName(name)) fail('key_invalid', 'key names must be non-empty, without spaces or "+"');
  if (type === SIG_TYPE_SUBTREE_V1) {
    if (publicKey.length !== ML_DSA_44_PUBLIC_KEY_LENGTH) fail('key_invalid', `ML-DSA-44 key must be 1312 bytes, got ${publicKey.length}`);
  } else {
    try {
      checkEd25519PublicKey(publicKey);
    } catch (e) {
      return rethrow('key_invalid', 'note key', e);
    }
  }
  const pk = Uint8Array.from(publicKey);
  const keyId = await keyIdOf(name, type, pk);
  const raw = new Uint8Array(1 + pk.length);
  raw[0] = type;
  raw.set(pk, 1);
  const signedInput = (text: Uint8Array, signature: Uint8Array): SignatureCheck | null => {
    if (type === SIG_TYPE_ED25519) return { algorithm: 'ed25519', publicKey: pk, message: text, signature };
    if (type === SIG_TYPE_COSIGNATURE_V1) {
      const input = cosignatureInput(text, signature);
      return input === null ? null : { algorithm: 'ed25519', publicKey: pk, ...input };
    }
    const input = checkpointSubtreeInput(name, text, signature);
    return input === null ? null : { algorithm: 'ml-dsa-44', publicKey: pk, message: input.message, signature: input.signature };
  };
  return {
    name,
    keyId,
    type,
    publicKey: pk,
    vkey: `${name}+${keyIdHex(keyId)}+${encodeBase64(raw)}`,
    signedInput,
    verify: () => {
      throw new UsageError('keys of anchor-witness/verify are checked by its async functions only');
    },
  };
}

/**
 * One signature check: Ed25519 (strict rules) by WebCrypto, ML-DSA-44 by the crypto backend or
 * WebCrypto; `algorithm_unsupported` when neither can verify ML-DSA-44 (the line of a given key is
 * never skipped: a browser must not accept what Node refuses).
 */
async function checkSignature(c: SignatureCheck): Promise<boolean> {
  if (c.algorithm === 'ed25519') return verifyEd25519(c.publicKey, c.message, c.signature);
  if (!(await mlDsa44Available()))
    fail(
      'algorithm_unsupported',
      "the note carries a line of a given ML-DSA-44 (0x06) key, which neither a crypto backend (setCryptoBackend) nor this platform's WebCrypto can verify",
    );
  return verifyMlDsa44(c.publicKey, c.message, c.signature);
}

/**
 * Every key is checked (a line of an ML-DSA-44 key this platform cannot verify fails in
 * checkSignature); `unsupported` names those keys, for the failure when a result falls short.
 */
async function checkableKeys(keys: readonly NoteKey[]): Promise<{ usable: NoteKey[]; unsupported: NoteKey[] }> {
  if (!keys.some((k) => k.type === SIG_TYPE_SUBTREE_V1) || (await mlDsa44Available())) return { usable: [...keys], unsupported: [] };
  return { usable: [...keys], unsupported: keys.filter((k) => k.type === SIG_TYPE_SUBTREE_V1) };
}

function unsupportedFailure(unsupported: readonly NoteKey[], what: string): never {
  return fail(
    'algorithm_unsupported',
    `${what}: neither a crypto backend nor this platform's WebCrypto can verify ML-DSA-44, so keys ${unsupported.map((k) => `${k.name}+${keyIdHex(k.keyId)}`).join(', ')} could not count`,
  );
}

/** A key for Ed25519 note signatures (type 0x01): a log's checkpoint key. */
export function ed25519NoteKey(name: string, publicKey: Uint8Array): Promise<NoteKey> {
  return makeKey(name, SIG_TYPE_ED25519, publicKey);
}

/** A key for cosignature/v1 witness cosignatures (type 0x04). */
export function cosignatureNoteKey(name: string, publicKey: Uint8Array): Promise<NoteKey> {
  return makeKey(name, SIG_TYPE_COSIGNATURE_V1, publicKey);
}

/** A key for subtree/v1 ML-DSA-44 signatures over checkpoints (type 0x06): a witness's, or a log's. */
export function subtreeNoteKey(name: string, publicKey: Uint8Array): Promise<NoteKey> {
  return makeKey(name, SIG_TYPE_SUBTREE_V1, publicKey);
}

/** A key from a vkey `<name>+<hex8 key ID>+<base64(type ‖ key)>` (types 0x01, 0x04 and 0x06; the key ID must match). */
export async function noteKeyFromVkey(vkey: string): Promise<NoteKey> {
  const i1 = vkey.indexOf('+');
  const i2 = i1 < 0 ? -1 : vkey.indexOf('+', i1 + 1);
  if (i2 < 0) fail('key_invalid', 'vkey must be <name>+<hex key ID>+<base64 key>');
  const idHex = vkey.slice(i1 + 1, i2);
  if (!/^[0-9a-fA-F]{8}$/.test(idHex)) fail('key_invalid', 'vkey key ID must be 8 hex digits');
  let raw: Uint8Array;
  try {
    raw = decodeBase64(vkey.slice(i2 + 1));
  } catch {
    return fail('key_invalid', 'vkey key is not canonical padded base64');
  }
  const type = raw[0];
  if (type !== SIG_TYPE_ED25519 && type !== SIG_TYPE_COSIGNATURE_V1 && type !== SIG_TYPE_SUBTREE_V1)
    fail('key_invalid', 'unsupported vkey signature type (0x01, 0x04 and 0x06 only)');
  if (type !== SIG_TYPE_SUBTREE_V1 && raw.length !== 33) fail('key_invalid', 'Ed25519 vkey key must be 32 bytes');
  const key = await makeKey(vkey.slice(0, i1), type, raw.subarray(1));
  if (key.keyId !== Number.parseInt(idHex, 16))
    fail('key_invalid', `vkey key ID ${idHex} does not match the key (expected ${keyIdHex(key.keyId)})`);
  return key;
}

/**
 * Verify a signed note under trusted keys (c2sp.org/signed-note): `note_invalid` when it does not
 * parse or a known key's signature fails, `note_unverified` when no known key signed.
 */
export async function verifyNote(note: string | Uint8Array, keys: readonly NoteKey[]): Promise<VerifiedNote> {
  const { usable, unsupported } = await checkableKeys(keys);
  try {
    return await verifyNoteWith(note, usable, checkSignature);
  } catch (e) {
    if (e instanceof VerificationError) throw e;
    const unverified = e instanceof NoteError && e.code === 'unverified_note';
    if (unverified && unsupported.length > 0) unsupportedFailure(unsupported, 'signed note');
    return rethrow(unverified ? 'note_unverified' : 'note_invalid', 'signed note', e);
  }
}

/** A size-0 checkpoint must carry the empty tree's root (checkpoint_invalid): no honest log signs another. */
export function checkEmptyTree(checkpoint: Checkpoint): void {
  if (checkpoint.size === 0 && encodeHex(checkpoint.rootHash) !== encodeHex(EMPTY_ROOT))
    fail('checkpoint_invalid', "a checkpoint of size 0 must carry the empty tree's root");
}

/** A checkpoint (c2sp.org/tlog-checkpoint) signed by one of `keys`, optionally of `origin`. */
export async function verifyCheckpoint(
  note: string,
  keys: readonly NoteKey[],
  origin?: string,
): Promise<{ checkpoint: Checkpoint; note: VerifiedNote }> {
  let verified: VerifiedNote;
  let checkpoint: Checkpoint;
  const { usable, unsupported } = await checkableKeys(keys);
  try {
    verified = await verifyNoteWith(note, usable, checkSignature);
    checkpoint = parseCheckpoint(verified.text);
  } catch (e) {
    if (e instanceof NoteError && e.code === 'unverified_note' && unsupported.length > 0) unsupportedFailure(unsupported, 'checkpoint');
    return rethrow('checkpoint_invalid', 'checkpoint', e);
  }
  if (origin !== undefined && checkpoint.origin !== origin)
    fail('checkpoint_wrong_origin', `the checkpoint is from log ${JSON.stringify(checkpoint.origin)}, expected ${JSON.stringify(origin)}`);
  checkEmptyTree(checkpoint);
  return { checkpoint, note: verified };
}

export interface CosignedCheckpoint {
  checkpoint: Checkpoint;
  /** The log's own signature verified (when log keys were given). */
  logVerified: boolean;
  /** The cosigners (witnesses, by name) with a verified cosignature line (0x04 or 0x06), once each, with the signed time of the first. */
  cosigners: { name: string; timestamp: bigint }[];
  /** Vkeys of given keys this platform cannot check (ML-DSA-44 without a backend or WebCrypto support): the note had no line of theirs. */
  unsupported: string[];
}

/**
 * A checkpoint with cosignature lines (c2sp.org/tlog-cosignature): every cosigner (a witness: the
 * keys of one name, type 0x04 Ed25519 and/or 0x06 ML-DSA-44) must have a valid line unless
 * `quorum` says how many witnesses suffice (SPEC §4.1: a quorum counts witnesses, never keys; one
 * key under two names is `usage`); with `log` keys (0x01 or 0x06), the log's signature must verify
 * too, by a key named after the checkpoint's origin.
 */
export async function verifyCosignedCheckpoint(
  note: string,
  opts: { cosigners: readonly NoteKey[]; log?: readonly NoteKey[]; quorum?: number },
): Promise<CosignedCheckpoint> {
  if (opts.cosigners.some((v) => !isCosignerType(v.type)))
    usage('cosigner keys must be cosignature/v1 (type 0x04) or subtree/v1 (type 0x06) keys');
  const policy = cosignerQuorum(opts.cosigners, opts.quorum);
  const log = opts.log ?? [];
  const { usable, unsupported } = await checkableKeys([...log, ...opts.cosigners]);
  let verified: VerifiedNote;
  try {
    verified = await verifyNoteWith(note, usable, checkSignature);
  } catch (e) {
    if (e instanceof NoteError && e.code === 'unverified_note' && unsupported.length > 0)
      unsupportedFailure(unsupported, 'cosigned checkpoint');
    return rethrow('cosignature_invalid', 'cosigned checkpoint', e);
  }
  let checkpoint: Checkpoint;
  try {
    checkpoint = parseCheckpoint(verified.text);
  } catch (e) {
    return rethrow('checkpoint_invalid', 'checkpoint', e);
  }
  checkEmptyTree(checkpoint);
  const logVerified = checkLogSignature(verified, log, checkpoint, () => {
    if (unsupported.some((k) => log.includes(k))) unsupportedFailure(unsupported, 'log signature');
  });
  let cosigners: { name: string; timestamp: bigint }[];
  try {
    cosigners = countedCosigners(verified, policy);
  } catch (e) {
    const skipped = unsupported.filter((k) => opts.cosigners.includes(k));
    if (e instanceof VerificationError && e.code === 'cosignature_missing' && skipped.length > 0) unsupportedFailure(skipped, e.message);
    throw e;
  }
  return { checkpoint, logVerified, cosigners, unsupported: unsupported.map((k) => k.vkey) };
}

/** Witness cosignature key types: cosignature/v1 (0x04, Ed25519) and subtree/v1 (0x06, ML-DSA-44). */
export function isCosignerType(type: NoteKeyType): boolean {
  return type === SIG_TYPE_COSIGNATURE_V1 || type === SIG_TYPE_SUBTREE_V1;
}

/**
 * With log keys given, the log's own signature verified, by a key named after the checkpoint's
 * origin: `checkpoint_invalid` when no log key signed (`noLogSignature` runs first, to name a more
 * precise cause), `checkpoint_wrong_origin` when only a key of another name did. Returns whether
 * the log's signature verified (false when no log keys were given).
 */
function checkLogSignature(
  verified: VerifiedNote,
  log: readonly NoteVerifier[],
  checkpoint: Checkpoint,
  noLogSignature?: () => void,
): boolean {
  const byLog = verified.verified.filter((v) => log.includes(v.verifier));
  const logVerified = byLog.some((v) => v.verifier.name === checkpoint.origin);
  if (log.length > 0 && byLog.length === 0) {
    noLogSignature?.();
    fail('checkpoint_invalid', 'no signature by the log key');
  }
  if (log.length > 0 && !logVerified)
    fail(
      'checkpoint_wrong_origin',
      `the checkpoint's origin ${JSON.stringify(checkpoint.origin)} is not the name of the log key that signed it (${byLog.map((v) => JSON.stringify(v.verifier.name)).join(', ')})`,
    );
  return logVerified;
}
