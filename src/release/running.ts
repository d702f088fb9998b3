/**
 * The running bundle (SPEC §6 `running_digest`): the SHA-256 of the bundled entry file this process
 * loaded. `npm run build:bundle` (src/release/bundle.ts) defines `__AW_BUNDLE__` when it bundles, so this
 * module knows whether it runs from the bundle; there, every module's `import.meta.url` is the
 * bundle file itself (one file holds the application code), which is what is hashed. It is not
 * `process.argv[1]`, which a wrapper or a symlink could make point elsewhere.
 *
 * Run from the TypeScript sources (bin/anchor-witness.js, `node src/…`), the code is ~70 files
 * and no single file is "what runs": there is no running digest, and `serve --build-attestation`
 * refuses to start (docs/build.md).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sha256Hex } from '../crypto/sha256.ts';

// Replaced by `true` in the bundle (esbuild `define`); an undeclared global in the sources.
declare const __AW_BUNDLE__: boolean | undefined;

export interface RunningBundle {
  /** Absolute path of the bundle file the process loaded. */
  file: string;
  /** Lowercase hex SHA-256 of its bytes, read once at the first call (start-up). */
  digest: string;
}

let cached: RunningBundle | undefined;

/** True when this code runs from the bundle. */
export function isBundled(): boolean {
  return typeof __AW_BUNDLE__ === 'boolean';
}

/** The bundle this process runs, or undefined when it runs from the TypeScript sources. */
export function runningBundle(): RunningBundle | undefined {
  if (!isBundled()) return undefined;
  if (cached === undefined) {
    const file = fileURLToPath(import.meta.url);
    cached = { file, digest: fileDigest(file) };
  }
  return cached;
}

/** Lowercase hex SHA-256 of a file's bytes. */
export function fileDigest(path: string): string {
  return sha256Hex(readFileSync(path));
}
