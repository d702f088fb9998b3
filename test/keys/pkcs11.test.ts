// SPEC §1.3 (PKCS#11) with Debian's SoftHSM2 and opensc pkcs11-tool: an Ed25519 witness key and a
// P-256 (ES256) key made on a token by pkcs11-tool.
//   - a witness whose --key is the token's Ed25519 key: its checkpoints verify with Go x/mod note;
//   - ES256 signatures from the token are low-S and verify as JWTs with npm jose through a JWKS
//     built from the token's public key;
//   - 4 sessions × 1 000 concurrent signatures: no crash, every signature verifies;
//   - the token removed (its SoftHSM2 directory renamed) → 503 signer_unavailable, /ready 503;
//     restored → recovered within 15 s;
//   - pin-value and a group-writable module are refused; pkcs11js missing → pkcs11_unavailable.
// Skipped (reported) when softhsm2/opensc/Go are missing or pkcs11js did not build, except under CI=true.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, chmodSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { createLocalJWKSet, jwtVerify, type JWK } from 'jose';
import { verifyEd25519 } from '../../src/crypto/ed25519.ts';
import { P256_HALF_N, bigIntFromBytes, decompressP256 } from '../../src/crypto/p256-strict.ts';
import { encodeBase64url } from '../../src/encoding/base64.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { KeyRefError } from '../../src/keys/errors.ts';
import { openSigner } from '../../src/keys/open-signer.ts';
import { setPkcs11LoaderForTests } from '../../src/keys/pkcs11-module.ts';
import { SIG_TYPE_ED25519 } from '../../src/note/signed-note.ts';
import { formatVkey } from '../../src/note/vkey.ts';
import { fill } from '../helpers/anchors.ts';
import {
  buildGo,
  goMissing,
  pkcs11Ref,
  requireTool,
  run,
  pkcs11Missing,
  softhsmToken,
  tokenKey,
  SOFTHSM_MODULE,
} from '../helpers/external-keys.ts';
import { waitFor } from '../helpers/poll.ts';
import { keyTestParty } from '../helpers/key-party.ts';
import { tempDir } from '../helpers/tmp.ts';
import { post, startTestWitness, WITNESS_ORIGIN } from '../helpers/witness.ts';

const { registry, submission } = keyTestParty(0x0a);

void test(
  'PKCS#11 (SoftHSM2): witness checkpoints verify with Go, ES256 with jose, load, token removal',
  { timeout: 300_000 },
  async (t) => {
    if (!requireTool(t, await pkcs11Missing())) return;
    if (!requireTool(t, await goMissing())) return;
    const { dir, cleanup } = tempDir('aw-p11-');
    try {
      const tok = await softhsmToken(dir, 'aw-test');
      // SoftHSM2 reads SOFTHSM2_CONF at C_Initialize; the module is loaded once per process.
      process.env.SOFTHSM2_CONF = tok.conf;
      await tokenKey(tok, 'EC:edwards25519', 'witness', '01');
      await tokenKey(tok, 'EC:prime256v1', 'bridge', '02');

      // ES256: low S, verified by jose through a JWKS of the token's public key.
      const es = await openSigner(pkcs11Ref(tok, 'bridge'), { algorithm: 'p256', key: 'bridge:test', startTimeoutMs: 5_000 });
      try {
        const point = decompressP256(es.publicKey)!;
        const jwk: JWK = {
          kty: 'EC',
          crv: 'P-256',
          x: encodeBase64url(point.subarray(1, 33)),
          y: encodeBase64url(point.subarray(33, 65)),
          kid: 'k1',
          alg: 'ES256',
        };
        for (let i = 0; i < 20; i++) {
          const header = encodeBase64url(new TextEncoder().encode(JSON.stringify({ alg: 'ES256', kid: 'k1', typ: 'JWT' })));
          const payload = encodeBase64url(new TextEncoder().encode(JSON.stringify({ sub: `s${i}`, iat: 1_700_000_000 })));
          const sig = await es.sign(new TextEncoder().encode(`${header}.${payload}`));
          assert.ok(bigIntFromBytes(sig, 32, 64) <= P256_HALF_N, 'low S');
          const { payload: p } = await jwtVerify(`${header}.${payload}.${encodeBase64url(sig)}`, createLocalJWKSet({ keys: [jwk] }));
          assert.equal(p.sub, `s${i}`);
        }
      } finally {
        await es.close();
      }

      // 4 sessions × 1 000 concurrent signatures.
      const ed = await openSigner(pkcs11Ref(tok, 'witness'), {
        algorithm: 'ed25519',
        key: 'load',
        startTimeoutMs: 5_000,
        maxPending: 4_000,
        timeoutMs: 60_000,
        pkcs11Sessions: 4,
      });
      try {
        const msgs = Array.from({ length: 4_000 }, (_, i) => new TextEncoder().encode(`message ${i}`));
        const started = performance.now();
        const sigs = await Promise.all(msgs.map((m) => ed.sign(m)));
        t.diagnostic(
          `4 000 concurrent Ed25519 signatures over 4 sessions: ${Math.round(4_000 / ((performance.now() - started) / 1000))}/s`,
        );
        sigs.forEach((s, i) => {
          assert.ok(verifyEd25519(ed.publicKey, msgs[i]!, s));
        });
      } finally {
        await ed.close();
      }

      // A witness whose --key is on the token.
      const w = await startTestWitness(dir, registry, { keyFile: pkcs11Ref(tok, 'witness'), signers: { startTimeoutMs: 5_000 } });
      try {
        assert.equal((await post(`${w.url}/v1/anchor`, submission('p11-1'))).status, 200);
        const verifier = await buildGo(join(import.meta.dirname, 'go-note', 'main.go'), dir);
        const vkey = formatVkey(WITNESS_ORIGIN, SIG_TYPE_ED25519, w.witnessPublicKey);
        assert.match((await run(verifier, ['-url', `${w.url}/log/checkpoint`, '-vkeys', vkey])).stdout, /NOTE PASSED 1 signatures/);

        // Token removed: rename the token directory.
        const moved = `${tok.tokenDir}.away`;
        renameSync(tok.tokenDir, moved);
        let status = 0;
        await waitFor(
          '503 while the token is away',
          async () => {
            const r = await post(`${w.url}/v1/anchor`, submission(`p11-away-${Date.now()}`));
            status = r.status;
            if (r.status === 503) assert.equal((r.body as { code: string }).code, 'signer_unavailable');
            return r.status === 503;
          },
          10_000,
        );
        assert.equal(status, 503);
        assert.equal((await fetch(`${w.url}/ready`)).status, 503);
        const health = (await (await fetch(`${w.url}/health`)).json()) as { status: string; signers: { last_error: string }[] };
        assert.equal(health.status, 'degraded');
        t.diagnostic(`last_error while removed: ${health.signers[0]!.last_error}`);
        renameSync(moved, tok.tokenDir);
        const t0 = Date.now();
        await waitFor('recovered after the token returned', async () => (await fetch(`${w.url}/ready`)).status === 200, 15_000);
        t.diagnostic(`recovered ${Date.now() - t0} ms after the token returned`);
        assert.equal((await post(`${w.url}/v1/anchor`, submission('p11-back'))).status, 200);
        assert.match((await run(verifier, ['-url', `${w.url}/log/checkpoint`, '-vkeys', vkey])).stdout, /NOTE PASSED 1 signatures/);
      } finally {
        await w.close();
      }

      // pin-value and a writable module are refused.
      await assert.rejects(
        openSigner(`pkcs11:token=aw-test;object=witness?module-path=${SOFTHSM_MODULE}&pin-value=1234`, { algorithm: 'ed25519', key: 'x' }),
        (e: unknown) => e instanceof KeyRefError && e.code === 'key_ref_invalid' && /pin-value is refused/.test(e.message),
      );
      const unsafe = join(dir, 'module.so');
      copyFileSync(SOFTHSM_MODULE, unsafe);
      chmodSync(unsafe, 0o664);
      await assert.rejects(
        openSigner(`pkcs11:token=aw-test;object=witness?module-path=${unsafe}&pin-source=file:${tok.pinFile}`, {
          algorithm: 'ed25519',
          key: 'x',
        }),
        (e: unknown) => e instanceof KeyRefError && e.code === 'pkcs11_module_unsafe',
      );
    } finally {
      cleanup();
    }
  },
);

void test('pkcs11js absent → pkcs11_unavailable, never a crash', async () => {
  setPkcs11LoaderForTests(() => {
    throw new Error("Cannot find module 'pkcs11js'");
  });
  try {
    const { dir, cleanup } = tempDir('aw-p11-absent-');
    try {
      await assert.rejects(
        openSigner(`pkcs11:token=t;object=k?module-path=/nonexistent/module-${encodeHex(fill(1, 4))}.so&pin-source=file:${dir}/pin`, {
          algorithm: 'ed25519',
          key: 'x',
        }),
        (e: unknown) => e instanceof KeyRefError && e.code === 'pkcs11_unavailable',
      );
      // With a module that exists too.
      await assert.rejects(
        openSigner(`pkcs11:token=t;object=k?module-path=${process.execPath}&pin-source=file:${dir}/pin`, {
          algorithm: 'ed25519',
          key: 'x',
        }),
        (e: unknown) => e instanceof KeyRefError && e.code === 'pkcs11_unavailable',
      );
    } finally {
      cleanup();
    }
  } finally {
    setPkcs11LoaderForTests(undefined);
  }
});
