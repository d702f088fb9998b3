/**
 * Signature work on worker threads, off the event loop: Ed25519 verification for the anchor role's
 * party signatures and the cosign role's log signatures, ML-DSA-44 verification (a log's 0x06
 * checkpoint signature) and ML-DSA-44 signing (the cosign role's `subtree/v1` lines, ≈ 20× the cost
 * of an Ed25519 signature, SPEC §5.2). The strict Ed25519 byte rules (ed25519StrictPrecheck) run on
 * the calling thread; only the arithmetic (OpenSSL's verify and sign) runs in the workers, so the
 * rules are those of verifyEd25519 / verifyMlDsa44. Requests that arrive in one event-loop turn
 * travel to a worker in one message (one transferred buffer), spread over the workers. With size 0
 * everything runs on the calling thread, with the same answers.
 *
 * A pool made with an Ed25519 signing key can also sign on the same trip: `verifyAndSign`
 * verifies a party signature and, only when it is valid, signs a second message with that key (the
 * anchor's cosign message, whose signing so leaves the event loop and the sequencer). Such a
 * signature is speculative: the caller keeps it in memory and drops it unless the anchor is
 * co-signed and committed, so it never leaves the process for an anchor that was not logged.
 *
 * ML-DSA-44 private keys given at construction (`mlDsaKeys`) are copied into each worker once;
 * `signMlDsa44(key, message)` signs with one of them there (any other key signs on the calling
 * thread).
 *
 * The worker source is inline (node:crypto only), so it also works from a single bundled file.
 */
import type { KeyObject } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { encodeHex } from '../encoding/hex.ts';
import { mark, tracing } from './trace.ts';
import { ED25519_SPKI_PREFIX, ed25519PublicKeyBytes, ed25519StrictPrecheck, signEd25519, verifyEd25519 } from '../crypto/ed25519.ts';
import {
  ML_DSA_44_PUBLIC_KEY_LENGTH,
  ML_DSA_44_SIGNATURE_LENGTH,
  ML_DSA_44_SPKI_PREFIX,
  signMlDsa44,
  verifyMlDsa44,
} from '../crypto/ml-dsa.ts';

// Request layout per item: u8 op, u8 ML-DSA key index, u32 public key length, u32 signature length,
// u32 message length, u32 to-sign length + 1 (0 = nothing to sign), then public key, signature,
// message, to-sign. Reply per item: 1 byte (1 = valid / signed), then the signature it produced:
// 64 bytes for an Ed25519 verify-and-sign item, 2420 for an ML-DSA-44 sign item, none otherwise.
const OP_ED25519_VERIFY = 0;
const OP_MLDSA_VERIFY = 1;
const OP_MLDSA_SIGN = 2;
const HEADER = 18;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createPublicKey, verify, sign } = require('node:crypto');
const signingKey = workerData.signingKey;
const mlDsaKeys = workerData.mlDsaKeys;
const ED_PREFIX = Buffer.from('${encodeHex(ED25519_SPKI_PREFIX)}', 'hex');
const MLDSA_PREFIX = Buffer.from('${encodeHex(ML_DSA_44_SPKI_PREFIX)}', 'hex');
const cache = new Map();
function key(prefix, pk) {
  const id = pk.toString('latin1');
  let k = cache.get(id);
  if (k === undefined) {
    k = createPublicKey({ key: Buffer.concat([prefix, pk]), format: 'der', type: 'spki' });
    if (cache.size >= 4096) cache.delete(cache.keys().next().value);
    cache.set(id, k);
  }
  return k;
}
function replySize(op, signField) {
  return 1 + (op === 0 && signField > 0 ? 64 : op === 2 ? ${ML_DSA_44_SIGNATURE_LENGTH} : 0);
}
parentPort.on('message', ({ id, buf, count }) => {
  const data = Buffer.from(buf);
  let total = 0;
  for (let i = 0, o = 0; i < count; i++) {
    const pkLen = data.readUInt32BE(o + 2), sigLen = data.readUInt32BE(o + 6), len = data.readUInt32BE(o + 10);
    const signField = data.readUInt32BE(o + 14);
    total += replySize(data[o], signField);
    o += ${HEADER} + pkLen + sigLen + len + (signField === 0 ? 0 : signField - 1);
  }
  const out = new Uint8Array(total);
  let o = 0, r = 0;
  for (let i = 0; i < count; i++) {
    const op = data[o], keyIndex = data[o + 1];
    const pkLen = data.readUInt32BE(o + 2), sigLen = data.readUInt32BE(o + 6), len = data.readUInt32BE(o + 10);
    const signField = data.readUInt32BE(o + 14);
    const signLen = signField === 0 ? 0 : signField - 1;
    let at = o + ${HEADER};
    const pk = data.subarray(at, at + pkLen); at += pkLen;
    const sig = data.subarray(at, at + sigLen); at += sigLen;
    const msg = data.subarray(at, at + len); at += len;
    const toSign = data.subarray(at, at + signLen);
    o = at + signLen;
    let ok = false;
    if (op === 2) {
      try { out.set(sign(null, msg, mlDsaKeys[keyIndex]), r + 1); ok = true; } catch { ok = false; }
    } else {
      try { ok = verify(null, msg, key(op === 0 ? ED_PREFIX : MLDSA_PREFIX, pk), sig); } catch { ok = false; }
      if (ok && op === 0 && signField > 0 && signingKey !== undefined) out.set(sign(null, toSign, signingKey), r + 1);
    }
    out[r] = ok ? 1 : 0;
    r += replySize(op, signField);
  }
  parentPort.postMessage({ id, out }, [out.buffer]);
});
`;

export interface VerifySignResult {
  valid: boolean;
  /** Present when `valid` and a message to sign was given. */
  signature?: Uint8Array;
}

type Op = typeof OP_ED25519_VERIFY | typeof OP_MLDSA_VERIFY | typeof OP_MLDSA_SIGN;

interface Item {
  op: Op;
  /** For OP_MLDSA_SIGN: the index of the key in `mlDsaKeys`. */
  keyIndex: number;
  publicKey: Uint8Array;
  message: Uint8Array;
  signature: Uint8Array;
  toSign: Uint8Array | undefined;
}

interface Pending extends Item {
  resolve: (r: VerifySignResult) => void;
}

interface Slot {
  worker: Worker;
  inFlight: number;
}

function replySize(it: Item): number {
  return 1 + (it.op === OP_ED25519_VERIFY && it.toSign !== undefined ? 64 : it.op === OP_MLDSA_SIGN ? ML_DSA_44_SIGNATURE_LENGTH : 0);
}

export class SignaturePool {
  private readonly slots: Slot[] = [];
  private readonly waiting = new Map<number, { items: Pending[]; slot: Slot; sentAt: number }>();
  private queue: Pending[] = [];
  private scheduled = false;
  private nextId = 1;
  private closed = false;
  private readonly signingKey: KeyObject | undefined;
  private readonly mlDsaKeys: readonly KeyObject[];
  /** Hex public key of the Ed25519 signing key, if any. */
  readonly signingPublicKey: string | undefined;

  /**
   * `size` worker threads (0 = everything on the calling thread); `signingKey` (Ed25519, the
   * witness key) for `verifyAndSign`; `mlDsaKeys` (ML-DSA-44, the cosign keys) for `signMlDsa44`.
   */
  constructor(size: number, signingKey?: KeyObject, mlDsaKeys: readonly KeyObject[] = []) {
    this.signingKey = signingKey;
    this.mlDsaKeys = [...mlDsaKeys];
    if (this.mlDsaKeys.length > 255) throw new Error('SignaturePool: at most 255 ML-DSA-44 keys');
    this.signingPublicKey = this.signingKey === undefined ? undefined : encodeHex(ed25519PublicKeyBytes(this.signingKey));
    for (let i = 0; i < size; i++) {
      const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { signingKey: this.signingKey, mlDsaKeys: this.mlDsaKeys } });
      worker.unref();
      const slot: Slot = { worker, inFlight: 0 };
      worker.on('message', (m: { id: number; out: Uint8Array }) => {
        this.settle(m.id, m.out);
      });
      worker.on('error', () => {
        this.failSlot(slot);
      });
      this.slots.push(slot);
    }
  }

  get size(): number {
    return this.slots.length;
  }

  /** Strict Ed25519 verification (verifyEd25519's rules). */
  async verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
    if (!ed25519StrictPrecheck(publicKey, signature)) return false;
    return (await this.submit({ op: OP_ED25519_VERIFY, keyIndex: 0, publicKey, message, signature, toSign: undefined })).valid;
  }

  /** Verify `signature`; when valid, also sign `toSign` with the pool's Ed25519 signing key. */
  verifyAndSign(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array, toSign: Uint8Array): Promise<VerifySignResult> {
    if (this.signingKey === undefined) throw new Error('verifyAndSign: this pool has no signing key');
    if (!ed25519StrictPrecheck(publicKey, signature)) return Promise.resolve({ valid: false });
    return this.submit({ op: OP_ED25519_VERIFY, keyIndex: 0, publicKey, message, signature, toSign });
  }

  /** Pure ML-DSA-44 verification (verifyMlDsa44's rules). */
  async verifyMlDsa44(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
    if (publicKey.length !== ML_DSA_44_PUBLIC_KEY_LENGTH || signature.length !== ML_DSA_44_SIGNATURE_LENGTH) return false;
    return (await this.submit({ op: OP_MLDSA_VERIFY, keyIndex: 0, publicKey, message, signature, toSign: undefined })).valid;
  }

  /**
   * ML-DSA-44 signature (hedged, empty context) of `message`, on a worker when `privateKey` is one
   * of the pool's `mlDsaKeys`, else on the calling thread. Throws what signMlDsa44 throws.
   */
  async signMlDsa44(privateKey: KeyObject, message: Uint8Array): Promise<Uint8Array> {
    const keyIndex = this.mlDsaKeys.indexOf(privateKey);
    if (keyIndex < 0 || this.slots.length === 0 || this.closed) return signMlDsa44(privateKey, message);
    const r = await this.submit({
      op: OP_MLDSA_SIGN,
      keyIndex,
      publicKey: new Uint8Array(0),
      message,
      signature: new Uint8Array(0),
      toSign: undefined,
    });
    if (!r.valid || r.signature === undefined) throw new Error('ML-DSA-44 signing failed on a worker');
    return r.signature;
  }

  /** The same work on the calling thread: the same answer a worker gives. */
  private here(it: Item): VerifySignResult {
    if (it.op === OP_MLDSA_SIGN) {
      try {
        return { valid: true, signature: signMlDsa44(this.mlDsaKeys[it.keyIndex]!, it.message) };
      } catch {
        return { valid: false };
      }
    }
    if (it.op === OP_MLDSA_VERIFY) return { valid: verifyMlDsa44(it.publicKey, it.message, it.signature) };
    const valid = verifyEd25519(it.publicKey, it.message, it.signature);
    return valid && it.toSign !== undefined && this.signingKey !== undefined
      ? { valid, signature: signEd25519(this.signingKey, it.toSign) }
      : { valid };
  }

  private submit(item: Item): Promise<VerifySignResult> {
    if (this.slots.length === 0 || this.closed) return Promise.resolve(this.here(item));
    return new Promise((resolve) => {
      this.queue.push({ ...item, resolve });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.flush();
        });
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const items = this.queue;
    this.queue = [];
    if (items.length === 0) return;
    if (this.slots.length === 0) {
      for (const it of items) it.resolve(this.here(it));
      return;
    }
    // Spread over the workers: one batch per worker at most per turn.
    const t = tracing() ? performance.now() : 0;
    const per = Math.ceil(items.length / this.slots.length);
    for (let start = 0; start < items.length; start += per) this.send(items.slice(start, start + per));
    if (t !== 0) mark('verify_send', t, items.length);
  }

  private send(items: Pending[]): void {
    const slot = this.slots.reduce((a, b) => (b.inFlight < a.inFlight ? b : a));
    let total = 0;
    for (const it of items) total += HEADER + it.publicKey.length + it.signature.length + it.message.length + (it.toSign?.length ?? 0);
    const buf = new ArrayBuffer(total);
    const view = new Uint8Array(buf);
    const dv = new DataView(buf);
    let o = 0;
    for (const it of items) {
      const signLen = it.toSign?.length ?? 0;
      dv.setUint8(o, it.op);
      dv.setUint8(o + 1, it.keyIndex);
      dv.setUint32(o + 2, it.publicKey.length);
      dv.setUint32(o + 6, it.signature.length);
      dv.setUint32(o + 10, it.message.length);
      dv.setUint32(o + 14, it.toSign === undefined ? 0 : signLen + 1);
      let at = o + HEADER;
      view.set(it.publicKey, at);
      at += it.publicKey.length;
      view.set(it.signature, at);
      at += it.signature.length;
      view.set(it.message, at);
      at += it.message.length;
      if (it.toSign !== undefined) view.set(it.toSign, at);
      o = at + signLen;
    }
    const id = this.nextId++;
    this.waiting.set(id, { items, slot, sentAt: tracing() ? performance.now() : 0 });
    slot.inFlight++;
    slot.worker.postMessage({ id, buf, count: items.length }, [buf]);
  }

  private settle(id: number, out: Uint8Array): void {
    const w = this.waiting.get(id);
    if (w === undefined) return;
    this.waiting.delete(id);
    w.slot.inFlight--;
    const t = tracing() ? performance.now() : 0;
    let r = 0;
    for (const it of w.items) {
      const size = replySize(it);
      const valid = out[r] === 1;
      it.resolve(valid && size > 1 ? { valid, signature: out.slice(r + 1, r + size) } : { valid });
      r += size;
    }
    if (t !== 0) {
      mark('verify_reply', t, w.items.length);
      if (w.sentAt !== 0) mark('verify_trip', w.sentAt, w.items.length); // posted → answered, queueing in the worker included
    }
  }

  /** A worker died: do its outstanding items here, and stop using it. */
  private failSlot(slot: Slot): void {
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    for (const [id, w] of this.waiting) {
      if (w.slot !== slot) continue;
      this.waiting.delete(id);
      for (const it of w.items) it.resolve(this.here(it));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const it of this.queue) it.resolve(this.here(it));
    this.queue = [];
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
    this.slots.length = 0;
  }
}
