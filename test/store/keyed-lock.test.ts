// The one keyed lock (src/store/keyed-lock.ts): FIFO per key, keys independent, a failure never
// blocks the queue, and a drained key leaves no entry behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyedLock } from '../../src/store/keyed-lock.ts';
import { Mutex } from '../../src/store/mutex.ts';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

void test('runs of one key are FIFO and never overlap; other keys do not wait', async () => {
  const lock = new KeyedLock();
  const events: string[] = [];
  let releaseA!: () => void;
  const a1 = lock.run('a', async () => {
    events.push('a1 start');
    await new Promise<void>((r) => (releaseA = r));
    events.push('a1 end');
    return 1;
  });
  const a2 = lock.run('a', () => {
    events.push('a2');
    return Promise.resolve(2);
  });
  const b1 = lock.run('b', () => {
    events.push('b1');
    return Promise.resolve(3);
  });
  assert.equal(await b1, 3); // b does not wait for a's holder
  await tick();
  assert.deepEqual(events, ['a1 start', 'b1']);
  assert.equal(lock.pending('a'), 2);
  releaseA();
  assert.deepEqual(await Promise.all([a1, a2]), [1, 2]);
  assert.deepEqual(events, ['a1 start', 'b1', 'a1 end', 'a2']);
});

void test('a rejected run answers its caller and the next run still goes', async () => {
  const lock = new KeyedLock();
  const failed = lock.run('k', () => Promise.reject(new Error('boom')));
  const next = lock.run('k', () => Promise.resolve('after'));
  await assert.rejects(failed, /boom/);
  assert.equal(await next, 'after');
});

void test('a drained key leaves no entry (memory follows the keys in use)', async () => {
  const lock = new KeyedLock();
  await Promise.all(Array.from({ length: 100 }, (_, i) => lock.run(`origin${i % 10}`, () => Promise.resolve(i))));
  await tick();
  assert.equal(lock.size, 0);
  assert.equal(lock.pending('origin1'), 0);
});

void test('Mutex is the lock of one key: one run at a time, in call order', async () => {
  const m = new Mutex();
  let running = 0;
  let most = 0;
  const order: number[] = [];
  await Promise.all(
    Array.from({ length: 5 }, (_, i) =>
      m.run(async () => {
        running++;
        most = Math.max(most, running);
        await tick();
        order.push(i);
        running--;
      }),
    ),
  );
  assert.equal(most, 1);
  assert.deepEqual(order, [0, 1, 2, 3, 4]);
});
