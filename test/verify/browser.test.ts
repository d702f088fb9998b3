// The verifier SDK in a real browser (issue 18): `anchor-witness/verify` bundled by esbuild into one
// ESM file (its size, and gzipped, is reported), served with the shared scenario
// (test/verify/scenario.ts) and real witness output by a loopback test server, and run in headless
// Chromium (playwright-core + Debian's chromium, the launcher of the page tests) with every request
// to another origin aborted: the anchor responses (Ed25519 and P-256 parties) and the duplicity
// proof verify with WebCrypto, and each tampered copy (one flipped byte, a small-order key) is
// refused with its code. Without /usr/bin/chromium the test reports itself skipped (CI=true: fails).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { chromiumStatus, launchBrowser, watchedPage, type Browser } from '../helpers/pages-browser.ts';
import { makeVerifyFixtures, type VerifyFixtures } from '../helpers/verify-fixtures.ts';
import type { Outcome } from './scenario.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const status = chromiumStatus();
if (status.kind === 'skip') process.stderr.write(`# ${status.message}\n`);
if (status.kind === 'fail') {
  void test('Chromium is installed for the browser tests', () => {
    assert.fail(status.message);
  });
}

const PAGE = `<!doctype html><meta charset="utf-8"><title>verify</title>
<script type="module">
import * as verify from './verify.mjs';
import { runScenario } from './scenario.mjs';
const input = await (await fetch('./fixtures.json')).json();
window.__outcomes = await runScenario(verify, input).catch((e) => [{ name: 'scenario', got: 'threw: ' + e, want: 'ok' }]);
</script>`;

async function bundle(entry: string, minify: boolean): Promise<string> {
  const r = await build({
    entryPoints: [join(ROOT, entry)],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify,
    logLevel: 'silent',
  });
  return r.outputFiles[0]!.text;
}

let fx: VerifyFixtures | undefined;
let server: Server | undefined;
let browser: Browser | undefined;
let origin = '';
let verifierSize = { bytes: 0, gzip: 0 };

before(async () => {
  if (status.kind !== 'ok') return;
  fx = await makeVerifyFixtures();
  const verifier = await bundle('src/verify/index.ts', true);
  verifierSize = { bytes: Buffer.byteLength(verifier), gzip: gzipSync(verifier, { level: 9 }).length };
  const files: Record<string, [string, string]> = {
    '/': ['text/html; charset=utf-8', PAGE],
    '/verify.mjs': ['text/javascript', verifier],
    '/scenario.mjs': ['text/javascript', await bundle('test/verify/scenario.ts', false)],
    '/fixtures.json': [
      'application/json',
      JSON.stringify({
        witness: fx.witness,
        edParty: fx.edParty,
        p256Party: fx.p256Party,
        bundle: fx.bundle,
        said: fx.said,
        checkpoint: fx.checkpoint,
      }),
    ],
  };
  server = createServer((req, res) => {
    const f = files[req.url ?? ''];
    if (f === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': f[0], 'cache-control': 'no-store' }).end(f[1]);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  origin = `http://127.0.0.1:${typeof addr === 'object' && addr !== null ? addr.port : 0}`;
  browser = launchBrowser();
});

after(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => {
    if (server === undefined) resolve();
    else
      server.close(() => {
        resolve();
      });
  });
  await fx?.cleanup();
});

void test(
  'the bundled verifier verifies real witness output in Chromium and refuses tampered copies',
  { skip: status.kind === 'ok' ? false : status.message },
  async (t) => {
    t.diagnostic(
      `browser verifier (src/verify/index.ts, esbuild --minify, one ESM file): ${verifierSize.bytes} bytes, ${verifierSize.gzip} bytes gzip -9`,
    );
    const context = await browser!.context();
    const w = await watchedPage(context, origin);
    await w.page.goto(`${origin}/`);
    await w.page.waitForFunction('Array.isArray(window.__outcomes)', undefined, { timeout: 30_000 });
    const outcomes = await w.page.evaluate<Outcome[]>('window.__outcomes');
    assert.ok(outcomes.length > 25, `${outcomes.length} checks ran`);
    for (const o of outcomes) assert.equal(o.got, o.want, o.name);
    t.diagnostic(
      `${outcomes.length} checks in the page, e.g. ${outcomes
        .filter((o) => o.want !== 'ok')
        .slice(0, 3)
        .map((o) => `${o.name} → ${o.got}`)
        .join('; ')}`,
    );
    const isSecure = await w.page.evaluate('window.isSecureContext && typeof crypto.subtle');
    assert.equal(isSecure, 'object');
    assert.deepEqual(w.foreign, [], 'no request left the test server');
    assert.deepEqual(w.errors, [], 'no console error');
    assert.deepEqual(w.requests.map((u) => new URL(u).pathname).sort(), ['/', '/fixtures.json', '/scenario.mjs', '/verify.mjs']);
    assert.ok(verifierSize.bytes > 0 && verifierSize.bytes < 150_000, `verifier bundle is ${verifierSize.bytes} bytes`);
  },
);
