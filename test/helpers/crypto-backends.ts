/**
 * The verifier core's two crypto backends (src/verify/crypto.ts): WebCrypto (the default, what a
 * browser runs) and node:crypto (what `anchor-witness/client` and the CLI install). test/verify
 * runs every verifier under both: `bothBackends` registers a test once per backend.
 */
import { test, type TestContext } from 'node:test';
import { nodeCryptoBackend } from '../../src/client/node-crypto.ts';
import { cryptoBackend, setCryptoBackend, type CryptoBackend } from '../../src/verify/crypto.ts';

export interface NamedBackend {
  name: 'WebCrypto' | 'node:crypto';
  backend: CryptoBackend | undefined;
}

export const BACKENDS: readonly NamedBackend[] = [
  { name: 'WebCrypto', backend: undefined },
  { name: 'node:crypto', backend: nodeCryptoBackend() },
];

/** Run `fn` with `backend` installed, then restore the previous one. */
export async function withBackend<T>(backend: CryptoBackend | undefined, fn: () => Promise<T>): Promise<T> {
  const previous = cryptoBackend();
  setCryptoBackend(backend);
  try {
    return await fn();
  } finally {
    setCryptoBackend(previous);
  }
}

/** Register `name` once per backend (`name [WebCrypto]`, `name [node:crypto]`); tests of a file run one after another. */
export function bothBackends(
  name: string,
  fn: (t: TestContext, b: NamedBackend) => Promise<void> | void,
  opts: { skip?: boolean | string } = {},
): void {
  for (const b of BACKENDS) void test(`${name} [${b.name}]`, opts, (t) => withBackend(b.backend, async () => fn(t, b)));
}
