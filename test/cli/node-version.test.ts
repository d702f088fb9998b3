/**
 * The entry files check the Node version before anything else loads (issue 27 item 1): on Node 20
 * a checkout's `node bin/anchor-witness.js` used to end in ERR_UNKNOWN_FILE_EXTENSION ".ts" with a
 * stack, and the installed package's `serve` in a segmentation fault from the native SQLite addon.
 * Now: one line naming the Node needed, exit 1. The rule itself (bin/node-check.js) is checked
 * with made-up versions; the entries are run under a real old Node when the machine has one.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { oldNode } from '../helpers/old-node.ts';

// bin/node-check.js is plain JavaScript without declarations (the checkout's tsconfig has no allowJs).
type NodeProblem = (program: string, versions: { node: string }, features: object | undefined, checkout: boolean) => string | undefined;
const NODE_CHECK = '../../bin/node-check.js';
const { nodeProblem } = (await import(NODE_CHECK)) as { nodeProblem: NodeProblem };

const ROOT = join(import.meta.dirname, '..', '..');

function run(bin: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(bin, args, { cwd: ROOT, timeout: 60_000, encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : null, stdout, stderr });
    });
  });
}

void test('nodeProblem: Node < 22 is refused; a checkout also needs type stripping; Node 22 and 24 pass', () => {
  const ts = { typescript: 'strip' };
  assert.match(
    nodeProblem('anchor-witness', { node: '20.20.2' }, {}, true) ?? '',
    /^anchor-witness needs Node >= 22 \(ML-DSA-44 needs >= 24\.6; .*this is Node v20\.20\.2; in a checkout run node_modules\/\.bin\/node bin\/anchor-witness\.js$/,
  );
  assert.match(
    nodeProblem('token-bridge', { node: '18.0.0' }, undefined, false) ?? '',
    /^token-bridge needs Node >= 22 \(ML-DSA-44 needs >= 24\.6\), this is Node v18\.0\.0; install Node 22 or later$/,
  );
  // Node 22.12 runs the compiled package but not a checkout's .ts sources (no type stripping by default).
  assert.equal(nodeProblem('anchor-witness', { node: '22.12.0' }, { typescript: false }, false), undefined);
  assert.match(nodeProblem('anchor-witness', { node: '22.12.0' }, { typescript: false }, true) ?? '', /TypeScript sources >= 22\.18/);
  assert.equal(nodeProblem('anchor-witness', { node: '22.18.0' }, ts, true), undefined);
  assert.equal(nodeProblem('anchor-witness', { node: '24.21.0' }, ts, true), undefined);
  assert.equal(nodeProblem('anchor-witness', process.versions, process.features, true), undefined, "the test runner's Node passes");
});

const old = oldNode();
for (const program of ['anchor-witness', 'token-bridge']) {
  void test(
    `${program}: bin/${program}.js under an old Node says which Node it needs in one line and exits 1`,
    { skip: old === undefined ? 'no Node older than 22 on this machine (PATH, /usr/local/bin, /usr/bin)' : false },
    async () => {
      for (const args of [['--help'], ['serve', '--listen', '127.0.0.1:0']]) {
        const r = await run(old!.bin, [join(ROOT, 'bin', `${program}.js`), ...args]);
        assert.equal(r.code, 1, `${old!.bin} (${old!.version}) ${args.join(' ')}: ${r.stderr}`);
        assert.equal(r.stdout, '');
        assert.equal(
          r.stderr,
          `${program} needs Node >= 22 (ML-DSA-44 needs >= 24.6; a checkout's TypeScript sources >= 22.18), this is Node ${old!.version}; in a checkout run node_modules/.bin/node bin/${program}.js\n`,
        );
      }
    },
  );
}
