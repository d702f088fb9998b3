/**
 * `npm run build:verify` / `npm run pack:verify`: the verify-only npm package
 * (`anchor-witness-verify`, packages/verify/). It is `src/verify/index.ts` and the protocol modules
 * it imports, compiled by tsc (packages/verify/tsconfig.json) to ES modules and declarations in
 * `lib/`, beside the package's own package.json and README.md and the repository's LICENSE. The
 * main package compiles the same sources with the same compiler to `lib/src/` and exports them as
 * `anchor-witness/verify`. Development-time only (typescript is a devDependency). docs/build.md,
 * "The verify-only package".
 *
 * The build refuses a package that would need anything installed beside it: every import in the
 * compiled JavaScript must be relative and name a file of `lib/` (no package, no `node:` built-in,
 * no `require`), the package.json must declare no dependency of any kind and no script, and its
 * version must be the main package's.
 *
 * Usage: node src/release/verify-package.ts [--out DIR] [--pack]
 *   --out DIR   build into DIR (created; package.json and README.md copied there) instead of packages/verify
 *   --pack      then `npm pack` it; the tarball goes to the current directory
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** The repository root. */
export const ROOT = resolve(import.meta.dirname, '..', '..');
/** The package's directory in the repository (its package.json, README.md and tsconfig.json). */
export const PACKAGE_DIR = join(ROOT, 'packages', 'verify');
export const PACKAGE_NAME = 'anchor-witness-verify';

/** package.json members that would make npm install something beside the package, or run code. */
const FORBIDDEN_MEMBERS = [
  'dependencies',
  'peerDependencies',
  'optionalDependencies',
  'bundleDependencies',
  'bundledDependencies',
  'scripts',
  'gypfile',
];

export interface VerifyPackage {
  /** The package directory built (absolute). */
  dir: string;
  version: string;
  /** Every file of `lib/`, relative to `dir`, sorted. */
  files: string[];
}

function run(file: string, args: readonly string[], cwd: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(file, args, { cwd, maxBuffer: 16 << 20, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err === null) resolvePromise(stdout);
      else reject(new Error(`${[file, ...args].join(' ')} failed:\n${stdout}${stderr}`.trimEnd()));
    });
  });
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((p) => statSync(join(dir, p)).isFile())
    .map((p) => p.split(sep).join('/'))
    .sort();
}

/** Import and export specifiers of compiled module text: static, dynamic and side-effect-only imports, re-exports and require calls (comments and strings ignored). */
export function importSpecifiers(js: string): string[] {
  return ts.preProcessFile(js, true, true).importedFiles.map((f) => f.fileName);
}

/** Every import of the compiled package that is not a relative path to a file of `lib/`. */
export function foreignImports(dir: string, files: readonly string[]): string[] {
  const lib = join(dir, 'lib');
  const bad: string[] = [];
  for (const f of files.filter((p) => p.endsWith('.js'))) {
    const file = join(dir, f);
    for (const spec of importSpecifiers(readFileSync(file, 'utf8'))) {
      const target = resolve(dirname(file), spec);
      const inside = spec.startsWith('./') || spec.startsWith('../');
      if (!inside || relative(lib, target).startsWith('..') || !files.includes(relative(dir, target).split(sep).join('/')))
        bad.push(`${f} imports '${spec}'`);
    }
  }
  return bad;
}

/** Build the package into `outDir` (default packages/verify). */
export async function buildVerifyPackage(outDir: string = PACKAGE_DIR): Promise<VerifyPackage> {
  const dir = resolve(outDir);
  const main = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; license: string };
  const pkg = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as Record<string, unknown>;
  if (pkg.name !== PACKAGE_NAME) throw new Error(`packages/verify/package.json: name must be ${PACKAGE_NAME}`);
  if (pkg.version !== main.version || pkg.license !== main.license)
    throw new Error(
      `packages/verify/package.json: version and license must be the main package's (${main.version}, ${main.license}); it has ${String(pkg.version)}, ${String(pkg.license)}`,
    );
  const forbidden = FORBIDDEN_MEMBERS.filter((m) => m in pkg);
  if (forbidden.length > 0) throw new Error(`packages/verify/package.json: the verify-only package declares no ${forbidden.join(', ')}`);

  mkdirSync(dir, { recursive: true });
  rmSync(join(dir, 'lib'), { recursive: true, force: true });
  if (dir !== PACKAGE_DIR) for (const f of ['package.json', 'README.md']) copyFileSync(join(PACKAGE_DIR, f), join(dir, f));
  copyFileSync(join(ROOT, 'LICENSE'), join(dir, 'LICENSE'));
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  await run(process.execPath, [tsc, '-p', join(PACKAGE_DIR, 'tsconfig.json'), '--outDir', join(dir, 'lib')], ROOT);

  const files = listFiles(join(dir, 'lib')).map((p) => `lib/${p}`);
  const bad = foreignImports(dir, files);
  if (bad.length > 0)
    throw new Error(
      `the verify-only package must import nothing outside itself (src/verify must stay zero-dependency):\n  ${bad.join('\n  ')}`,
    );
  const notModules = files.filter((p) => !p.endsWith('.js') && !p.endsWith('.d.ts'));
  if (notModules.length > 0) throw new Error(`unexpected build output: ${notModules.join(', ')}`);
  return { dir, version: main.version, files };
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const i = args.indexOf('--out');
  const outDir = i >= 0 ? args[i + 1] : undefined;
  const pack = args.includes('--pack');
  if ((i >= 0 && (outDir === undefined || outDir.startsWith('--'))) || args.length !== (i >= 0 ? 2 : 0) + (pack ? 1 : 0)) {
    process.stderr.write('usage: node src/release/verify-package.ts [--out DIR] [--pack]\n');
    process.exit(2);
  }
  const cwd = process.cwd();
  buildVerifyPackage(outDir === undefined ? PACKAGE_DIR : resolve(cwd, outDir))
    .then(async (p) => {
      const js = p.files.filter((f) => f.endsWith('.js')).length;
      const rel = relative(cwd, p.dir);
      const shown = rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? p.dir : rel;
      process.stderr.write(`built ${PACKAGE_NAME}@${p.version} in ${shown}: ${js} modules with declarations, no dependencies\n`);
      if (pack) {
        // A folder spec, so that npm packs this directory even when run from an npm script (which sets
        // npm_config_local_prefix to the repository root).
        const out = await run('npm', ['pack', '--loglevel=error', '--pack-destination', cwd, p.dir], cwd);
        process.stdout.write(out);
      }
    })
    .catch((e: unknown) => {
      process.stderr.write(`build:verify: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    });
}
