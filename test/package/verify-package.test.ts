// The verify-only package, `anchor-witness-verify` (issue 27 item 6: an app that only verifies used to
// install the whole server, 105 packages, 82 MB and a native addon). Built by the project's own
// script (`node src/release/verify-package.ts --out DIR --pack`, what `npm run pack:verify` runs)
// into a temporary directory, then installed from the tarball into an empty project with
// `npm install --offline` and an EMPTY npm cache, so the install succeeds only if the package needs
// nothing else. There: node_modules holds that one package, no native code, no import outside
// itself; a Node consumer imports it by name and checks known-answer vectors (SPEC §3.1 anchor,
// cosignature/v1 checkpoint); the shared verifier scenario passes on real witness output against
// the installed modules; esbuild bundles it for the browser with nothing left external; and a
// browser-typed TypeScript consumer (DOM lib, no @types/node) type-checks against its declarations.
// The checkout is never written to. Needs no network.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { childEnv, ok, run } from '../helpers/npm-child.ts';
import { makeVerifyFixtures } from '../helpers/verify-fixtures.ts';
import { runScenario } from '../verify/scenario.ts';
import type * as Verify from '../../src/verify/index.ts';
import { foreignImports, PACKAGE_NAME } from '../../src/release/verify-package.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const NODE24_DIR = dirname(process.execPath);
const MAIN = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

let tmp = '';
let app = '';
let installed = '';
let tarball = '';
let tarFiles: string[] = [];

function walk(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((p) => statSync(join(dir, p)).isFile())
    .map((p) => p.split(sep).join('/'))
    .sort();
}

before(
  async () => {
    tmp = mkdtempSync(join(tmpdir(), 'aw-verify-pkg-'));
    const env = childEnv(NODE24_DIR);
    // The build and pack, as `npm run pack:verify` does them, into a staging directory.
    const built = ok(
      await run(process.execPath, [join(ROOT, 'src', 'release', 'verify-package.ts'), '--out', join(tmp, 'stage'), '--pack'], {
        cwd: tmp,
        env,
        timeoutMs: 240_000,
      }),
      'verify-package.ts --pack',
    );
    tarball = built.stdout.trim().split('\n').at(-1)!;
    assert.equal(tarball, `${PACKAGE_NAME}-${MAIN.version}.tgz`);
    tarFiles = ok(await run('tar', ['-tzf', join(tmp, tarball)], { cwd: tmp, env }), 'tar -tzf')
      .stdout.trim()
      .split('\n')
      .map((p) => p.replace(/^package\//, ''))
      .sort();

    app = join(tmp, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), '{"name":"verify-only-app","version":"1.0.0","private":true,"type":"module"}\n');
    // --offline with a cache of its own that starts empty: any dependency would fail the install.
    ok(
      await run(
        'npm',
        ['install', '--offline', '--cache', join(tmp, 'npm-cache'), '--no-audit', '--no-fund', '--loglevel=error', join(tmp, tarball)],
        { cwd: app, env, timeoutMs: 240_000 },
      ),
      'npm install --offline <tarball>',
    );
    installed = join(app, 'node_modules', PACKAGE_NAME);
  },
  { timeout: 600_000 },
);

after(() => {
  if (tmp !== '') rmSync(tmp, { recursive: true, force: true });
});

void test('the build refuses any import that is not a file of the package (a package, a node: built-in, a path outside lib/)', () => {
  const dir = join(tmp, 'imports');
  mkdirSync(join(dir, 'lib', 'x'), { recursive: true });
  writeFileSync(join(dir, 'lib', 'b.js'), 'export const b = 1;\n');
  writeFileSync(
    join(dir, 'lib', 'x', 'a.js'),
    [
      '// import nope from "in-a-comment";',
      "import { b } from '../b.js';",
      "export * from '../b.js';",
      "import { webcrypto } from 'node:crypto';",
      "export { x } from 'some-package';",
      "const m = await import('../../outside.js');",
      "const n = await import('./missing.js');",
      'const s = "import y from \'in-a-string\'";',
      '',
    ].join('\n'),
  );
  assert.deepEqual(foreignImports(dir, ['lib/b.js', 'lib/x/a.js']), [
    "lib/x/a.js imports 'node:crypto'",
    "lib/x/a.js imports 'some-package'",
    "lib/x/a.js imports '../../outside.js'",
    "lib/x/a.js imports './missing.js'",
  ]);
});

void test('the tarball holds compiled modules, declarations, package.json, README.md and LICENSE; no dependency, no script', () => {
  const stray = tarFiles.filter((p) => !/^lib\/.+\.(js|d\.ts)$/.test(p) && !['package.json', 'README.md', 'LICENSE'].includes(p));
  assert.deepEqual(stray, []);
  for (const p of ['lib/verify/index.js', 'lib/verify/index.d.ts', 'lib/crypto/webcrypto.js', 'README.md', 'LICENSE'])
    assert.ok(tarFiles.includes(p), `${p} is in the tarball`);
  const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
  assert.equal(pkg.name, PACKAGE_NAME);
  assert.equal(pkg.version, MAIN.version, 'released together with the main package, same version');
  for (const m of ['dependencies', 'peerDependencies', 'optionalDependencies', 'bundleDependencies', 'bundledDependencies', 'scripts'])
    assert.equal(pkg[m], undefined, `package.json has no ${m}`);
  assert.deepEqual(pkg.exports, {
    '.': { types: './lib/verify/index.d.ts', default: './lib/verify/index.js' },
    './package.json': './package.json',
  });
});

void test('installed offline into an empty project: one package, no dependency, no native code, nothing imported from outside', (t) => {
  assert.deepEqual(
    readdirSync(join(app, 'node_modules')).sort(),
    ['.package-lock.json', PACKAGE_NAME],
    'node_modules holds only the verifier',
  );
  const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
  assert.deepEqual(Object.keys(lock.packages).sort(), ['', `node_modules/${PACKAGE_NAME}`], 'the lockfile lists no other package');
  const files = walk(installed);
  assert.deepEqual(
    files.filter((f) => /\.(node|gyp|c|cc|cpp|h|wasm)$/.test(f) || f.startsWith('build/') || f.startsWith('prebuilds/')),
    [],
    'no native addon, no WebAssembly, nothing to compile',
  );
  assert.deepEqual(foreignImports(installed, files), [], 'every import is a file of the package');
  const bytes = files.reduce((n, f) => n + statSync(join(installed, f)).size, 0);
  const js = files.filter((f) => f.endsWith('.js'));
  const jsBytes = js.reduce((n, f) => n + statSync(join(installed, f)).size, 0);
  t.diagnostic(
    `${PACKAGE_NAME}@${MAIN.version}: 0 dependencies, no native code; installed ${bytes} bytes in ${files.length} files (${js.length} modules, ${jsBytes} bytes of JavaScript); tarball ${statSync(join(tmp, tarball)).size} bytes`,
  );
  // The whole package is a few hundred kB; the main package with its dependencies is tens of MB.
  assert.ok(bytes < 2_000_000, `installed size ${bytes} bytes`);
});

void test('a Node consumer imports it by name and checks known-answer vectors (SPEC §3.1 anchor, cosignature/v1 checkpoint)', async () => {
  writeFileSync(
    join(app, 'vectors.mjs'),
    `import * as v from '${PACKAGE_NAME}';
const hex = (h) => Uint8Array.from(h.match(/../g), (b) => parseInt(b, 16));
const hexOf = (b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
const code = (p) => p.then(() => 'accepted', (e) => (e instanceof v.VerificationError || e instanceof v.UsageError ? e.code : 'other: ' + String(e)));
// SPEC §3.1: the reference anchor, its party signature, leaf hash and witness cosignature.
const anchor = v.decodeResponseAnchor({
  seed_id: '34bd10b6ba98832e3303b89981018793572ce78a82ff45bc4446772e80ca6012',
  index: 1, head: '01'.repeat(32), cumulative: 100, timestamp: '2023-11-14T22:13:21Z',
  witness_set: { said: 'EWitSet', threshold: 2 },
  sig_party: { curve: 'ed25519', public_key: 'fd1724385aa0c75b64fb78cd602fa1d991fdebf76b13c58ed702eac835e9f618',
    signature: 'f6440aa83c50ee7cbe0633115a5e330bd6e264aa0441aa3cd5d788420db0044071d2992bfe666ad0e276ae76c2bee6cb144fa7181ce7df37389ca794ac316e09' },
});
const witnessKey = hex('8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c');
const cosig = hex('bb8313d3c4c1c260f120e65e04c82cc34f0e8717e329ec8607603555422d7d0b39b6a2b3a6e1bbc672b3752d7a6b4bac2b38f2ab29b96072ce29b7abbc144e05');
// cosignature/v1: a checkpoint signed by its log and cosigned by a witness.
const log = await v.noteKeyFromVkey('example.com/log+01882cac+ASVDuS/xCVURR2rcg2nbbdyTNmWhGXjdoUBO4QZsqVWd');
const w1 = await v.noteKeyFromVkey('witness.example/w1+e75f6532+BAOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4');
const note = 'example.com/log\\n3\\n1Pksj7uJcg6ztVZ3x9fvrd/rENEaGoSguo8aIzN/qpU=\\n\\n'
  + '— example.com/log AYgsrE/ez4/BhHEe4UBKQHGthuzE+YCMq5nfqTEDvgtHUzlv1vwdYEWyDe6tF/l2ODx37u1cJKECMSuVvzaIINOTAgY=\\n'
  + '— witness.example/w1 519lMgAAAABlU/EAYZ6u2iYaCM2WgDyyFQck4Op4QA7FWwiBFn4VWmoq2n7G4bwnmLJVQMd24K0/GaLg2A8MIYOpoBos4ha/phuYCg==\\n';
const cp = await v.verifyCosignedCheckpoint(note, { cosigners: [w1], log: [log] });
console.log(JSON.stringify({
  party: await v.verifyPartySignature(anchor),
  partyTampered: await v.verifyPartySignature({ ...anchor, cumulative: 101n }),
  leaf: hexOf(await v.hashLeaf(v.anchorLogEntry(anchor))),
  cosignature: await v.verifyEd25519(witnessKey, v.anchorLogEntry(anchor), cosig),
  checkpoint: [cp.checkpoint.origin, cp.checkpoint.size, cp.logVerified, cp.cosigners.map((c) => c.name)],
  checkpointTampered: await code(v.verifyCosignedCheckpoint(note.replace('519lMgAAAABlU/EAYZ6u', '519lMgAAAABlU/EAYZ6v'), { cosigners: [w1], log: [log] })),
}));
`,
  );
  const r = ok(await run(process.execPath, ['vectors.mjs'], { cwd: app, env: childEnv(NODE24_DIR) }), 'vectors.mjs');
  assert.deepEqual(JSON.parse(r.stdout), {
    party: true,
    partyTampered: false,
    leaf: '23d621c544d6be4c1179d21db944a0d38c89c2f7d30d9750b8c4c6ef9b3855e2',
    cosignature: true,
    checkpoint: ['example.com/log', 3, true, ['witness.example/w1']],
    checkpointTampered: 'cosignature_invalid',
  });
});

void test('real witness output: the shared verifier scenario passes against the installed package', async () => {
  // Resolved from the consumer project, through the package's `exports`.
  const entry = createRequire(join(app, 'index.js')).resolve(PACKAGE_NAME);
  assert.equal(entry, join(installed, 'lib', 'verify', 'index.js'));
  const v = (await import(pathToFileURL(entry).href)) as typeof Verify;
  const fx = await makeVerifyFixtures();
  try {
    const outcomes = await runScenario(v, fx);
    assert.ok(outcomes.length > 25, `${outcomes.length} checks ran`);
    for (const o of outcomes) assert.equal(o.got, o.want, o.name);
  } finally {
    await fx.cleanup();
  }
});

void test('for the browser: esbuild bundles it with nothing external, and a DOM-typed consumer without @types/node type-checks', async (t) => {
  writeFileSync(
    join(app, 'browser.ts'),
    `import { parseJson, verifyAnchorResponse, VerificationError, type PinnedWitness, type VerifiedReceipt } from '${PACKAGE_NAME}';

export async function check(url: string, witness: PinnedWitness, partyKey: Uint8Array): Promise<VerifiedReceipt | string> {
  try {
    const body = parseJson(await (await fetch(url)).text());
    return await verifyAnchorResponse(body, witness, { curve: 'ed25519', publicKey: partyKey });
  } catch (e) {
    if (e instanceof VerificationError) return e.code;
    throw e;
  }
}
const out = document.createElement('pre');
out.textContent = String(await check(location.href, { publicKey: new Uint8Array(32), logOrigin: 'w1.example.org/anchors' }, new Uint8Array(32)));
`,
  );
  writeFileSync(
    join(app, 'wrong.ts'),
    readFileSync(join(app, 'browser.ts'), 'utf8').replace(
      "{ curve: 'ed25519', publicKey: partyKey }",
      "{ curve: 'ed448', publicKey: partyKey }",
    ),
  );
  const tsc = (file: string) => {
    writeFileSync(
      join(app, `tsconfig.${file}.json`),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          lib: ['es2022', 'dom'],
          module: 'esnext',
          moduleResolution: 'bundler',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: [],
        },
        files: [`${file}.ts`],
      }),
    );
    return run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', `tsconfig.${file}.json`], {
      cwd: app,
      env: childEnv(NODE24_DIR),
      timeoutMs: 180_000,
    });
  };
  const bundled = build({
    absWorkingDir: app,
    entryPoints: ['browser.ts'],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    metafile: true,
    logLevel: 'silent',
  });
  const [typed, wrong, b] = await Promise.all([tsc('browser'), tsc('wrong'), bundled]);
  assert.equal(
    typed.code,
    0,
    `tsc (DOM lib, no @types/node, skipLibCheck false) against the installed declarations:\n${typed.stdout}${typed.stderr}`,
  );
  assert.notEqual(wrong.code, 0, 'a wrong argument type is refused: the declarations are checked, not any');
  assert.match(wrong.stdout, /wrong\.ts\(\d+,\d+\): error TS/);
  assert.deepEqual(b.errors, []);
  const meta = Object.values(b.metafile.outputs)[0]!;
  assert.deepEqual(meta.imports, [], 'nothing left external (no node: built-in, no package)');
  const inputs = Object.keys(b.metafile.inputs);
  assert.ok(
    inputs.every((p) => p === 'browser.ts' || p.startsWith(`node_modules/${PACKAGE_NAME}/lib/`)),
    inputs.join(', '),
  );
  t.diagnostic(`browser bundle of a verify-only page (esbuild --minify): ${b.outputFiles[0]!.contents.length} bytes`);
  assert.ok(existsSync(join(installed, 'lib', 'verify', 'index.d.ts')));
});
