// Interop with an independent bastion: test/bastion/go-bastion (Go standard library only:
// crypto/tls TLS 1.3 with RequireAnyClientCert and ALPN bastion/0, net/http's HTTP/2 client on the
// accepted connection, as torchwood's litebastion does) accepts the node's client certificate,
// computes the same key hash, and gets the cosign answers over HTTP/2. Skipped, saying why, when
// Go is not installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { startBastionBackends } from '../../src/bastion/backends.ts';
import { bastionKeyHash } from '../../src/crypto/bastion-certificate.ts';
import { ed25519KeyFromSeed } from '../../src/crypto/ed25519.ts';
import { sha256Hex } from '../../src/crypto/sha256.ts';
import { LOG_NAME, SyntheticLog, logKeyC, logsDoc, startCosign } from '../helpers/cosign-harness.ts';
import { fill } from '../helpers/anchors.ts';
import { tempDir } from '../helpers/tmp.ts';

const run = promisify(execFile);
const SOURCE = join(import.meta.dirname, 'go-bastion', 'main.go');

void test('a Go crypto/tls + net/http HTTP/2 bastion accepts the backend and gets the cosign answers', async (t) => {
  try {
    await run('go', ['version'], { timeout: 10_000 });
  } catch {
    t.skip('go is not installed (apt-get install golang-go)');
    return;
  }
  const { dir, cleanup } = tempDir();
  try {
    const env = { ...process.env, GO111MODULE: 'off', GOFLAGS: '', GOCACHE: join(tmpdir(), 'anchor-witness-gocache') };
    const bin = join(dir, 'go-bastion');
    await run('go', ['build', '-o', bin, SOURCE], { env, cwd: dir, timeout: 120_000 });
    const log = new SyntheticLog(LOG_NAME, logKeyC);
    const h = await startCosign({ dir, logsDoc: logsDoc({ origin: LOG_NAME, keys: [log.vkey] }) });
    const body = join(dir, 'request.txt');
    writeFileSync(body, log.request(0, 4));
    const big = join(dir, 'big.txt');
    writeFileSync(big, 'x'.repeat(200_000));
    const caFile = join(dir, 'ca.pem');
    const monitoring = `/${sha256Hex(LOG_NAME)}/checkpoint`;
    const child = spawn(
      bin,
      [
        '-cert-out',
        caFile,
        '-xff',
        '192.0.2.7',
        `POST:/add-checkpoint:${body}`,
        `POST:/add-checkpoint:${body}`,
        `GET:${monitoring}`,
        'GET:/metrics',
        `POST:/add-checkpoint:${big}`,
        'GET:/health',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const lines: string[] = [];
    const rl = createInterface({ input: child.stdout });
    const key = ed25519KeyFromSeed(fill(0x55));
    let backends: ReturnType<typeof startBastionBackends> | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(new Error(`go bastion: ${lines.join('\n')}`));
        }, 30_000);
        rl.on('line', (l) => {
          lines.push(l);
          const m = /^listening (\S+)$/.exec(l);
          if (m !== null)
            backends = startBastionBackends({
              key: { key, keyHash: bastionKeyHash(key) },
              addresses: [m[1]!],
              ca: readFileSync(caFile, 'utf8'),
              app: h.app,
              registry: h.registry,
            });
          if (l === 'DONE' || l.startsWith('FAIL')) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      t.diagnostic(lines.join('\n'));
      assert.ok(lines.includes(`backend ${bastionKeyHash(key)}`), 'the Go bastion computes the same key hash');
      const answers = lines.filter((l) => l.startsWith('answer '));
      assert.equal(answers.length, 6, lines.join('\n'));
      assert.match(answers[0]!, /^answer POST \/add-checkpoint 200 HTTP\/2\.0 "— witness\.example\/w1 [A-Za-z0-9+/=]+\\n"$/);
      assert.equal(answers[1], 'answer POST /add-checkpoint 409 HTTP/2.0 "4\\n"');
      assert.match(answers[2]!, /^answer GET \/[0-9a-f]{64}\/checkpoint 200 HTTP\/2\.0 "example\.com\/log\\n4\\n/);
      assert.match(answers[3]!, /^answer GET \/metrics 404 HTTP\/2\.0 /);
      // Over the body cap: 413 while the bastion is still sending; the connection serves on.
      assert.match(answers[4]!, /^answer POST \/add-checkpoint 413 HTTP\/2\.0 .*body_too_large/);
      assert.match(answers[5]!, /^answer GET \/health 404 HTTP\/2\.0 /); // the harness has no \/health route
      const m = await h.registry.metrics();
      assert.match(m, /http_requests_total\{route="\/add-checkpoint",method="POST",status="200",via="bastion"\} 1/);
    } finally {
      child.kill();
      await backends?.close();
      await h.close();
    }
  } finally {
    cleanup();
  }
});
