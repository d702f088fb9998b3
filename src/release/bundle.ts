/**
 * `npm run build:bundle`: the anchor-witness application as ONE reproducible file,
 * `dist/anchor-witness.mjs` (SPEC §6: the file whose SHA-256 is `running_digest`). Development-time
 * only (esbuild is a devDependency). What the bundle holds and what it leaves outside the digest
 * (`better-sqlite3`, Node built-ins): docs/build.md.
 *
 * Usage: node src/release/bundle.ts [--out FILE]   → prints "<sha256>  <file>" (sha256sum format).
 */
import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { build, version as esbuildVersion } from 'esbuild';
import { sha256Hex } from '../crypto/sha256.ts';

/** The repository root (paths inside the bundle are relative to it). */
export const ROOT = resolve(import.meta.dirname, '..', '..');
export const ENTRY = 'src/cli/bundle-entry.ts';
export const DEFAULT_OUT = 'dist/anchor-witness.mjs';
/** Packages left out of the bundle (loaded from node_modules at run time). */
export const EXTERNAL: readonly string[] = ['better-sqlite3'];
export const ESBUILD_VERSION = esbuildVersion;

// CommonJS dependencies bundled into an ES module still call require() for Node built-ins (and
// better-sqlite3): give the module a real require, resolved from the bundle's own location.
const BANNER = "import { createRequire as __awCreateRequire } from 'node:module';\nconst require = __awCreateRequire(import.meta.url);";

export interface BundleResult {
  /** Absolute path written (undefined with `write: false`). */
  file: string | undefined;
  bytes: Uint8Array;
  /** Lowercase hex SHA-256 of `bytes`: the `running_digest` of a node started from this file. */
  digest: string;
  /** Source files in the bundle, relative to the repository root. */
  inputs: string[];
  /** Imports left to run time other than Node built-ins (EXTERNAL, and optional requires of dependencies that are not installed), sorted. */
  externals: string[];
}

/** Bundle the application; with `outFile` (relative to the cwd, default dist/anchor-witness.mjs under ROOT) write it atomically, mode 0755. */
export async function bundle(opts: { outFile?: string; write?: boolean } = {}): Promise<BundleResult> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [ENTRY],
    // Naming only: with write: false the path never reaches the output bytes.
    outfile: DEFAULT_OUT,
    write: false,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    external: [...EXTERNAL],
    keepNames: true,
    legalComments: 'eof',
    sourcemap: false,
    charset: 'utf8',
    banner: { js: BANNER },
    define: { __AW_BUNDLE__: 'true', 'import.meta.main': 'false' },
    metafile: true,
    logLevel: 'silent',
  });
  if (result.errors.length > 0 || result.outputFiles.length !== 1)
    throw new Error(`esbuild failed: ${result.errors.map((e) => e.text).join('; ')}`);
  const out = result.outputFiles[0]!;
  const bytes = out.contents;
  const meta = Object.values(result.metafile.outputs)[0]!;
  const externals = [...new Set(meta.imports.filter((i) => i.external && !isBuiltin(i.path)).map((i) => i.path))].sort();
  const inputs = Object.keys(result.metafile.inputs).sort();
  let file: string | undefined;
  if (opts.write !== false) {
    file = resolve(opts.outFile ?? resolve(ROOT, DEFAULT_OUT));
    mkdirSync(dirname(file), { recursive: true });
    const tmp = `${file}.tmp-${process.pid}`;
    try {
      writeFileSync(tmp, bytes, { mode: 0o755 });
      chmodSync(tmp, 0o755);
      renameSync(tmp, file);
    } catch (e) {
      rmSync(tmp, { force: true });
      throw e;
    }
  }
  return { file, bytes, digest: sha256Hex(bytes), inputs, externals };
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const i = args.indexOf('--out');
  const outFile = i >= 0 ? args[i + 1] : undefined;
  if ((i >= 0 && outFile === undefined) || args.length !== (i >= 0 ? 2 : 0)) {
    process.stderr.write('usage: node src/release/bundle.ts [--out FILE]\n');
    process.exit(2);
  }
  bundle(outFile === undefined ? {} : { outFile }).then(
    (r) => {
      const rel = relative(process.cwd(), r.file!);
      const shown = rel === '' || rel.startsWith('..') || isAbsolute(rel) ? r.file! : rel;
      process.stderr.write(
        `bundled ${r.inputs.length} modules with esbuild ${ESBUILD_VERSION} into ${shown} (${r.bytes.length} bytes); left to run time: Node built-ins, ${r.externals.join(', ')}\n`,
      );
      process.stdout.write(`${r.digest}  ${shown}\n`);
    },
    (e: unknown) => {
      process.stderr.write(`build: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
}
