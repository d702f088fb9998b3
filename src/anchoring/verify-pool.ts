/**
 * Ed25519 verification on worker threads, for the anchor role's party signatures (and the cosign
 * role's note signatures). The strict byte rules (ed25519StrictPrecheck) run on the calling thread;
 * only the curve arithmetic (OpenSSL's verify, the expensive part) runs in the workers, so the rules
 * are those of verifyEd25519. Requests that arrive in one event-loop turn travel to a worker in one
 * message (one transferred buffer), spread over the workers. With size 0 it verifies on the calling
 * thread.
 *
 * A pool made with a signing key can also sign on the same trip: `verifyAndSign` verifies a party
 * signature and, only when it is valid, signs a second message with that key (the anchor's cosign
 * message, whose signing so leaves the event loop and the sequencer). Such a signature is
 * speculative: the caller keeps it in memory and drops it unless the anchor is co-signed and
 * committed, so it never leaves the process for an anchor that was not logged.
 *
 * The worker source is inline (node:crypto only), so it also works from a single bundled file.
 */
import type { KeyObject } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { encodeHex } from '../encoding/hex.ts';
import { ed25519PublicKeyBytes, ed25519StrictPrecheck, signEd25519, verifyEd25519 } from '../crypto/ed25519.ts';

// Request layout per item: u32 message length, u32 to-sign length + 1 (0 = nothing to sign), public key (32),
// signature (64), message, to-sign. Reply per item: 1 byte valid, 64 bytes signature (zero if none).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createPublicKey, verify, sign } = require('node:crypto');
const signingKey = workerData.signingKey;
const PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const cache = new Map();
function key(pk) {
  const id = pk.toString('latin1');
  let k = cache.get(id);
  if (k === undefined) {
    k = createPublicKey({ key: Buffer.concat([PREFIX, pk]), format: 'der', type: 'spki' });
    if (cache.size >= 4096) cache.delete(cache.keys().next().value);
    cache.set(id, k);
  }
  return k;
}
parentPort.on('message', ({ id, buf, count }) => {
  const data = Buffer.from(buf);
  const out = new Uint8Array(count * 65);
  let o = 0;
  for (let i = 0; i < count; i++) {
    const len = data.readUInt32BE(o);
    const signField = data.readUInt32BE(o + 4);
    const signLen = signField === 0 ? 0 : signField - 1;
    const pk = data.subarray(o + 8, o + 40);
    const sig = data.subarray(o + 40, o + 104);
    const msg = data.subarray(o + 104, o + 104 + len);
    const toSign = data.subarray(o + 104 + len, o + 104 + len + signLen);
    o += 104 + len + signLen;
    let ok = false;
    try { ok = verify(null, msg, key(pk), sig); } catch { ok = false; }
    out[i * 65] = ok ? 1 : 0;
    if (ok && signField > 0 && signingKey !== undefined) out.set(sign(null, toSign, signingKey), i * 65 + 1);
  }
  parentPort.postMessage({ id, out }, [out.buffer]);
});
`;

export interface VerifySignResult {
  valid: boolean;
  /** Present when `valid` and a message to sign was given. */
  signature?: Uint8Array;
}

interface Pending {
  publicKey: Uint8Array;
  message: Uint8Array;
  signature: Uint8Array;
  toSign: Uint8Array | undefined;
  resolve: (r: VerifySignResult) => void;
}

interface Slot {
  worker: Worker;
  inFlight: number;
}

export class Ed25519VerifyPool {
  private readonly slots: Slot[] = [];
  private readonly waiting = new Map<number, { items: Pending[]; slot: Slot }>();
  private queue: Pending[] = [];
  private scheduled = false;
  private nextId = 1;
  private closed = false;
  private readonly signingKey: KeyObject | undefined;
  /** Hex public key of the signing key, if any. */
  readonly signingPublicKey: string | undefined;

  /** `size` worker threads (0 = verify on the calling thread); `signingKey` (Ed25519) for `verifyAndSign`. */
  constructor(size: number, signingKey?: KeyObject) {
    this.signingKey = signingKey;
    this.signingPublicKey = signingKey === undefined ? undefined : encodeHex(ed25519PublicKeyBytes(signingKey));
    for (let i = 0; i < size; i++) {
      const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { signingKey } });
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

  async verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
    return (await this.submit(publicKey, message, signature, undefined)).valid;
  }

  /** Verify `signature`; when valid, also sign `toSign` with the pool's signing key. */
  verifyAndSign(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array, toSign: Uint8Array): Promise<VerifySignResult> {
    if (this.signingKey === undefined) throw new Error('verifyAndSign: this pool has no signing key');
    return this.submit(publicKey, message, signature, toSign);
  }

  /** Verify (and sign) on the calling thread: the same answer a worker gives. */
  private here(it: Omit<Pending, 'resolve'>): VerifySignResult {
    const valid = verifyEd25519(it.publicKey, it.message, it.signature);
    return valid && it.toSign !== undefined && this.signingKey !== undefined
      ? { valid, signature: signEd25519(this.signingKey, it.toSign) }
      : { valid };
  }

  private submit(
    publicKey: Uint8Array,
    message: Uint8Array,
    signature: Uint8Array,
    toSign: Uint8Array | undefined,
  ): Promise<VerifySignResult> {
    if (!ed25519StrictPrecheck(publicKey, signature)) return Promise.resolve({ valid: false });
    if (this.slots.length === 0 || this.closed) return Promise.resolve(this.here({ publicKey, message, signature, toSign }));
    return new Promise((resolve) => {
      this.queue.push({ publicKey, message, signature, toSign, resolve });
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
    // Spread over the workers: one batch per worker at most per turn.
    const per = Math.ceil(items.length / this.slots.length);
    for (let start = 0; start < items.length; start += per) this.send(items.slice(start, start + per));
  }

  private send(items: Pending[]): void {
    const slot = this.slots.reduce((a, b) => (b.inFlight < a.inFlight ? b : a));
    let total = 0;
    for (const it of items) total += 104 + it.message.length + (it.toSign?.length ?? 0);
    const buf = new ArrayBuffer(total);
    const view = new Uint8Array(buf);
    const dv = new DataView(buf);
    let o = 0;
    for (const it of items) {
      const signLen = it.toSign?.length ?? 0;
      dv.setUint32(o, it.message.length);
      dv.setUint32(o + 4, it.toSign === undefined ? 0 : signLen + 1);
      view.set(it.publicKey, o + 8);
      view.set(it.signature, o + 40);
      view.set(it.message, o + 104);
      if (it.toSign !== undefined) view.set(it.toSign, o + 104 + it.message.length);
      o += 104 + it.message.length + signLen;
    }
    const id = this.nextId++;
    this.waiting.set(id, { items, slot });
    slot.inFlight++;
    slot.worker.postMessage({ id, buf, count: items.length }, [buf]);
  }

  private settle(id: number, out: Uint8Array): void {
    const w = this.waiting.get(id);
    if (w === undefined) return;
    this.waiting.delete(id);
    w.slot.inFlight--;
    w.items.forEach((it, i) => {
      const valid = out[i * 65] === 1;
      it.resolve(valid && it.toSign !== undefined ? { valid, signature: out.slice(i * 65 + 1, i * 65 + 65) } : { valid });
    });
  }

  /** A worker died: verify its outstanding items here, and stop using it. */
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
