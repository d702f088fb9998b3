/**
 * Keys on a PKCS#11 token (SPEC §1.1) through the optional npm `pkcs11js` addon; the addon and
 * the modules (loading, the `module-path` checks, initialisation) are pkcs11-module.ts's.
 *
 * - The PIN comes from the `pin-source` file (0600; content minus one trailing newline) and is
 *   never logged.
 * - One token must match the reference's token attributes and slot-id, and in it one private key
 *   (`key_not_found` / `key_ambiguous`); its public key is the CKO_PUBLIC_KEY with the same CKA_ID
 *   (CKA_EC_POINT as a DER OCTET STRING or raw).
 * - Ed25519: CKK_EC_EDWARDS with Ed25519 params, CKM_EDDSA without a parameter. P-256: CKK_EC,
 *   CKM_ECDSA over an in-process SHA-256 (ManagedSigner normalizes to low S). A missing mechanism
 *   → `key_unsupported`.
 * - A pool of `sessions` (4) logged-in sessions, one operation each; C_Sign runs on the libuv
 *   thread pool (C_SignAsync), so UV_THREADPOOL_SIZE ≥ 4 + sessions (`ensureThreadPoolSize`).
 * - Any CKR_* from C_SignInit/C_Sign other than CKR_OK fails the request (ManagedSigner makes the
 *   signer unavailable), except CKR_USER_NOT_LOGGED_IN, which first re-logs in and retries once.
 *   Recovery closes this signer's sessions and re-finds the key; if that fails, the module is
 *   finalized and initialised again once for all its signers (each then re-logs in and probes).
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { KeyRefError } from './errors.ts';
import { ckrName, moduleFor, type Pkcs11Module } from './pkcs11-module.ts';
import { redactKeyRef, type Pkcs11KeyRef } from './ref.ts';
import { BackendError, type SignerAlgorithm, type SignerBackend } from './signer.ts';
import type * as Pkcs11js from 'pkcs11js';

type Handle = Buffer;

const CKK_EC = 0x3;
const CKK_EC_EDWARDS = 0x40;
const CKM_EDDSA = 0x1057;
const CKM_ECDSA = 0x1041;
const CKO_PUBLIC_KEY = 2;
const CKO_PRIVATE_KEY = 3;
const CKA_CLASS = 0x0;
const CKA_LABEL = 0x3;
const CKA_ID = 0x102;
const CKA_KEY_TYPE = 0x100;
const CKA_EC_PARAMS = 0x180;
const CKA_EC_POINT = 0x181;
const CKF_SERIAL_SESSION = 0x4;
const CKU_USER = 1;
const CKR_USER_ALREADY_LOGGED_IN = 0x100;
const CKR_USER_NOT_LOGGED_IN = 0x101;

const ED25519_OID = Buffer.from('06032b6570', 'hex');
const EDWARDS25519_NAME = Buffer.concat([Buffer.from([0x13, 12]), Buffer.from('edwards25519', 'latin1')]);
const P256_OID = Buffer.from('06082a8648ce3d030107', 'hex');
/** The PIN: a file group and others cannot read, minus one trailing newline. Never logged. */
export function readPinFile(path: string): string {
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    throw new KeyRefError('pin_file_invalid', `PIN file ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  if (!st.isFile() || (st.mode & 0o077) !== 0) {
    throw new KeyRefError('pin_file_invalid', `PIN file ${path} must be a regular file of mode 0600 (is ${(st.mode & 0o777).toString(8)})`);
  }
  const text = readFileSync(path, 'utf8');
  return text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text;
}

/** CKA_EC_POINT: a DER OCTET STRING around the point, or the raw point. */
export function unwrapEcPoint(v: Buffer, rawLength: number): Buffer {
  if (v.length === rawLength + 2 && v[0] === 0x04 && v[1] === rawLength) return v.subarray(2);
  if (v.length === rawLength + 3 && v[0] === 0x04 && v[1] === 0x81 && v[2] === rawLength) return v.subarray(3);
  return v;
}

function compressP256(point: Buffer): Uint8Array {
  if (point.length !== 65 || point[0] !== 0x04)
    throw new KeyRefError('key_unsupported', 'the token holds no uncompressed P-256 public point');
  const out = new Uint8Array(33);
  out[0] = (point[64]! & 1) === 1 ? 0x03 : 0x02;
  out.set(point.subarray(1, 33), 1);
  return out;
}

const trimmed = (s: string): string => s.replace(/[ \0]+$/, '');

/** The signer backend for `pkcs11:` references. */
export class Pkcs11Backend implements SignerBackend {
  readonly algorithm: SignerAlgorithm;
  readonly external = true;
  readonly ref: string;
  private readonly keyRef: Pkcs11KeyRef;
  private readonly poolSize: number;
  private module: Pkcs11Module | undefined;
  private generation = -1;
  private slot: Handle | undefined;
  private key: Handle | undefined;
  private free: Handle[] = [];
  private all: Handle[] = [];
  private waiters: Array<{ resolve: (s: Handle) => void; reject: (e: Error) => void }> = [];

  constructor(ref: Pkcs11KeyRef, refText: string, algorithm: SignerAlgorithm, sessions = 4) {
    this.keyRef = ref;
    this.ref = redactKeyRef(refText);
    this.algorithm = algorithm;
    this.poolSize = sessions;
  }

  async open(): Promise<Uint8Array> {
    this.module ??= moduleFor(this.keyRef.modulePath);
    const m = this.module;
    try {
      return this.find(m);
    } catch (e) {
      if (e instanceof KeyRefError && e.code !== 'key_not_found') throw e;
      // Re-finding failed: finalize and initialise the module once for all its signers, then retry.
      this.dropSessions();
      m.reinitialize(this.generation);
      return Promise.resolve(this.find(m));
    }
  }

  private find(m: Pkcs11Module): Uint8Array {
    const p11 = m.p11;
    this.dropSessions();
    this.generation = m.generation;
    const want = this.keyRef.tokenMatch;
    const slots = p11.C_GetSlotList(true).filter((slot) => {
      if (want.slotId !== undefined && slot.readBigUInt64LE(0) !== want.slotId) return false;
      const info = p11.C_GetTokenInfo(slot);
      if (want.token !== undefined && trimmed(info.label) !== want.token) return false;
      if (want.manufacturer !== undefined && trimmed(info.manufacturerID) !== want.manufacturer) return false;
      if (want.serial !== undefined && trimmed(info.serialNumber) !== want.serial) return false;
      if (want.model !== undefined && trimmed(info.model) !== want.model) return false;
      return true;
    });
    if (slots.length === 0) throw new KeyRefError('key_not_found', `${this.ref}: no present token matches`);
    if (slots.length > 1)
      throw new KeyRefError('key_ambiguous', `${this.ref}: ${slots.length} tokens match; add token=, serial= or slot-id=`);
    const slot = slots[0]!;
    const mech = this.algorithm === 'ed25519' ? CKM_EDDSA : CKM_ECDSA;
    if (!p11.C_GetMechanismList(slot).includes(mech)) {
      throw new KeyRefError('key_unsupported', `${this.ref}: the token lacks ${this.algorithm === 'ed25519' ? 'CKM_EDDSA' : 'CKM_ECDSA'}`);
    }
    const pin = readPinFile(this.keyRef.pinFile);
    const session = this.openSession(p11, slot, pin);
    const template: Pkcs11js.Template = [{ type: CKA_CLASS, value: CKO_PRIVATE_KEY }];
    if (this.keyRef.object !== undefined) template.push({ type: CKA_LABEL, value: this.keyRef.object });
    if (this.keyRef.id !== undefined) template.push({ type: CKA_ID, value: Buffer.from(this.keyRef.id) });
    const keys = findAll(p11, session, template);
    if (keys.length === 0) throw new KeyRefError('key_not_found', `${this.ref}: no private key object matches`);
    if (keys.length > 1) throw new KeyRefError('key_ambiguous', `${this.ref}: ${keys.length} private keys match; add id=`);
    const key = keys[0]!;
    const [typeAttr, idAttr] = p11.C_GetAttributeValue(session, key, [{ type: CKA_KEY_TYPE }, { type: CKA_ID }]);
    const keyType = typeAttr!.value.readUIntLE(0, Math.min(6, typeAttr!.value.length));
    const expected = this.algorithm === 'ed25519' ? CKK_EC_EDWARDS : CKK_EC;
    if (keyType !== expected)
      throw new KeyRefError('key_unsupported', `${this.ref}: the key is not ${this.algorithm === 'ed25519' ? 'CKK_EC_EDWARDS' : 'CKK_EC'}`);
    const pubs = findAll(p11, session, [
      { type: CKA_CLASS, value: CKO_PUBLIC_KEY },
      { type: CKA_ID, value: idAttr!.value },
    ]);
    if (pubs.length !== 1)
      throw new KeyRefError(
        pubs.length === 0 ? 'key_not_found' : 'key_ambiguous',
        `${this.ref}: ${pubs.length} public keys with the private key's CKA_ID`,
      );
    const [params, point] = p11.C_GetAttributeValue(session, pubs[0]!, [{ type: CKA_EC_PARAMS }, { type: CKA_EC_POINT }]);
    const paramBytes = params!.value;
    let publicKey: Uint8Array;
    if (this.algorithm === 'ed25519') {
      if (!paramBytes.equals(ED25519_OID) && !paramBytes.equals(EDWARDS25519_NAME))
        throw new KeyRefError('key_unsupported', `${this.ref}: not an Ed25519 key`);
      publicKey = Uint8Array.from(unwrapEcPoint(point!.value, 32));
      if (publicKey.length !== 32) throw new KeyRefError('key_unsupported', `${this.ref}: CKA_EC_POINT is not a 32-byte Ed25519 key`);
    } else {
      if (!paramBytes.equals(P256_OID)) throw new KeyRefError('key_unsupported', `${this.ref}: not a P-256 key`);
      publicKey = compressP256(unwrapEcPoint(point!.value, 65));
    }
    this.slot = slot;
    this.key = key;
    this.all = [session];
    this.free = [session];
    for (let i = 1; i < this.poolSize; i++) {
      const s = p11.C_OpenSession(slot, CKF_SERIAL_SESSION);
      this.all.push(s);
      this.free.push(s);
    }
    return publicKey;
  }

  private openSession(p11: Pkcs11js.PKCS11, slot: Handle, pin: string): Handle {
    const s = p11.C_OpenSession(slot, CKF_SERIAL_SESSION);
    try {
      p11.C_Login(s, CKU_USER, pin);
    } catch (e) {
      if (ckrName(e).code !== CKR_USER_ALREADY_LOGGED_IN) {
        try {
          p11.C_CloseSession(s);
        } catch {
          // ignore
        }
        throw new BackendError(ckrName(e).name, `C_Login failed (${ckrName(e).name})`);
      }
    }
    return s;
  }

  private acquire(): Promise<Handle> {
    const s = this.free.pop();
    if (s !== undefined) return Promise.resolve(s);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private release(s: Handle): void {
    if (!this.all.includes(s)) return;
    const w = this.waiters.shift();
    if (w !== undefined) w.resolve(s);
    else this.free.push(s);
  }

  async sign(msg: Uint8Array): Promise<Uint8Array> {
    const m = this.module;
    if (m === undefined || this.key === undefined || this.generation !== m.generation) {
      throw new BackendError('CKR_SESSION_HANDLE_INVALID', 'the sessions were closed; recovering');
    }
    const data = this.algorithm === 'ed25519' ? Buffer.from(msg) : createHash('sha256').update(msg).digest();
    const session = await this.acquire();
    try {
      return await this.signOnce(m, session, data, true);
    } finally {
      this.release(session);
    }
  }

  private async signOnce(m: Pkcs11Module, session: Handle, data: Buffer, mayRelogin: boolean): Promise<Uint8Array> {
    const mechanism = this.algorithm === 'ed25519' ? CKM_EDDSA : CKM_ECDSA;
    try {
      m.p11.C_SignInit(session, { mechanism }, this.key!);
      const out = await m.p11.C_SignAsync(session, data, Buffer.alloc(this.algorithm === 'ed25519' ? 64 : 132));
      return Uint8Array.from(out);
    } catch (e) {
      const { name, code } = ckrName(e);
      if (code === CKR_USER_NOT_LOGGED_IN && mayRelogin) {
        this.openSession(m.p11, this.slot!, readPinFile(this.keyRef.pinFile));
        return this.signOnce(m, session, data, false);
      }
      throw new BackendError(name, `C_Sign failed (${name})`);
    }
  }

  private dropSessions(): void {
    const p11 = this.module?.p11;
    const sessions = this.all;
    this.all = [];
    this.free = [];
    this.key = undefined;
    for (const w of this.waiters.splice(0))
      w.reject(new BackendError('CKR_SESSION_HANDLE_INVALID', 'the sessions were closed; recovering'));
    if (p11 !== undefined && this.module!.generation === this.generation) {
      for (const s of sessions) {
        try {
          p11.C_CloseSession(s);
        } catch {
          // the token may be gone
        }
      }
    }
  }

  reset(): Promise<void> {
    this.dropSessions();
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.dropSessions();
    return Promise.resolve();
  }
}

function findAll(p11: Pkcs11js.PKCS11, session: Handle, template: Pkcs11js.Template): Handle[] {
  p11.C_FindObjectsInit(session, template);
  try {
    return p11.C_FindObjects(session, 16);
  } finally {
    p11.C_FindObjectsFinal(session);
  }
}
