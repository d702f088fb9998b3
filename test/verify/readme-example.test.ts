/**
 * README's "Verify in your application" example is run as a test (issue 27 item 5): the code block
 * after the `readme-verify-example` marker is written to a file with its pinned values replaced by
 * a real witness's (test/helpers/verify-fixtures.ts: its hex key, log origin, an Ed25519 party's
 * hex key and the seed, served over loopback as the recorded 200 body) and its import pointed at
 * src/verify/index.ts. It must type-check with the project's compiler options, print the verdict
 * (hex pins accepted: they used to be `wrong_witness` / `party_key_mismatch`), refuse a wrong pin
 * with `usage` and another party's key with `party_key_mismatch`; and README's esbuild line must
 * bundle it into a file with no `node:` import that runs the same way.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { makeVerifyFixtures, type VerifyFixtures } from '../helpers/verify-fixtures.ts';
import { tempDir } from '../helpers/tmp.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The example: the first ```ts block after the marker. */
function exampleBlock(): string {
  const at = readme.indexOf('<!-- readme-verify-example');
  assert.ok(at >= 0, 'README marks its verifier example');
  const m = /```ts\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(m, 'a ts block follows the marker');
  return m[1]!;
}

/** Replace `from` (which must occur exactly once) by `to`. */
function once(text: string, from: string, to: string): string {
  assert.equal(text.split(from).length - 1, 1, `the example has ${from} exactly once`);
  return text.replace(from, () => to);
}

let fx: VerifyFixtures;
let server: Server;
let url = '';
let seed = '';
const tmp = tempDir('aw-readme-example-');

before(async () => {
  fx = await makeVerifyFixtures();
  seed = (JSON.parse(fx.edParty.response) as { anchor: { seed_id: string } }).anchor.seed_id;
  server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === `/v1/anchor/${seed}`) {
      res.writeHead(200, { 'content-type': 'application/json', 'access-control-allow-origin': '*' }).end(fx.edParty.response);
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  writeFileSync(join(tmp.dir, 'package.json'), '{"type":"module"}\n');
});

after(async () => {
  server.closeAllConnections();
  server.close();
  await fx.cleanup();
  tmp.cleanup();
});

/** The example with the test witness's values; `over` changes a pin. */
function example(over: { witnessKey?: string; partyKey?: string } = {}): string {
  let code = exampleBlock();
  code = once(code, "from 'anchor-witness/verify'", `from ${JSON.stringify(join(ROOT, 'src', 'verify', 'index.ts'))}`);
  code = once(code, "'https://w1.example.org'", JSON.stringify(url));
  code = once(code, "'w1.example.org/anchors'", JSON.stringify(fx.witness.logOrigin));
  code = once(
    code,
    "'d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a'",
    JSON.stringify(over.witnessKey ?? fx.witness.publicKeyHex),
  );
  code = once(
    code,
    "'3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c'",
    JSON.stringify(over.partyKey ?? fx.edParty.publicKeyHex),
  );
  code = once(code, "'34bd10b6ba98832e3303b89981018793572ce78a82ff45bc4446772e80ca6012'", JSON.stringify(seed));
  return code;
}

async function runFile(file: string): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, [file], { cwd: tmp.dir });
}

void test('README example: runs as printed against a witness response and prints the verdict (hex pins)', async () => {
  const file = join(tmp.dir, 'verify-anchor.ts');
  writeFileSync(file, example());
  const { stdout, stderr } = await runFile(file);
  assert.equal(stderr.includes('refused'), false, stderr);
  assert.match(stdout, new RegExp(`^anchor \\d+ is entry \\d+ of ${fx.witness.logOrigin.replace(/[.]/g, '\\.')} \\(size \\d+\\)\\n$`));
});

void test('README example: a wrong pin is usage, another party key is party_key_mismatch', async () => {
  const short = join(tmp.dir, 'short-pin.ts');
  writeFileSync(short, example({ witnessKey: fx.witness.publicKeyHex.slice(1) }));
  assert.match((await runFile(short)).stderr, /^refused: usage: the pinned witness publicKey/);
  const other = join(tmp.dir, 'other-party.ts');
  writeFileSync(other, example({ partyKey: fx.witness.publicKeyHex }));
  assert.match((await runFile(other)).stderr, /^refused: party_key_mismatch: /);
});

void test('README example: type-checks under the project compiler options', async () => {
  const file = join(tmp.dir, 'typed.ts');
  writeFileSync(file, example());
  const base = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as { compilerOptions: Record<string, unknown> };
  writeFileSync(
    join(tmp.dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { ...base.compilerOptions, typeRoots: [join(ROOT, 'node_modules', '@types')], noEmit: true },
      files: [file],
    }),
  );
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = await run(process.execPath, [tsc, '-p', join(tmp.dir, 'tsconfig.json')], { cwd: tmp.dir }).catch(
    (e: unknown) => e as { stdout: string; code: number },
  );
  assert.equal((r as { code?: number }).code ?? 0, 0, (r as { stdout: string }).stdout);
});

void test("README's esbuild line bundles the example into one browser module (no node: import) that runs the same", async () => {
  const line = /^npx esbuild .*$/m.exec(readme)?.[0];
  assert.ok(line, 'README has an esbuild line');
  writeFileSync(join(tmp.dir, 'verify-anchor.ts'), example());
  const args = line.split(' ').slice(2);
  await run(join(ROOT, 'node_modules', '.bin', 'esbuild'), args, { cwd: tmp.dir });
  const out = /--outfile=(\S+)/.exec(line)![1]!;
  const bundle = readFileSync(join(tmp.dir, out), 'utf8');
  assert.doesNotMatch(bundle, /["']node:/, 'no node: import in the browser bundle');
  const { stdout } = await runFile(join(tmp.dir, out));
  assert.match(stdout, /^anchor \d+ is entry \d+ of /);
});
