/**
 * Ed25519 verification on worker threads. The strict byte rules (ed25519StrictPrecheck) run on the
 * calling thread; only the curve arithmetic (OpenSSL's verify, the expensive part) runs in the
 * workers, so the rules are the same as verifyEd25519's. Requests that arrive in one event-loop
 * turn travel to a worker in one message (one transferred buffer), and the pool spreads batches
 * over its workers. On a machine with one core, or with size 0, it verifies on the calling thread.
 *
 * The worker source is inline (node:crypto only), so it also works from a single bundled file.
 */
import { Worker } from 'node:worker_threads';
import { ed25519StrictPrecheck, verifyEd25519 } from './ed25519.ts';

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createPublicKey, verify } = require('node:crypto');
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
  const out = new Uint8Array(count);
  let o = 0;
  for (let i = 0; i < count; i++) {
    const len = data.readUInt32BE(o);
    const pk = data.subarray(o + 4, o + 36);
    const sig = data.subarray(o + 36, o + 100);
    const msg = data.subarray(o + 100, o + 100 + len);
    o += 100 + len;
    try { out[i] = verify(null, msg, key(pk), sig) ? 1 : 0; } catch { out[i] = 0; }
  }
  parentPort.postMessage({ id, out }, [out.buffer]);
});
`;

interface Pending {
  publicKey: Uint8Array;
  message: Uint8Array;
  signature: Uint8Array;
  resolve: (ok: boolean) => void;
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

  /** `size` worker threads (0 = verify on the calling thread). */
  constructor(size: number) {
    for (let i = 0; i < size; i++) {
      const worker = new Worker(WORKER_SOURCE, { eval: true });
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

  verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
    if (!ed25519StrictPrecheck(publicKey, signature)) return Promise.resolve(false);
    if (this.slots.length === 0 || this.closed) return Promise.resolve(verifyEd25519(publicKey, message, signature));
    return new Promise((resolve) => {
      this.queue.push({ publicKey, message, signature, resolve });
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
    for (const it of items) total += 100 + it.message.length;
    const buf = new ArrayBuffer(total);
    const view = new Uint8Array(buf);
    const dv = new DataView(buf);
    let o = 0;
    for (const it of items) {
      dv.setUint32(o, it.message.length);
      view.set(it.publicKey, o + 4);
      view.set(it.signature, o + 36);
      view.set(it.message, o + 100);
      o += 100 + it.message.length;
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
      it.resolve(out[i] === 1);
    });
  }

  /** A worker died: verify its outstanding items here, and stop using it. */
  private failSlot(slot: Slot): void {
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    for (const [id, w] of this.waiting) {
      if (w.slot !== slot) continue;
      this.waiting.delete(id);
      for (const it of w.items) it.resolve(verifyEd25519(it.publicKey, it.message, it.signature));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const it of this.queue) it.resolve(verifyEd25519(it.publicKey, it.message, it.signature));
    this.queue = [];
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
    this.slots.length = 0;
  }
}
