// Key and secret hygiene: key files are written 0600 and refused when group- or world-accessible
// (witness, cosign, bridge signing keys, TLS key); no private key material — PEM, DER, raw seed in
// hex/base64/base64url, JWK private members — and no issued bearer token ever appears in what the
// servers print (stdout and stderr of real runs at the most verbose level, through valid and
// invalid requests, a bad reload, a refused start and a shutdown); the bridge's nonce store and the
// per-client rate-limit buckets are bounded in memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createPrivateKey } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pino } from 'pino';
import { buildDidKeyChain, buildTokenRequest, hexKey } from '../../src/bridge/client.ts';
import { startBridge } from '../../src/bridge/node.ts';
import { MemoryNonceStore } from '../../src/bridge/nonces.ts';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem } from '../../src/crypto/ed25519.ts';
import { encodeBase64, encodeBase64url } from '../../src/encoding/base64.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { KeyFileError } from '../../src/keys/errors.ts';
import { readKeyFile } from '../../src/keys/keyfile.ts';
import { TokenBuckets } from '../../src/server/rate-limit.ts';
import { fill } from '../helpers/anchors.ts';
import { codeOf, figures, httpRequest, REPO, sleep, toJson } from '../helpers/rel-common.ts';
import { Lane, makeDeployment, serveArgs, startServe, startTestNode } from '../helpers/rel-node.ts';
import { tempDir } from '../helpers/tmp.ts';

const BAD_MODES = [0o640, 0o604, 0o644, 0o660, 0o620, 0o602, 0o606, 0o666, 0o610, 0o601, 0o777];

/** Every printable form of a private key we know how to derive from its PEM. */
function secretForms(pem: string, seed?: Uint8Array): string[] {
  const forms = new Set<string>();
  const body = pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '');
  forms.add(body);
  for (const line of pem.split('\n')) if (line.length >= 40 && !line.startsWith('-----')) forms.add(line.trim());
  const der = Buffer.from(body, 'base64');
  forms.add(der.toString('hex'));
  forms.add(encodeBase64url(der));
  const jwk = createPrivateKey(pem).export({ format: 'jwk' }) as Record<string, unknown>;
  for (const k of ['d', 'p', 'q', 'dp', 'dq', 'qi']) if (typeof jwk[k] === 'string') forms.add(jwk[k]);
  if (seed !== undefined) {
    forms.add(encodeHex(seed));
    forms.add(encodeHex(seed).toUpperCase());
    forms.add(encodeBase64(seed));
    forms.add(encodeBase64url(seed));
  }
  return [...forms].filter((f) => f.length >= 16);
}

function leaks(output: string, forms: readonly string[]): string[] {
  return forms.filter((f) => output.includes(f)).map((f) => f.slice(0, 12) + '…');
}

void test(
  'key files: written 0600, refused when group- or world-accessible (witness, cosign, keygen, bridge key dir, TLS key)',
  { timeout: 120_000 },
  async (t) => {
    const { dir, cleanup } = tempDir('aw-rel-keys-');
    try {
      // keygen: 0600, never overwrites
      const out = join(dir, 'k.pem');
      const kg = spawnSync(process.execPath, [join(REPO, 'bin', 'anchor-witness.js'), 'keygen', '--out', out], { encoding: 'utf8' });
      assert.equal(kg.status, 0, kg.stderr);
      assert.match(kg.stdout, /^[0-9a-f]{64}\n$/);
      assert.equal(statSync(out).mode & 0o777, 0o600);
      const again = spawnSync(process.execPath, [join(REPO, 'bin', 'anchor-witness.js'), 'keygen', '--out', out], { encoding: 'utf8' });
      assert.notEqual(again.status, 0);
      assert.match(again.stderr, /already exists/);

      // readKeyFile refuses every mode with a group or other bit
      for (const mode of BAD_MODES) {
        chmodSync(out, mode);
        assert.throws(
          () => readKeyFile(out),
          (e: unknown) => e instanceof KeyFileError && e.code === 'key_permissions',
          `mode ${mode.toString(8)} accepted`,
        );
      }
      chmodSync(out, 0o600);
      assert.ok(readKeyFile(out).startsWith('-----BEGIN PRIVATE KEY-----'));
      chmodSync(out, 0o400);
      assert.ok(readKeyFile(out).startsWith('-----BEGIN PRIVATE KEY-----'));

      // the node refuses a witness or cosign key readable by others, before opening anything
      const d = makeDeployment(dir);
      for (const which of ['keyFile', 'cosignKeyFile'] as const) {
        chmodSync(d[which], 0o644);
        await assert.rejects(startTestNode(d), (e: unknown) => (e as { code?: string }).code === 'key_permissions');
        chmodSync(d[which], 0o600);
      }
      // … and so does the command line, with a message that says what to do, before listening
      chmodSync(d.keyFile, 0o640);
      const serve = spawnSync(process.execPath, [join(REPO, 'bin', 'anchor-witness.js'), ...serveArgs(d)], {
        encoding: 'utf8',
        timeout: 20_000,
      });
      assert.equal(serve.status, 1);
      assert.equal(serve.stdout, '');
      assert.match(serve.stderr, /chmod 600/);
      chmodSync(d.keyFile, 0o600);

      // bridge: keys rotate writes 0600 files in a 0700 directory; serve refuses a readable key
      const keyDir = join(dir, 'bridge-keys');
      const rot = spawnSync(
        process.execPath,
        [join(REPO, 'bin', 'token-bridge.js'), 'keys', 'rotate', '--key-dir', keyDir, '--alg', 'ES256'],
        { encoding: 'utf8' },
      );
      assert.equal(rot.status, 0, rot.stderr);
      assert.equal(statSync(keyDir).mode & 0o777, 0o700);
      const pems = readdirSync(keyDir).filter((f) => f.endsWith('.pem'));
      assert.equal(pems.length, 1);
      assert.equal(statSync(join(keyDir, pems[0]!)).mode & 0o777, 0o600);
      chmodSync(join(keyDir, pems[0]!), 0o644);
      await assert.rejects(
        startBridge({ host: '127.0.0.1', port: 0, keyDir, issuer: 'https://bridge.example' }, pino({ level: 'silent' })),
        /accessible by group or others|chmod 600/,
      );
      chmodSync(join(keyDir, pems[0]!), 0o600);
      // TLS key under the same rule
      const tlsKey = join(dir, 'tls.pem');
      writeFileSync(tlsKey, ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(3))), { mode: 0o644 });
      chmodSync(tlsKey, 0o644);
      writeFileSync(join(dir, 'cert.pem'), '-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n');
      await assert.rejects(
        startBridge(
          { host: '127.0.0.1', port: 0, keyDir, issuer: 'https://bridge.example', tlsCertFile: join(dir, 'cert.pem'), tlsKeyFile: tlsKey },
          pino({ level: 'silent' }),
        ),
        /accessible by group or others/,
      );
      figures(t, 'secrets/key-files', {
        modes_refused: BAD_MODES.map((m) => m.toString(8)),
        keygen_mode: '600',
        bridge_key_dir_mode: '700',
        bridge_key_mode: '600',
      });
    } finally {
      cleanup();
    }
  },
);

void test(
  'keys never logged: witness at --log-level debug and the bridge, through valid, invalid and failing operations',
  { timeout: 120_000 },
  async (t) => {
    const { dir, cleanup } = tempDir('aw-rel-leak-');
    try {
      const d = makeDeployment(dir);
      const witnessForms = [
        ...secretForms(readFileSync(d.keyFile, 'utf8'), d.witnessSeed),
        ...secretForms(readFileSync(d.cosignKeyFile, 'utf8'), d.cosignSeed),
      ];
      const w = await startServe(serveArgs(d, ['--log-level', 'debug']));
      let outText = '';
      w.child.stdout!.on('data', (c: Buffer) => (outText += c.toString()));
      const lane = new Lane(d.party, 'leak');
      const post = (body: string, path = '/v1/anchor') =>
        httpRequest(w.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      for (let i = 0; i < 5; i++) {
        assert.equal((await post(lane.body())).status, 200);
        lane.next++;
      }
      await post(lane.body(lane.next - 1)); // replay
      const fork = JSON.parse(lane.body(lane.next - 1)) as { anchor: { head: string } };
      fork.anchor.head = 'ab'.repeat(32);
      await post(toJson(fork)); // bad signature (the head is signed)
      await post('{"anchor":');
      await post('x'.repeat(70_000));
      await post(d.logs[0]!.request(0, 3), '/add-checkpoint');
      await post(d.logs[0]!.request(0, 3).replace(/— \S+ /, '— nobody '), '/add-checkpoint');
      for (const p of ['/', '/health', '/metrics', '/log/checkpoint', '/log/tile/0/000.p/5', '/nope', '/v1/anchor/zz'])
        await httpRequest(w.url + p);
      // a bad registry reload (logged as an error), then a good one
      writeFileSync(join(dir, 'bad.json'), '{"parties": 1}');
      renameSync(join(dir, 'bad.json'), d.registryFile);
      w.child.kill('SIGHUP');
      await sleep(300);
      await w.stop();
      const witnessOutput = outText + w.stderr();
      assert.match(witnessOutput, /registry reload failed|reload/i);
      // a refused start prints its reason, not the key
      chmodSync(d.cosignKeyFile, 0o644);
      const refused = spawnSync(process.execPath, [join(REPO, 'bin', 'anchor-witness.js'), ...serveArgs(d)], {
        encoding: 'utf8',
        timeout: 20_000,
      });
      chmodSync(d.cosignKeyFile, 0o600);
      const allWitness = witnessOutput + refused.stdout + refused.stderr;
      assert.deepEqual(leaks(allWitness, witnessForms), [], 'witness or cosign key material in the output');

      // bridge: the real command line, a token issued and refused; the key and the tokens never printed
      const keyDir = join(dir, 'bkeys');
      const rot = spawnSync(
        process.execPath,
        [join(REPO, 'bin', 'token-bridge.js'), 'keys', 'rotate', '--key-dir', keyDir, '--alg', 'ES256'],
        { encoding: 'utf8' },
      );
      assert.equal(rot.status, 0, rot.stderr);
      const bridgeForms = readdirSync(keyDir)
        .filter((f) => f.endsWith('.pem'))
        .flatMap((f) => secretForms(readFileSync(join(keyDir, f), 'utf8')));
      const child = spawn(
        process.execPath,
        [join(REPO, 'bin', 'token-bridge.js'), 'serve', '--listen', '127.0.0.1:0', '--key-dir', keyDir, '--dev', '--rate-limit', '0'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let bErr = '';
      let bOut = '';
      child.stderr.on('data', (c: Buffer) => (bErr += c.toString()));
      const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once('line', (line) => {
          bOut += line + '\n';
          const m = /^listening on (\S+)$/.exec(line);
          if (m === null) reject(new Error(line));
          else resolve(m[1]!);
        });
        child.once('exit', (c) => {
          reject(new Error(`token-bridge exited ${c}: ${bErr}`));
        });
      });
      child.stdout.on('data', (c: Buffer) => (bOut += c.toString()));
      const root = ed25519KeyFromSeed(fill(0x51));
      const dev = ed25519KeyFromSeed(fill(0x52));
      const now = Math.floor(Date.now() / 1000);
      const chain = buildDidKeyChain(root, [
        { deviceKey: dev, capabilities: ['deploy:staging'], expiresAt: now + 3600, timestamp: now - 60 },
      ]);
      const tokens: string[] = [];
      for (let i = 0; i < 3; i++) {
        const a = await httpRequest(`${url}/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(
            buildTokenRequest({ chain, rootPublicKey: hexKey(root), audience: 'sts.amazonaws.com', issuer: url, deviceKey: dev }),
          ),
        });
        assert.equal(a.status, 200, a.text);
        tokens.push((JSON.parse(a.text) as { access_token: string }).access_token);
      }
      const replay = buildTokenRequest({
        chain,
        rootPublicKey: hexKey(root),
        audience: 'sts.amazonaws.com',
        issuer: url,
        deviceKey: dev,
        nonce: 'same-nonce-0123456789',
      });
      await httpRequest(`${url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(replay) });
      const r2 = await httpRequest(`${url}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(replay),
      });
      assert.equal(codeOf(r2), 'pop_replayed');
      child.kill('SIGHUP');
      await sleep(200);
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      const bridgeOutput = bOut + bErr;
      assert.deepEqual(leaks(bridgeOutput, bridgeForms), [], 'bridge signing key material in the output');
      assert.deepEqual(
        leaks(
          bridgeOutput,
          tokens.flatMap((tk) => [tk, tk.split('.')[2]!]),
        ),
        [],
        'an issued token (bearer credential) in the output',
      );
      figures(t, 'secrets/logs', {
        witness_output_bytes: allWitness.length,
        bridge_output_bytes: bridgeOutput.length,
        secret_forms_searched: witnessForms.length + bridgeForms.length + tokens.length * 2,
        leaks: 0,
      });
    } finally {
      cleanup();
    }
  },
);

void test('bridge nonces and rate-limit buckets are bounded in memory', { timeout: 120_000 }, async (t) => {
  const { dir, cleanup } = tempDir('aw-rel-bounds-');
  const CAP = 40;
  const bridge = await startBridge(
    { host: '127.0.0.1', port: 0, dev: true, keyDir: join(dir, 'keys'), rateLimit: null, alg: 'ES256', nonceCapacity: CAP },
    pino({ level: 'silent' }),
  );
  try {
    const root = ed25519KeyFromSeed(fill(0x53));
    const dev = ed25519KeyFromSeed(fill(0x54));
    const now = Math.floor(Date.now() / 1000);
    const chain = buildDidKeyChain(root, [
      { deviceKey: dev, capabilities: ['deploy:staging'], expiresAt: now + 3600, timestamp: now - 60 },
    ]);
    const answers: Record<string, number> = {};
    let retryAfter: unknown;
    for (let i = 0; i < CAP + 20; i++) {
      const a = await httpRequest(`${bridge.url}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(
          buildTokenRequest({
            chain,
            rootPublicKey: hexKey(root),
            audience: 'sts.amazonaws.com',
            issuer: bridge.issuer.issuer,
            deviceKey: dev,
          }),
        ),
      });
      const k = a.status === 200 ? '200' : `${a.status} ${codeOf(a)}`;
      answers[k] = (answers[k] ?? 0) + 1;
      if (a.status === 503) retryAfter = a.headers['retry-after'];
      assert.ok(bridge.service.nonces.size <= CAP);
    }
    assert.deepEqual(answers, { 200: CAP, '503 overloaded': 20 });
    assert.equal(retryAfter, '1');
    // never evicted early; freed once the 121 s are over (fake clock; iat 0 = the use second)
    const store = new MemoryNonceStore(1000);
    for (let i = 0; i < 1000; i++) assert.equal(store.consumeNow(`k${i}`, 0, 1_000 + i), 'ok');
    assert.equal(store.consumeNow('late', 100, 100_000), 'full');
    assert.equal(store.consumeNow('k0', 100, 100_000), 'replayed');
    assert.equal(store.consumeNow('late', 122, 122_000), 'ok');
    assert.ok(store.size <= 1000);
    for (let i = 0; i < 200_000; i++) store.consumeNow(`s${i}`, Math.floor((200_000 + i * 10) / 1000), 200_000 + i * 10);
    assert.ok(store.size <= 1000, `nonce store grew to ${store.size}`);

    // rate-limit buckets: 200 000 distinct clients, capacity 1 000
    const buckets = new TokenBuckets(
      { rps: 1, burst: 2 },
      {
        maxClients: 1_000,
        now: (() => {
          let t = 0;
          return () => (t += 0.01);
        })(),
      },
    );
    const heap0 = process.memoryUsage().heapUsed;
    let maxSize = 0;
    for (let i = 0; i < 200_000; i++) {
      buckets.take(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
      if (buckets.size > maxSize) maxSize = buckets.size;
    }
    const heapGrowthMiB = (process.memoryUsage().heapUsed - heap0) / 2 ** 20;
    assert.ok(maxSize <= 1_000, `rate-limit buckets grew to ${maxSize}`);
    figures(t, 'secrets/bounds', {
      nonce_capacity: CAP,
      token_answers: answers,
      nonce_store_after_200k_inserts: store.size,
      rate_limit_clients_tried: 200_000,
      rate_limit_buckets_max: maxSize,
      heap_growth_mib: Math.round(heapGrowthMiB * 10) / 10,
    });
  } finally {
    await bridge.close();
    cleanup();
  }
});
