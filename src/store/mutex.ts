import { KeyedLock } from './keyed-lock.ts';

/** A FIFO async mutex: `run` executes one function at a time, in call order (a KeyedLock of one key). */
export class Mutex {
  private readonly lock = new KeyedLock<null>();

  run<T>(fn: () => Promise<T>): Promise<T> {
    return this.lock.run(null, fn);
  }
}
