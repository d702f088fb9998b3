// The npm package as a new user gets it (issue 18): `npm pack` the project, `npm install` the
// tarball into a fresh temporary project, and there run the installed `anchor-witness` and
// `token-bridge` commands (Node 24 and 22), start a witness with the installed CLI, submit a real
// anchor through `anchor-witness party …`, verify that witness's response with the SDK imported
// from an .mjs consumer (`anchor-witness`, `anchor-witness/client` and the pure `anchor-witness/verify`,
// Node 24 and 22), and
// type-check a .ts consumer against the shipped declarations (`tsc --noEmit`). The verify-only
// package (`anchor-witness-verify`, test/package/verify-package.test.ts) built from the same checkout
// must hold exactly the main package's compiled `anchor-witness/verify` modules.
//
// The checkout is never written to: the project is copied (without node_modules, .git and build
// output) to a staging directory whose node_modules is a symlink to the checkout's, and packed
// there (`prepack` runs `npm run build`). Node 22 comes from the `node@22` npm package, installed
// once into a cache directory under the OS temp dir and reused. Needs the npm registry (the
// tarball's dependencies and node@22; npm's cache makes later runs fast).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { arch, platform, tmpdir } from 'node:os';
import { delimiter, dirname, join, relative, sep } from 'node:path';
import { spawnServe, type ServeChild } from '../helpers/spawn-serve.ts';
import { buildVerifyPackage } from '../../src/release/verify-package.ts';
import { oldNode } from '../helpers/old-node.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const NODE24_DIR = dirname(process.execPath);
/** Build output and local state that must not be staged (the package is built from the sources). */
const NOT_STAGED = new Set(['node_modules', '.git', 'lib', 'dist', 'coverage', '.data', 'test-artifacts', 'tmp']);
/** What the package may hold: the compiled output, the sources its declaration maps point to, and npm's always-included files. */
const PUBLISHED = /^(lib\/|src\/|package\.json$|README\.md$|LICENSE$)/;

// npm sets these for the scripts it runs (`npm test`); a child npm would inherit them and, for
// example, install into this checkout (npm_config_local_prefix). Registry, cache and proxy settings stay.
const NPM_STRIP =
  /^npm_(lifecycle_|package_|command$|execpath$|node_execpath$|config_(local_prefix|prefix|global_prefix|globalconfig|call|nodedir|node_gyp|npm_version|user_agent|init_module)$)/i;
function childEnv(nodeDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!NPM_STRIP.test(k)) env[k] = v;
  // `#!/usr/bin/env node` in the installed bins, and npm itself, run the Node this PATH names first.
  env.PATH = [nodeDir, ...(process.env.PATH ?? '').split(delimiter).filter((p) => p !== '' && p !== nodeDir)].join(delimiter);
  env.NO_UPDATE_NOTIFIER = '1';
  return { ...env, ...extra };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}
/** Run a program (no shell); resolves with its exit code and output, never rejects (a timeout is code null). */
function run(file: string, args: readonly string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd: opts.cwd, env: opts.env, timeout: opts.timeoutMs ?? 60_000, killSignal: 'SIGKILL', maxBuffer: 16 << 20, encoding: 'utf8' },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
        resolve({ code, stdout, stderr: err !== null && code === null ? `${stderr}\n${err.message}` : stderr });
      },
    );
  });
}
function ok(r: Run, what: string): Run {
  assert.equal(r.code, 0, `${what} failed (exit ${String(r.code)}):\n${r.stderr.slice(-4000)}`);
  return r;
}

/**
 * Node 22 from the `node@22` npm package, installed once per machine into the OS temp dir (about
 * 10 s and 190 MB) and reused: a fresh install goes to a private directory that is then renamed into
 * place, so concurrent runs never see a half-installed copy.
 */
async function node22(): Promise<string> {
  const cache = join(tmpdir(), `anchor-witness-test-node22-${platform()}-${arch()}`);
  const bin = join(cache, 'node_modules', 'node', 'bin', 'node');
  const works = async (file: string) =>
    existsSync(file) && /^v22\./.test((await run(file, ['--version'], { cwd: tmpdir(), env: childEnv(NODE24_DIR) })).stdout);
  if (await works(bin)) return bin;
  const fresh = mkdtempSync(`${cache}.tmp-`);
  try {
    writeFileSync(join(fresh, 'package.json'), '{"name":"node22-cache","private":true,"allowScripts":{"node":true}}\n');
    ok(
      await run('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--loglevel=error', 'node@22'], {
        cwd: fresh,
        env: childEnv(NODE24_DIR),
        timeoutMs: 240_000,
      }),
      'npm install node@22',
    );
    const freshBin = join(fresh, 'node_modules', 'node', 'bin', 'node');
    assert.ok(await works(freshBin), 'the node@22 package gives a working Node 22');
    rmSync(cache, { recursive: true, force: true });
    try {
      renameSync(fresh, cache);
    } catch {
      // Another run renamed its copy first: use that one.
    }
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
  assert.ok(await works(bin), `Node 22 at ${bin}`);
  return bin;
}

let tmp = '';
let app: string;
let node22Bin: string;
let packed: { filename: string; size: number; unpackedSize: number; files: { path: string }[] };
let witness: ServeChild | undefined;
const t0 = Date.now();

before(
  async () => {
    tmp = mkdtempSync(join(tmpdir(), 'aw-pack-'));
    const stage = join(tmp, 'stage');
    app = join(tmp, 'app');
    const packAndInstall = async () => {
      cpSync(ROOT, stage, {
        recursive: true,
        filter: (src) => relative(ROOT, src).split(sep)[0] === '' || !NOT_STAGED.has(relative(ROOT, src).split(sep)[0]!),
      });
      symlinkSync(join(ROOT, 'node_modules'), join(stage, 'node_modules'), 'dir');
      const pack = ok(
        await run('npm', ['pack', '--json', '--loglevel=error', '--pack-destination', tmp], {
          cwd: stage,
          env: childEnv(NODE24_DIR),
          timeoutMs: 240_000,
        }),
        'npm pack',
      );
      // `npm pack --json` prints the prepack script's output first, then the JSON array.
      const list = JSON.parse(pack.stdout.slice(pack.stdout.lastIndexOf('\n[') + 1)) as (typeof packed)[];
      packed = list[0]!;
      mkdirSync(app);
      // allowScripts as in the checkout's package.json: npm 11 warns about unlisted install scripts, and the
      // witness needs better-sqlite3's (its native addon).
      writeFileSync(
        join(app, 'package.json'),
        '{"name":"aw-consumer","version":"1.0.0","private":true,"type":"module","allowScripts":{"better-sqlite3":true}}\n',
      );
      ok(
        await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', join(tmp, packed.filename)], {
          cwd: app,
          env: childEnv(NODE24_DIR),
          timeoutMs: 300_000,
        }),
        'npm install <tarball>',
      );
    };
    [, node22Bin] = await Promise.all([packAndInstall(), node22()]);
    process.stderr.write(
      `# pack-install: packed and installed in ${Date.now() - t0} ms (tarball ${packed.size} B, unpacked ${packed.unpackedSize} B, ${packed.files.length} files)\n`,
    );
  },
  { timeout: 600_000 },
);

after(async () => {
  await witness?.kill();
  if (tmp !== '') rmSync(tmp, { recursive: true, force: true });
  process.stderr.write(`# pack-install: ${Date.now() - t0} ms in all\n`);
});

void test('the tarball holds the compiled package and nothing from the test, bench or fixture trees', () => {
  const paths = packed.files.map((f) => f.path);
  const stray = paths.filter((p) => !PUBLISHED.test(p));
  assert.deepEqual(stray, [], 'only lib/, src/, package.json, README.md and LICENSE are published');
  for (const p of [
    'package.json',
    'README.md',
    'lib/bin/anchor-witness.js',
    'lib/bin/token-bridge.js',
    'lib/src/index.js',
    'lib/src/index.d.ts',
    'lib/src/index.d.ts.map',
    'lib/src/client/index.js',
    'lib/src/client/index.d.ts',
    'lib/src/verify/index.js',
    'lib/src/verify/index.d.ts',
    // Worker threads started by URL next to their module (src/registry/kel-evaluator.ts, src/kel-witness/offload.ts).
    'lib/src/registry/kel-worker.js',
    'lib/src/kel-witness/offload-worker.js',
  ]) {
    assert.ok(paths.includes(p), `${p} is published`);
  }
  assert.deepEqual(
    paths.filter((p) => p.startsWith('lib/') && /\.(ts|mts|cts)$/.test(p) && !p.endsWith('.d.ts')),
    [],
    'lib/ holds JavaScript and declarations only',
  );
  // Every compiled module imports .js, never a .ts the installed Node would refuse to load.
  const installed = join(app, 'node_modules', 'anchor-witness');
  const tsImports = paths.filter(
    (p) =>
      p.startsWith('lib/') &&
      p.endsWith('.js') &&
      /from\s+["'][^"']+\.ts["']|import\(\s*["'][^"']+\.ts["']/.test(readFileSync(join(installed, p), 'utf8')),
  );
  assert.deepEqual(tsImports, []);
  const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { engines: { node: string } };
  assert.equal(pkg.engines.node, '>=22');
  assert.ok(statSync(join(installed, 'lib', 'bin', 'anchor-witness.js')).mode & 0o111, 'the bin is executable');
});

void test('anchor-witness/verify ships the modules of the verify-only package anchor-witness-verify, byte for byte', async (t) => {
  // One source, two packages (docs/build.md, "The verify-only package"): the verify-only build of the
  // same checkout must give exactly the files the main package has under lib/src/ (declarations
  // without the main build's declaration-map comment).
  const verify = await buildVerifyPackage(join(tmp, 'verify-only'));
  const main = join(app, 'node_modules', 'anchor-witness', 'lib', 'src');
  const stripMap = (text: string) => text.replace(/\n\/\/# sourceMappingURL=[^\n]*\n?$/, '\n');
  const differ = verify.files.filter((f) => {
    const mine = join(main, f.slice('lib/'.length));
    if (!existsSync(mine)) return true;
    const [a, b] = [readFileSync(join(verify.dir, f), 'utf8'), readFileSync(mine, 'utf8')];
    return f.endsWith('.d.ts') ? a !== stripMap(b) : a !== b;
  });
  assert.ok(verify.files.includes('lib/verify/index.js'));
  assert.deepEqual(differ, [], `${verify.files.length} files compared`);
  // What the full install costs, beside the verify-only package's figure (verify-package.test.ts).
  const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
  const all = readdirSync(join(app, 'node_modules'), { recursive: true, encoding: 'utf8' });
  const sizes = all.map((p) => lstatSync(join(app, 'node_modules', p))).filter((s) => s.isFile());
  t.diagnostic(
    `the full install: ${Object.keys(lock.packages).length - 1} packages, ${sizes.reduce((n, s) => n + s.size, 0)} bytes in node_modules, ${all.filter((p) => p.endsWith('.node')).length} native addon file(s)`,
  );
});

void test('the installed commands answer --help under Node 24 and Node 22', async () => {
  const bins = join(app, 'node_modules', '.bin');
  const checks = [];
  for (const [nodeDir, label] of [
    [NODE24_DIR, 'Node 24'],
    [dirname(node22Bin), 'Node 22'],
  ] as const) {
    // Through the .bin link and its `#!/usr/bin/env node` line, as npx and npm scripts run it.
    checks.push(
      run(join(bins, 'anchor-witness'), ['--help'], { cwd: app, env: childEnv(nodeDir) }).then((r) => {
        assert.match(ok(r, `anchor-witness --help (${label})`).stdout, /^Usage: anchor-witness .*\n[\s\S]*\bserve\b[\s\S]*\bparty\b/);
      }),
      run(join(bins, 'token-bridge'), ['--help'], { cwd: app, env: childEnv(nodeDir) }).then((r) => {
        assert.match(ok(r, `token-bridge --help (${label})`).stdout, /^Usage: token-bridge .*\n[\s\S]*\bserve\b/);
      }),
    );
  }
  await Promise.all(checks);
});

const old = oldNode();
void test(
  'the installed commands under an old Node: one line naming the Node needed, exit 1 (no segfault from the native addon)',
  { skip: old === undefined ? 'no Node older than 22 on this machine (PATH, /usr/local/bin, /usr/bin)' : false },
  async () => {
    const bins = join(app, 'node_modules', '.bin');
    for (const program of ['anchor-witness', 'token-bridge']) {
      // Through the .bin link and its `#!/usr/bin/env node` line, with the old Node first on PATH.
      const r = await run(join(bins, program), ['serve', '--listen', '127.0.0.1:0'], { cwd: app, env: childEnv(dirname(old!.bin)) });
      assert.equal(r.code, 1, `${program} under ${old!.version}: exit ${String(r.code)}\n${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.equal(
        r.stderr,
        `${program} needs Node >= 22 (ML-DSA-44 needs >= 24.6), this is Node ${old!.version}; install Node 22 or later\n`,
      );
    }
  },
);

/**
 * A fresh directory under the test's temp dir for one installed-CLI scenario: `f(name)` is a path in
 * it, `cli` the installed `anchor-witness` bin, `aw(args, what)` runs it there under Node 24 and
 * asserts exit 0.
 */
function workspace(name: string): { f: (name: string) => string; cli: string; aw: (args: string[], what: string) => Promise<Run> } {
  const dir = join(tmp, name);
  mkdirSync(dir);
  const cli = join(app, 'node_modules', '.bin', 'anchor-witness');
  return {
    f: (file) => join(dir, file),
    cli,
    aw: async (args, what) => ok(await run(cli, args, { cwd: dir, env: childEnv(NODE24_DIR), timeoutMs: 60_000 }), what),
  };
}

void test('installed CLI: keygen, serve, party submit; the SDK from .mjs (Node 24 and 22) verifies the response; a .ts consumer type-checks', async () => {
  const { f, cli, aw } = workspace('work');

  const [witnessKey, partyKey] = await Promise.all([
    aw(['keygen', '--out', f('witness.pem')], 'keygen'),
    aw(['party', 'keygen', '--out', f('party.pem')], 'party keygen'),
  ]);
  const witnessHex = witnessKey.stdout.trim();
  const partyHex = partyKey.stdout.trim();
  assert.match(witnessHex, /^[0-9a-f]{64}$/);
  assert.match(partyHex, /^[0-9a-f]{64}$/);
  writeFileSync(
    f('registry.json'),
    JSON.stringify({ parties: [{ id: 'did:keri:EPkg', delegator: 'did:keri:ERoot', keys: [{ curve: 'ed25519', public_key: partyHex }] }] }),
  );

  witness = await spawnServe(
    [
      'serve',
      '--listen',
      '127.0.0.1:0',
      '--data-dir',
      f('data'),
      '--key',
      f('witness.pem'),
      '--name',
      'w.pkg.test',
      '--roles',
      'anchor',
      '--registry',
      f('registry.json'),
      '--verify-threads',
      '0',
      '--log-level',
      'warn',
    ],
    { entry: cli },
  );
  const url = witness.url;
  // The status page renders from the installed package (no asset is missing from it).
  const page = await fetch(`${url}/`);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /w\.pkg\.test/);

  await aw(['party', 'witness-set', '--witness', url, '--threshold', '1', '--out', f('set.json')], 'party witness-set');
  const seed = (
    await aw(
      [
        'party',
        'init',
        '--state',
        f('chain.json'),
        '--key',
        f('party.pem'),
        '--agent',
        'did:keri:EPkg',
        '--root',
        'did:keri:ERoot',
        '--scope',
        'EPkgScope',
        '--witness-set',
        f('set.json'),
      ],
      'party init',
    )
  ).stdout.trim();
  assert.match(seed, /^[0-9a-f]{64}$/);
  await aw(['party', 'anchor', 'next', '--state', f('chain.json'), '--head', '5a'.repeat(32)], 'party anchor next');
  const submit = await aw(['party', 'submit', '--state', f('chain.json'), '--out', f('final.json')], 'party submit');
  assert.match(submit.stdout, /^FINAL anchor index 0: final: 1 of 1 witnesses \(threshold 1\)\n$/);
  await aw(['verify', 'finalized', f('final.json'), '--witness-set', f('set.json')], 'verify finalized');

  // The witness's answer for the seed, as a relying party fetches it.
  const response = await (await fetch(`${url}/v1/anchor/${seed}`)).text();
  writeFileSync(f('response.json'), response);

  const consumer = join(app, 'consumer.mjs');
  writeFileSync(
    consumer,
    `import { readFileSync } from 'node:fs';
import { verifyAnchorResponse, VerificationError } from 'anchor-witness';
import { parseFinalizedBundle, verifyFinalizedBundle } from 'anchor-witness/client';
import * as pure from 'anchor-witness/verify';

const [responseFile, bundleFile, witnessHex, partyHex] = process.argv.slice(2);
const hex = (h) => Uint8Array.from(Buffer.from(h, 'hex'));
const witness = { publicKey: hex(witnessHex), logOrigin: 'w.pkg.test/anchors' };
const party = { curve: 'ed25519', publicKey: hex(partyHex) };
const body = JSON.parse(readFileSync(responseFile, 'utf8'));
const v = await verifyAnchorResponse(body, witness, party);
const tampered = { ...body, anchor: { ...body.anchor, head: 'a5'.repeat(32) } };
let refused = 'accepted';
try {
  await verifyAnchorResponse(tampered, witness, party);
} catch (e) {
  refused = e instanceof VerificationError ? e.code : 'other: ' + String(e);
}
// An application pins the witness set it configured; this one pins the set the bundle was made with.
const doc = JSON.parse(readFileSync(bundleFile, 'utf8'));
const final = await verifyFinalizedBundle(doc, { party, witnessSet: (await parseFinalizedBundle(doc)).witnessSet });
// The pure verifier (WebCrypto, async) on the same response and its tampered copy.
const p = await pure.verifyAnchorResponse(body, witness, party);
const pureRefused = await pure.verifyAnchorResponse(tampered, witness, party).then(() => 'accepted', (e) => (e instanceof pure.VerificationError ? e.code : 'other: ' + String(e)));
console.log(JSON.stringify({ node: process.versions.node, index: v.anchor.index, leaf: v.leafIndex, size: v.treeSize, tampered: refused, final: final.final, pure: [p.anchor.index, p.leafIndex, p.treeSize], pureTampered: pureRefused }));
`,
  );
  const expectRun = async (nodeBin: string, label: string) => {
    const r = ok(
      await run(nodeBin, [consumer, f('response.json'), f('final.json'), witnessHex, partyHex], {
        cwd: app,
        env: childEnv(dirname(nodeBin)),
      }),
      `consumer.mjs (${label})`,
    );
    const out = JSON.parse(r.stdout) as {
      node: string;
      index: number;
      leaf: number;
      size: number;
      tampered: string;
      final: boolean;
      pure: number[];
      pureTampered: string;
    };
    assert.equal(out.node.split('.')[0], label === 'Node 22' ? '22' : '24');
    assert.deepEqual(
      [out.index, out.leaf, out.size, out.final],
      [0, 0, 1, true],
      'the response verifies: anchor 0, leaf 0 of a 1-entry log; the bundle is final',
    );
    assert.match(out.tampered, /^[a-z_]+$/, `a tampered response is refused with a VerificationError code (${out.tampered})`);
    assert.deepEqual(out.pure, [0, 0, 1], 'anchor-witness/verify verifies the response too');
    assert.equal(out.pureTampered, out.tampered, 'and refuses the tampered copy with the same code');
  };

  // A TypeScript consumer against the shipped declarations (the checkout's tsc and @types/node).
  writeFileSync(
    join(app, 'consumer.ts'),
    `import { verifyAnchorResponse, parseAnchorResponse, type PinnedWitness, type VerifiedReceipt } from 'anchor-witness';
import { parseFinalizedBundle, UsageError, verifyFinalizedBundle, type FinalityResult } from 'anchor-witness/client';
import { freshness, verifyAnchorResponse as verifyPure, type Freshness, type VerificationCode } from 'anchor-witness/verify';

export async function check(body: unknown, bundle: unknown, witness: PinnedWitness, partyKey: Uint8Array): Promise<{ receipt: VerifiedReceipt; final: FinalityResult }> {
  const party = { curve: 'ed25519', publicKey: partyKey } as const;
  const receipt = await verifyAnchorResponse(parseAnchorResponse(body), witness, party);
  const index: number = receipt.anchor.index;
  if (index < 0) throw new UsageError('unreachable');
  const witnessSet = (await parseFinalizedBundle(bundle)).witnessSet;
  return { receipt, final: await verifyFinalizedBundle(bundle, { party, witnessSet }) };
}

export async function checkPure(body: unknown, witness: PinnedWitness, partyKey: Uint8Array): Promise<[VerifiedReceipt, Freshness, VerificationCode]> {
  const receipt = await verifyPure(body, witness, { curve: 'ed25519', publicKey: partyKey });
  return [receipt, freshness(9, 7), 'cosignature_invalid'];
}
`,
  );
  // The same consumer with a wrong argument type must fail: the declarations are checked, not `any`.
  writeFileSync(
    join(app, 'wrong.ts'),
    readFileSync(join(app, 'consumer.ts'), 'utf8').replace(
      'verifyAnchorResponse(parseAnchorResponse(body), witness, party)',
      "verifyAnchorResponse(parseAnchorResponse(body), 'not a pin', party)",
    ),
  );
  const tscRun = (file: string) => {
    const config = `tsconfig.${file}.json`;
    writeFileSync(
      join(app, config),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules', '@types')],
        },
        files: [`${file}.ts`],
      }),
    );
    return run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config], {
      cwd: app,
      env: childEnv(NODE24_DIR),
      timeoutMs: 120_000,
    });
  };
  const [typed, wrong] = await Promise.all([
    tscRun('consumer'),
    tscRun('wrong'),
    expectRun(process.execPath, 'Node 24'),
    expectRun(node22Bin, 'Node 22'),
  ]);
  assert.equal(typed.code, 0, `tsc --noEmit against the shipped declarations:\n${typed.stdout}${typed.stderr}`);
  assert.notEqual(wrong.code, 0);
  assert.match(wrong.stdout, /wrong\.ts\(\d+,\d+\): error TS2345/);

  assert.equal(await witness.stop(), 0, 'the installed witness shuts down cleanly');
  witness = undefined;
});

void test('installed CLI: the KEL source is read by its worker thread started from lib/ (kel init, serve --kel-source dir:)', async () => {
  // The KEL evaluator runs every KEL on a worker started by URL from its sibling module
  // (lib/src/registry/kel-worker.js in the package): a wrong path only shows in an installed copy.
  const { f, cli, aw } = workspace('work-kel');
  await aw(['keygen', '--out', f('witness.pem')], 'keygen');
  const made = JSON.parse((await aw(['kel', 'init', '--dir', f('kels'), '--keys', f('kel-keys')], 'kel init')).stdout) as { id: string };
  writeFileSync(f('registry.json'), JSON.stringify({ parties: [{ id: made.id }] }));
  const w = await spawnServe(
    [
      'serve',
      '--listen',
      '127.0.0.1:0',
      '--data-dir',
      f('data'),
      '--key',
      f('witness.pem'),
      '--name',
      'w.kel.pkg.test',
      '--roles',
      'anchor',
      '--registry',
      f('registry.json'),
      '--kel-source',
      `dir:${f('kels')}`,
      '--kel-poll-seconds',
      '0',
      '--log-level',
      'warn',
    ],
    { entry: cli },
  );
  try {
    // The first reload may still be running when the witness listens.
    let metrics = '';
    for (const until = Date.now() + 15_000; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
      metrics = await (await fetch(`${w.url}/metrics`)).text();
      if (/^registry_kel_parties\{status="accepted"\} 1$/m.test(metrics)) break;
    }
    assert.match(metrics, /^registry_kel_parties\{status="accepted"\} 1$/m, 'the KEL was evaluated and accepted');
    assert.match(metrics, /^registry_kel_worker_restarts_total 0$/m, 'by a worker that did not die');
  } finally {
    assert.equal(await w.stop(), 0, 'the installed witness shuts down cleanly');
  }
});
