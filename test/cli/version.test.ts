/**
 * `--version` names the build (issue 27 item 13): the version, the source commit and the Node
 * version for both programs, `--version --json` as one JSON object. In a checkout the commit is
 * the work tree's HEAD; a package directory that is not the top level of a git work tree (an
 * installed package inside some other project's repository) says `unknown`.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { checkoutCommit, packageDir, UNKNOWN_COMMIT } from '../../src/release/build-info.ts';
import { VERSION } from '../../src/version.ts';
import { tempDir } from '../helpers/tmp.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);

function gitHead(): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

for (const program of ['anchor-witness', 'token-bridge']) {
  void test(`${program} --version: version, commit and Node; --version --json the same as JSON`, async () => {
    const commit = gitHead() ?? UNKNOWN_COMMIT;
    const bin = join(ROOT, 'bin', `${program}.js`);
    const line = await run(process.execPath, [bin, '--version'], { cwd: ROOT });
    assert.equal(line.stdout, `${program} ${VERSION} (commit ${commit}, Node ${process.version})\n`);
    for (const args of [
      ['--version', '--json'],
      ['--json', '--version'],
    ]) {
      const json = await run(process.execPath, [bin, ...args], { cwd: ROOT });
      assert.deepEqual(JSON.parse(json.stdout), { name: program, version: VERSION, commit, node: process.version });
    }
    const short = await run(process.execPath, [bin, '-V'], { cwd: ROOT });
    assert.equal(short.stdout, line.stdout);
  });
}

void test('the commit: HEAD of a work tree whose top level is the package directory, else unknown', () => {
  assert.equal(packageDir(join(ROOT, 'src', 'release')), ROOT);
  const head = gitHead();
  if (head !== undefined) assert.equal(checkoutCommit(ROOT), head);

  const tmp = tempDir('aw-version-');
  try {
    // No package.json named anchor-witness above a temp dir; no git there either.
    assert.equal(packageDir(tmp.dir), undefined);
    assert.equal(checkoutCommit(tmp.dir), UNKNOWN_COMMIT);
    // A package installed inside another project's git repository is not that repository's commit.
    const git = (args: string[], cwd: string) => execFileSync('git', args, { cwd, stdio: 'ignore' });
    let haveGit = true;
    try {
      git(['init', '-q'], tmp.dir);
      git(['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'x'], tmp.dir);
    } catch {
      haveGit = false;
    }
    if (haveGit) {
      const installed = join(tmp.dir, 'node_modules', 'anchor-witness');
      mkdirSync(installed, { recursive: true });
      writeFileSync(join(installed, 'package.json'), '{"name":"anchor-witness"}\n');
      assert.equal(packageDir(join(installed)), installed);
      assert.equal(checkoutCommit(installed), UNKNOWN_COMMIT);
      assert.match(checkoutCommit(tmp.dir), /^[0-9a-f]{40}$/, 'the repository itself does have a commit');
    }
  } finally {
    tmp.cleanup();
  }
});
