/**
 * The one async lock of the tree: FIFO per key. `run(key, fn)` starts `fn` once every earlier
 * `run` of the same key has settled (fulfilled or rejected); runs of different keys do not wait for
 * each other. A key's entry is dropped when its queue drains, so memory follows the keys in use.
 *
 * Users: the store's writer mutex (one key: mutex.ts), the cosign role's per-origin lock
 * (src/cosign/add-checkpoint.ts), the key binder's reconcile lane (src/cosign/key-binder.ts) and
 * the log witnessing's one-exchange-at-a-time per peer (src/log-witness/submitter.ts).
 */
export class KeyedLock<K = string> {
  private readonly queues = new Map<K, { tail: Promise<unknown>; pending: number }>();

  run<T>(key: K, fn: () => Promise<T>): Promise<T> {
    let q = this.queues.get(key);
    if (q === undefined) this.queues.set(key, (q = { tail: Promise.resolve(), pending: 0 }));
    const queue = q;
    queue.pending++;
    const result = queue.tail.then(fn, fn);
    queue.tail = result.then(
      () => {
        if (--queue.pending === 0 && this.queues.get(key) === queue) this.queues.delete(key);
      },
      () => {
        if (--queue.pending === 0 && this.queues.get(key) === queue) this.queues.delete(key);
      },
    );
    return result;
  }

  /** Runs of `key` queued or running. */
  pending(key: K): number {
    return this.queues.get(key)?.pending ?? 0;
  }

  /** Keys with a run queued or running. */
  get size(): number {
    return this.queues.size;
  }
}
