/**
 * The verifier SDK runs in browsers, where bytes may come from another realm (an iframe, a worker's
 * structured clone, a vm context): the proof checks must accept another realm's Uint8Array and
 * still refuse what is not bytes.
 */
import assert from 'node:assert/strict';
import { runInNewContext } from 'node:vm';
import { createHash } from 'node:crypto';
import { inclusionFailure, consistencyFailure, hashLeaf } from '../../src/verify/merkle.ts';
import { bothBackends } from '../helpers/crypto-backends.ts';

const sha = (...parts: Uint8Array[]): Uint8Array => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};

bothBackends('inclusion and consistency proofs accept another realm’s Uint8Array and refuse arrays of numbers', async () => {
  const a = await hashLeaf(new TextEncoder().encode('a'));
  const b = await hashLeaf(new TextEncoder().encode('b'));
  const root = sha(Uint8Array.of(1), a, b);
  const makeForeign = runInNewContext('(xs) => new Uint8Array(xs)') as (xs: number[]) => Uint8Array;
  const foreign = (bytes: Uint8Array): Uint8Array => makeForeign(Array.from(bytes));
  assert.equal(foreign(a) instanceof Uint8Array, false, 'the test needs bytes from another realm');

  assert.equal(await inclusionFailure(foreign(a), 0, 2, [foreign(b)], foreign(root)), null);
  assert.equal(await consistencyFailure(1, 2, foreign(a), foreign(root), [foreign(b)]), null);
  // a wrong root from another realm still fails for the right reason
  assert.match((await inclusionFailure(foreign(a), 0, 2, [foreign(b)], foreign(a))) ?? '', /root/);
  // not bytes: refused with a reason, never thrown
  const numbers = Array.from(b) as unknown as Uint8Array;
  assert.match((await inclusionFailure(a, 0, 2, [numbers], root)) ?? '', /32-byte hashes/);
});
