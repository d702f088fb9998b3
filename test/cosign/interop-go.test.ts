// Interop with an independent client: test/cosign/go-client (Go, golang.org/x/mod sumdb/note and
// sumdb/tlog from Debian's golang-go and golang-golang-x-mod-dev) submits checkpoints to the cosign
// role over loopback and verifies every answer with x/mod's note rules and its own cosignature/v1
// verifier. The witness holds an Ed25519 AND an ML-DSA-44 cosign key (SPEC §5.1): x/mod does not
// know type 0x06 and must ignore that line (a line whose name and key ID match no verifier is
// unverified, not an error), so both keys serve old clients. Skipped, saying why, when Go or x/mod
// is not installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { generateMlDsa44 } from '../../src/crypto/ml-dsa.ts';
import { LOG_NAME, SyntheticLog, cosignKeyC, logKeyC, logsDoc, startCosign } from '../helpers/cosign-harness.ts';
import { tempDir } from '../helpers/tmp.ts';

const run = promisify(execFile);
const GOPATH = '/usr/share/gocode';
const SOURCE = join(import.meta.dirname, 'go-client', 'main.go');

async function goMissing(): Promise<string | null> {
  try {
    await run('go', ['version'], { timeout: 10_000 });
  } catch {
    return 'go is not installed (apt-get install golang-go golang-golang-x-mod-dev)';
  }
  if (!existsSync(join(GOPATH, 'src/golang.org/x/mod/sumdb/note')))
    return `golang.org/x/mod is not under ${GOPATH} (apt-get install golang-golang-x-mod-dev)`;
  return null;
}

void test('Go x/mod client against the cosign role', async (t) => {
  const missing = await goMissing();
  if (missing !== null) {
    t.diagnostic(`skipped: ${missing}`);
    t.skip(missing);
    return;
  }
  const { dir, cleanup } = tempDir();
  try {
    const env = { ...process.env, GO111MODULE: 'off', GOPATH, GOFLAGS: '', GOCACHE: join(tmpdir(), 'anchor-witness-gocache') };
    const bin = join(dir, 'go-client');
    await run('go', ['build', '-o', bin, SOURCE], { env, cwd: dir, timeout: 120_000 });
    const log = new SyntheticLog(LOG_NAME, logKeyC);
    const h = await startCosign({
      dir,
      logsDoc: logsDoc({ origin: LOG_NAME, keys: [log.vkey] }),
      cosignKeys: [cosignKeyC, generateMlDsa44().privateKey],
    });
    try {
      const { stdout } = await run(bin, ['-url', h.url, '-witness', h.role.healthInfo().cosignVkeys[0]!], { timeout: 30_000 }).catch(
        (e: unknown) => {
          const err = e as { stdout?: string; stderr?: string; message: string };
          assert.fail(`go client failed: ${err.message}\n${err.stdout ?? ''}${err.stderr ?? ''}`);
        },
      );
      assert.match(stdout, /INTEROP PASSED/);
      assert.doesNotMatch(stdout, /FAIL/);
      t.diagnostic(stdout.trim());
      assert.equal((await h.store.cosign.getOrigin(LOG_NAME))?.size, 7);
      // Every answer the Go client accepted carried the ML-DSA-44 line too.
      const state = await h.store.cosign.getOrigin(LOG_NAME);
      assert.equal(state?.cosignatures.split('\n').filter((l) => l !== '').length, 2);
    } finally {
      await h.close();
    }
  } finally {
    cleanup();
  }
});
