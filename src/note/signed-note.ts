/**
 * C2SP signed-note (c2sp.org/signed-note): parse, format, verify and sign. Parsing is strict
 * (UTF-8, no control characters but \n, canonical padded base64, the LAST blank line separates the
 * signatures, at most MAX_NOTE_SIGNATURES); a known key's failing signature rejects the note
 * (`invalid_signature`), and so does no verified known signature (`unverified_note`).
 * No node: import: the browser verifier (src/verify) uses it; key IDs are key-id.ts.
 */
import { decodeBase64, encodeBase64 } from '../encoding/base64.ts';
import { NoteError } from './errors.ts';

/**
 * Most signature lines accepted in one note. The spec asks verifiers to accept at least 16; 64
 * leaves room for a log signature plus a large witness set (x/mod/sumdb/note accepts 100).
 */
export const MAX_NOTE_SIGNATURES = 64;

/** Signature type bytes assigned by signed-note (used in key IDs and vkeys). */
export const SIG_TYPE_ED25519 = 0x01;
/** Timestamped Ed25519 witness cosignatures (c2sp.org/tlog-cosignature, cosignature/v1). */
export const SIG_TYPE_COSIGNATURE_V1 = 0x04;
/**
 * Timestamped ML-DSA-44 (sub)tree cosignatures (c2sp.org/tlog-cosignature, `subtree/v1`): witness
 * cosignatures, and a log's own checkpoint signature when the log signs with ML-DSA-44.
 */
export const SIG_TYPE_SUBTREE_V1 = 0x06;

/** The signature types a note key may have here (vkey.ts refuses the others). */
export type NoteKeyType = typeof SIG_TYPE_ED25519 | typeof SIG_TYPE_COSIGNATURE_V1 | typeof SIG_TYPE_SUBTREE_V1;

/** The signature algorithm of a note key type: Ed25519 for 0x01 and 0x04, ML-DSA-44 for 0x06. */
export type SignatureAlgorithm = 'ed25519' | 'ml-dsa-44';

/** What one signature check needs: the algorithm, the key, the signed message and the bare signature. */
export interface SignatureCheck {
  readonly algorithm: SignatureAlgorithm;
  /** Raw public key: 32 bytes (Ed25519) or 1312 bytes (ML-DSA-44). */
  readonly publicKey: Uint8Array;
  readonly message: Uint8Array;
  readonly signature: Uint8Array;
}

/** A trusted note key (vkey.ts builds them from vkeys or public keys). */
export interface NoteVerifier {
  readonly name: string;
  readonly keyId: number;
  readonly type: NoteKeyType;
  /** Raw public key: 32 bytes (Ed25519, types 0x01 and 0x04) or 1312 bytes (ML-DSA-44, type 0x06). */
  readonly publicKey: Uint8Array;
  /** The canonical vkey string (lowercase key ID). */
  readonly vkey: string;
  /** Check `signature` (the bytes after the key ID) over the UTF-8 note text. */
  verify(text: Uint8Array, signature: Uint8Array): boolean;
  /**
   * The check that `verify` performs (algorithm, key, signed message, bare signature), or null when
   * the signature bytes are malformed or cannot sign this text (a 0x06 line over a checkpoint with
   * extension lines, say): such a signature is invalid.
   */
  signedInput(text: Uint8Array, signature: Uint8Array): SignatureCheck | null;
}

/** A note signer: produces the signature bytes that follow the key ID. */
export interface NoteSigner {
  readonly name: string;
  readonly keyId: number;
  sign(text: Uint8Array): Uint8Array;
}

/** Separator of the signature lines: em dash U+2014 and a space. */
export const SIGNATURE_PREFIX = '\u2014 ';

export interface NoteSignature {
  /** Key name. */
  name: string;
  /** Key ID: the first 4 signature bytes as a big-endian uint32. */
  keyId: number;
  /** The signature bytes after the key ID (type 0x04: u64 timestamp ‖ Ed25519 signature; 0x06: u64 timestamp ‖ ML-DSA-44 signature). */
  signature: Uint8Array;
}

export interface Note {
  /** The note text, including its final newline. */
  text: string;
  signatures: NoteSignature[];
}

// eslint-disable-next-line no-control-regex -- the point is to find control characters
const CONTROL_RE = /[\u0000-\u0009\u000b-\u001f]/;
const SPACE_RE = /\p{White_Space}/u;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const ENCODER = new TextEncoder();

function malformed(message: string): NoteError {
  return new NoteError('malformed_note', message);
}

/** Decode UTF-8 strictly (no replacement characters; a leading BOM is kept as text). */
export function decodeUtf8(bytes: Uint8Array, what = 'note'): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw malformed(`${what} is not valid UTF-8`);
  }
}

/** Throws `malformed_note` unless `s` is well-formed Unicode with no control characters but \n. */
export function checkNoteCharacters(s: string, what = 'note'): void {
  if (!s.isWellFormed()) throw malformed(`${what} is not valid UTF-8 (lone surrogate)`);
  if (CONTROL_RE.test(s)) throw malformed(`${what} contains an ASCII control character other than \\n`);
}

/** Throws `malformed_note` unless `text` is valid note text: allowed characters, ending in \n. */
export function checkNoteText(text: string): void {
  checkNoteCharacters(text, 'note text');
  if (!text.endsWith('\n')) throw malformed('note text must end with a newline');
}

/** A key name: non-empty, well-formed, no control characters, no Unicode spaces, no `+`. */
export function isValidKeyName(name: string): boolean {
  return name !== '' && name.isWellFormed() && !CONTROL_RE.test(name) && !SPACE_RE.test(name) && !name.includes('+');
}

export function checkKeyName(name: string): void {
  if (!isValidKeyName(name)) throw new NoteError('invalid_key_name', 'key names must be non-empty, without spaces or "+"');
}

/** `— <name> <base64(keyId ‖ signature)>\n`, one note signature line including its newline. */
export function formatSignatureLine(sig: NoteSignature): string {
  checkKeyName(sig.name);
  if (!Number.isInteger(sig.keyId) || sig.keyId < 0 || sig.keyId > 0xffffffff) {
    throw new NoteError('malformed_note', 'key ID must be a uint32');
  }
  const bytes = new Uint8Array(4 + sig.signature.length);
  new DataView(bytes.buffer).setUint32(0, sig.keyId);
  bytes.set(sig.signature, 4);
  return `${SIGNATURE_PREFIX}${sig.name} ${encodeBase64(bytes)}\n`;
}

/** Parse one signature line, given with or without its final newline. */
export function parseSignatureLine(line: string): NoteSignature {
  const body = line.endsWith('\n') ? line.slice(0, -1) : line;
  checkNoteCharacters(body, 'signature line');
  if (body.includes('\n')) throw malformed('more than one line');
  if (!body.startsWith(SIGNATURE_PREFIX)) throw malformed('signature line must start with "— " (U+2014, space)');
  const rest = body.slice(SIGNATURE_PREFIX.length);
  const space = rest.indexOf(' ');
  if (space < 0) throw malformed('signature line must be "— <name> <base64>"');
  const name = rest.slice(0, space);
  if (!isValidKeyName(name)) throw malformed('invalid key name in signature line');
  let bytes: Uint8Array;
  try {
    bytes = decodeBase64(rest.slice(space + 1));
  } catch {
    throw malformed('signature is not canonical padded base64');
  }
  if (bytes.length < 5) throw malformed('signature shorter than a key ID plus one byte');
  const keyId = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0);
  return { name, keyId, signature: bytes.subarray(4) };
}

/**
 * Parse a block of signature lines, each ending in \n (the signature part of a note, or the body
 * of a tlog-witness add-checkpoint response). An empty block is malformed. At most `max` lines
 * (`too_many_signatures`).
 */
export function parseSignatureLines(block: string, max = MAX_NOTE_SIGNATURES): NoteSignature[] {
  if (block === '' || !block.endsWith('\n')) throw malformed('signature block must be one or more lines, each ending in a newline');
  const lines = block.slice(0, -1).split('\n');
  if (lines.length > max) throw new NoteError('too_many_signatures', `more than ${max} signatures`);
  return lines.map((l) => parseSignatureLine(l));
}

/** Parse a signed note (string, or bytes that must be valid UTF-8). */
export function parseNote(input: string | Uint8Array): Note {
  const note = typeof input === 'string' ? input : decodeUtf8(input);
  checkNoteCharacters(note);
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw malformed('no blank line before the signatures');
  const text = note.slice(0, split + 1);
  const signatures = parseSignatureLines(note.slice(split + 2));
  return { text, signatures };
}

/** Format a note (text plus signature lines). Refuses text a parser would not give back. */
export function formatNote(note: Note): string {
  checkNoteText(note.text);
  if (note.signatures.length === 0) throw malformed('a signed note needs at least one signature');
  if (note.signatures.length > MAX_NOTE_SIGNATURES)
    throw new NoteError('too_many_signatures', `more than ${MAX_NOTE_SIGNATURES} signatures`);
  let out = `${note.text}\n`;
  for (const sig of note.signatures) {
    if (sig.signature.length === 0) throw malformed('empty signature');
    out += formatSignatureLine(sig);
  }
  return out;
}

// ---- Verification ---------------------------------------------------------------------------

export interface VerifiedSignature {
  verifier: NoteVerifier;
  signature: NoteSignature;
  /** For cosignature/v1 (0x04) and subtree/v1 (0x06) signatures: the signed timestamp (POSIX seconds). */
  timestamp?: bigint;
}

export interface VerifiedNote extends Note {
  /** The known signatures, each verified (a verifier is listed once even if it signed twice). */
  verified: VerifiedSignature[];
  /** Signatures by keys not in the verifier list (ignored). */
  unverified: NoteSignature[];
}

function lookupKey(name: string, keyId: number): string {
  return `${name} ${keyId}`;
}

function buildVerifierMap(verifiers: readonly NoteVerifier[]): Map<string, NoteVerifier> {
  const byKey = new Map<string, NoteVerifier>();
  for (const v of verifiers) {
    const k = lookupKey(v.name, v.keyId);
    const prev = byKey.get(k);
    if (prev !== undefined && prev.vkey !== v.vkey) {
      throw new NoteError('ambiguous_verifier', `two different keys named ${v.name} share key ID ${v.keyId.toString(16).padStart(8, '0')}`);
    }
    byKey.set(k, v);
  }
  return byKey;
}

interface NotePlan {
  note: Note;
  textBytes: Uint8Array;
  /** Signatures by known keys, in note order, with their verifier. */
  known: { sig: NoteSignature; verifier: NoteVerifier }[];
  unverified: NoteSignature[];
}

function planNote(input: string | Uint8Array | Note, verifiers: readonly NoteVerifier[]): NotePlan {
  const note = typeof input === 'string' || input instanceof Uint8Array ? parseNote(input) : input;
  const byKey = buildVerifierMap(verifiers);
  const known: NotePlan['known'] = [];
  const unverified: NoteSignature[] = [];
  for (const sig of note.signatures) {
    const verifier = byKey.get(lookupKey(sig.name, sig.keyId));
    if (verifier === undefined) unverified.push(sig);
    else known.push({ sig, verifier });
  }
  return { note, textBytes: ENCODER.encode(note.text), known, unverified };
}

/** Apply the signed-note rules to the plan, given whether each known signature verified. */
function decideNote(plan: NotePlan, valid: readonly boolean[]): VerifiedNote {
  const verified: VerifiedSignature[] = [];
  const seen = new Set<NoteVerifier>();
  plan.known.forEach(({ sig, verifier: v }, i) => {
    if (valid[i] !== true) {
      throw new NoteError('invalid_signature', `signature by ${v.name}+${v.keyId.toString(16).padStart(8, '0')} does not verify`);
    }
    if (seen.has(v)) return;
    seen.add(v);
    const entry: VerifiedSignature = { verifier: v, signature: sig };
    if (v.type === SIG_TYPE_COSIGNATURE_V1 || v.type === SIG_TYPE_SUBTREE_V1) {
      entry.timestamp = new DataView(sig.signature.buffer, sig.signature.byteOffset, 8).getBigUint64(0);
    }
    verified.push(entry);
  });
  if (verified.length === 0) throw new NoteError('unverified_note', 'no signature by a known key');
  return { text: plan.note.text, signatures: plan.note.signatures, verified, unverified: plan.unverified };
}

/**
 * Verify a signed note against trusted keys (signed-note "Signatures" rules; see the module
 * comment). Returns the parsed note with the signatures that verified. Throws `malformed_note` /
 * `too_many_signatures` for unparsable input, `invalid_signature` when a known key's signature
 * fails, `unverified_note` when no known key signed.
 */
export function verifyNote(input: string | Uint8Array | Note, verifiers: readonly NoteVerifier[]): VerifiedNote {
  const plan = planNote(input, verifiers);
  return decideNote(
    plan,
    plan.known.map(({ sig, verifier }) => verifier.verify(plan.textBytes, sig.signature)),
  );
}

/**
 * verifyNote with the signature arithmetic done by `verify` (e.g. a worker pool's, or WebCrypto's,
 * applying the same strict rules): same rules, same results, same errors. `verify` gets each
 * known signature's check (SignatureCheck: Ed25519 or ML-DSA-44) and says whether it holds.
 */
export async function verifyNoteWith(
  input: string | Uint8Array | Note,
  verifiers: readonly NoteVerifier[],
  verify: (check: SignatureCheck) => Promise<boolean>,
): Promise<VerifiedNote> {
  const plan = planNote(input, verifiers);
  const valid = await Promise.all(
    plan.known.map(({ sig, verifier }) => {
      const check = verifier.signedInput(plan.textBytes, sig.signature);
      return check === null ? Promise.resolve(false) : verify(check);
    }),
  );
  return decideNote(plan, valid);
}

/**
 * Sign `text` (which must end in \n) with each signer and return the signed note. `existing`
 * signatures (e.g. a log's own, when adding cosignatures) are kept first.
 */
export function signNote(text: string, signers: readonly NoteSigner[], existing: readonly NoteSignature[] = []): string {
  checkNoteText(text);
  const textBytes = ENCODER.encode(text);
  const signatures = [...existing];
  for (const s of signers) signatures.push({ name: s.name, keyId: s.keyId, signature: s.sign(textBytes) });
  return formatNote({ text, signatures });
}
