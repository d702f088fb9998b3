/**
 * Witness-key rotation entries (SPEC §1.2), `anchor-witness/key-rotation/v1`: the bytes both keys
 * sign, the entry as logged, and their verification (portable: WebCrypto through ./crypto.ts).
 *
 *   announce  {v,stage,name,origin,old,new,time,sig_old,sig_new}  K1 and K2 over the JCS without the sigs
 *   abort     {v,stage,name,origin,old,new,time,sig_old}          K1 abandons the recorded next key `new`
 *   complete  {v,stage,name,origin,old,new,time,sig_new}          K2 retires K1
 *
 * The log entry is the JCS of the whole object; `GET /v1/key-rotation` serves the same objects
 * with their `log_index`.
 */
import { checkEd25519PublicKey } from '../crypto/ed25519-strict.ts';
import { decodeHex } from '../encoding/hex.ts';
import { canonicalBytes } from '../encoding/jcs.ts';
import { isJsonObject } from '../encoding/json.ts';
import { isValidName } from '../note/checkpoint.ts';
import { verifyEd25519 } from './crypto.ts';
import { fail } from './errors.ts';

export const KEY_ROTATION_V = 'anchor-witness/key-rotation/v1';

export type RotationStage = 'announce' | 'abort' | 'complete';

/** What the signatures cover: the entry without `sig_old` and `sig_new`. */
export interface RotationStatement {
  v: typeof KEY_ROTATION_V;
  stage: RotationStage;
  name: string;
  origin: string;
  /** hex Ed25519 public keys */
  old: string;
  new: string;
  /** YYYY-MM-DDTHH:MM:SSZ */
  time: string;
}

export interface RotationEntry extends RotationStatement {
  /** hex; announce and abort */
  sig_old?: string;
  /** hex; announce and complete */
  sig_new?: string;
}

/** Which signatures each stage carries. */
export const STAGE_SIGNATURES: Readonly<Record<RotationStage, { old: boolean; new: boolean }>> = {
  announce: { old: true, new: true },
  abort: { old: true, new: false },
  complete: { old: false, new: true },
};

/** The bytes K1 (`sig_old`) and K2 (`sig_new`) sign: JCS of the statement. */
export function rotationMessage(s: RotationStatement): Uint8Array {
  const { v, stage, name, origin, old, new: next, time } = s;
  return canonicalBytes({ v, stage, name, origin, old, new: next, time });
}

/** The log entry: JCS of the whole entry. */
export function encodeRotationEntry(e: RotationEntry): Uint8Array {
  return canonicalBytes(e);
}

const HEX32 = /^[0-9a-f]{64}$/;
const HEX64 = /^[0-9a-f]{128}$/;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const FIELDS = new Set(['v', 'stage', 'name', 'origin', 'old', 'new', 'time', 'sig_old', 'sig_new', 'log_index']);

/**
 * Check an entry's shape (a parsed JSON value; `log_index` is allowed, as served by
 * GET /v1/key-rotation). Undefined when `v` is not a rotation entry; `rotation_entry_invalid` when
 * it is one but malformed.
 */
export function parseRotationEntry(value: unknown): RotationEntry | undefined {
  if (!isJsonObject(value) || value.v !== KEY_ROTATION_V) return undefined;
  const bad = (why: string): never => fail('rotation_entry_invalid', `key-rotation entry: ${why}`);
  for (const k of Object.keys(value)) if (!FIELDS.has(k)) bad(`unknown member ${JSON.stringify(k)}`);
  const stage = value.stage;
  if (stage !== 'announce' && stage !== 'abort' && stage !== 'complete') return bad('stage is not announce, abort or complete');
  const str = (k: string, re?: RegExp): string => {
    const x = value[k];
    if (typeof x !== 'string' || (re !== undefined && !re.test(x))) return bad(`${k} is missing or malformed`);
    return x;
  };
  const entry: RotationEntry = {
    v: KEY_ROTATION_V,
    stage,
    name: str('name'),
    origin: str('origin'),
    old: str('old', HEX32),
    new: str('new', HEX32),
    time: str('time', TIME),
  };
  if (!isValidName(entry.name) || !isValidName(entry.origin)) bad('name or origin is not a valid key name');
  if (entry.old === entry.new) bad('old and new are the same key');
  const want = STAGE_SIGNATURES[stage];
  for (const [k, needed] of [
    ['sig_old', want.old],
    ['sig_new', want.new],
  ] as const) {
    if (needed) entry[k] = str(k, HEX64);
    else if (value[k] !== undefined) bad(`a ${stage} entry carries no ${k}`);
  }
  return entry;
}

/**
 * Verify an entry's signatures under the keys it names (`old` for sig_old, `new` for sig_new).
 * It says nothing about whether `old` is a key the caller trusts: compare `old` with a pinned key.
 */
export async function verifyRotationEntry(e: RotationEntry): Promise<void> {
  const message = rotationMessage(e);
  const want = STAGE_SIGNATURES[e.stage];
  for (const [which, needed, key, sig] of [
    ['sig_old', want.old, e.old, e.sig_old],
    ['sig_new', want.new, e.new, e.sig_new],
  ] as const) {
    if (!needed) continue;
    if (sig === undefined) fail('rotation_entry_invalid', `key-rotation entry: ${which} is missing`);
    const pk = decodeHex(key, 32);
    try {
      checkEd25519PublicKey(pk);
    } catch {
      fail('rotation_entry_invalid', `key-rotation entry: ${which === 'sig_old' ? 'old' : 'new'} is not a valid Ed25519 key`);
    }
    if (!(await verifyEd25519(pk, message, decodeHex(sig, 64))))
      fail('rotation_entry_invalid', `key-rotation entry: ${which} does not verify under ${which === 'sig_old' ? 'old' : 'new'}`);
  }
}
