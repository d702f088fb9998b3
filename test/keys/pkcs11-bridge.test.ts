// SPEC §1.1 "Bridge keys" and §1.3 (PKCS#11) with Debian's SoftHSM2 and opensc pkcs11-tool: the
// bridge's ES256 key made on a token by pkcs11-tool.
//   - `token-bridge keys rotate --ref URI` (the real CLI) adds a keys.json entry with `ref` and the
//     token key's `jwk`, kid = its RFC 7638 thumbprint, writes no key file and leaves the token's
//     objects as they were;
//   - a bridge serving with it issues tokens that npm jose verifies through the served JWKS
//     (createRemoteJWKSet over loopback), with low-S signatures; /live, /ready 200, /health lists
//     the signer `bridge:<kid>`;
//   - the token removed (its SoftHSM2 directory renamed) → /token 503 signer_unavailable
//     (Retry-After: 5) with the nonce unconsumed, /ready 503 naming the signer, /health degraded,
//     the JWKS still served; restored → ready again within 15 s and the same request gets its token;
//   - a keys.json entry whose ref names another token key than its jwk → start-up key_mismatch.
// Skipped (reported) when softhsm2/opensc are missing or pkcs11js did not build, except under CI=true.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { calculateJwkThumbprint, createRemoteJWKSet, jwtVerify } from 'jose';
import { pino } from 'pino';
import { BridgeConfigError } from '../../src/bridge/errors.ts';
import { startBridge } from '../../src/bridge/node.ts';
import { P256_HALF_N, bigIntFromBytes } from '../../src/crypto/p256-strict.ts';
import { decodeBase64url } from '../../src/encoding/base64.ts';
import { AUD, NOW_MS, NOW_S, request } from '../bridge/_helpers.ts';
import { pkcs11Missing, pkcs11Ref, requireTool, run, softhsmToken, tokenKey, SOFTHSM_MODULE } from '../helpers/external-keys.ts';
import { waitFor } from '../helpers/poll.ts';
import { tempDir } from '../helpers/tmp.ts';

const BIN = join(import.meta.dirname, '../../bin/token-bridge.js');

async function postToken(
  url: string,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown>; retryAfter: string | null }> {
  const r = await fetch(`${url}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, json: (await r.json()) as Record<string, unknown>, retryAfter: r.headers.get('retry-after') };
}

void test(
  'bridge ES256 key on a PKCS#11 token: keys rotate --ref, jose verifies through the JWKS, low S, token removed → 503 and back',
  { timeout: 180_000 },
  async (t) => {
    if (!requireTool(t, await pkcs11Missing())) return;
    const { dir, cleanup } = tempDir('tb-p11-');
    try {
      const tok = await softhsmToken(dir, 'tb-test');
      // SoftHSM2 reads SOFTHSM2_CONF at C_Initialize; the module is loaded once per process.
      process.env.SOFTHSM2_CONF = tok.conf;
      await tokenKey(tok, 'EC:prime256v1', 'bridge', '02');
      await tokenKey(tok, 'EC:prime256v1', 'other', '03');
      const objects = async (): Promise<string> =>
        (
          await run('pkcs11-tool', ['--module', SOFTHSM_MODULE, '--token-label', tok.label, '--login', '--pin', '1234', '--list-objects'], {
            env: tok.env,
          })
        ).stdout;
      const objectsBefore = await objects();

      // keys rotate --ref: the token's public key read, no key file, token objects unchanged.
      const keyDir = join(dir, 'keys');
      const ref = pkcs11Ref(tok, 'bridge');
      const rotated = await run(process.execPath, [BIN, 'keys', 'rotate', '--ref', ref, '--key-dir', keyDir], { env: tok.env });
      const entry = JSON.parse(rotated.stdout) as { kid: string; state: string; ref: string; jwk: Record<string, string> };
      assert.equal(entry.state, 'active');
      assert.equal(entry.ref, ref);
      assert.deepEqual(Object.keys(entry.jwk).sort(), ['crv', 'kty', 'x', 'y']);
      assert.equal(entry.kid, await calculateJwkThumbprint(entry.jwk as never, 'sha256'), 'kid = RFC 7638 thumbprint of jwk');
      assert.deepEqual(
        readdirSync(keyDir).filter((f) => f.endsWith('.pem')),
        [],
        'no key file for a token key',
      );
      assert.equal(await objects(), objectsBefore, 'keys rotate --ref never changes token objects');

      const bridge = await startBridge(
        {
          host: '127.0.0.1',
          port: 0,
          keyDir,
          dev: true,
          audiences: [AUD],
          rateLimit: null,
          clock: () => NOW_MS,
          signers: { startTimeoutMs: 5_000 },
        },
        pino({ level: 'silent' }),
      );
      try {
        const issuer = bridge.issuer.issuer;
        const jwks = createRemoteJWKSet(new URL(`${bridge.url}/.well-known/jwks.json`));
        const served = (await (await fetch(`${bridge.url}/.well-known/jwks.json`)).json()) as { keys: Record<string, string>[] };
        assert.deepEqual(served.keys, [
          { kty: 'EC', alg: 'ES256', use: 'sig', kid: entry.kid, crv: 'P-256', x: entry.jwk.x, y: entry.jwk.y },
        ]);
        for (let i = 0; i < 10; i++) {
          const r = await postToken(bridge.url, request({ issuer }));
          assert.equal(r.status, 200, JSON.stringify(r.json));
          const jwt = r.json.access_token as string;
          const { payload, protectedHeader } = await jwtVerify(jwt, jwks, { issuer, audience: AUD, currentDate: new Date(NOW_MS) });
          assert.deepEqual(protectedHeader, { alg: 'ES256', kid: entry.kid, typ: 'JWT' });
          assert.equal(payload.iat, NOW_S);
          const sig = decodeBase64url(jwt.split('.')[2]!);
          assert.equal(sig.length, 64);
          assert.ok(bigIntFromBytes(sig, 32, 64) <= P256_HALF_N, 'low S');
        }
        assert.equal((await fetch(`${bridge.url}/live`)).status, 200);
        assert.equal((await fetch(`${bridge.url}/ready`)).status, 200);
        const ok = (await (await fetch(`${bridge.url}/health`)).json()) as {
          status: string;
          signers: { key: string; state: string; ref: string }[];
        };
        assert.equal(ok.status, 'ok');
        assert.deepEqual(
          ok.signers.map((s) => [s.key, s.state]),
          [[`bridge:${entry.kid}`, 'ok']],
        );
        assert.ok(!ok.signers[0]!.ref.includes(tok.pinFile), 'pin-source redacted');

        // Token removed: 503 signer_unavailable, nonce unconsumed.
        const moved = `${tok.tokenDir}.away`;
        renameSync(tok.tokenDir, moved);
        let refused: Record<string, unknown> | undefined;
        await waitFor(
          '/token 503 while the token is away',
          async () => {
            const body = request({ issuer });
            const r = await postToken(bridge.url, body);
            if (r.status === 503) {
              assert.equal(r.json.code, 'signer_unavailable');
              assert.equal(r.retryAfter, '5');
              refused = body;
            } else assert.equal(r.status, 200, JSON.stringify(r.json));
            return r.status === 503;
          },
          10_000,
        );
        const ready = await fetch(`${bridge.url}/ready`);
        assert.equal(ready.status, 503);
        assert.match(((await ready.json()) as { detail: string }).detail, new RegExp(`signer bridge:${entry.kid}`));
        const down = (await (await fetch(`${bridge.url}/health`)).json()) as {
          status: string;
          signers: { state: string; last_error: string }[];
        };
        assert.equal(down.status, 'degraded');
        assert.equal(down.signers[0]!.state, 'unavailable');
        t.diagnostic(`last_error while removed: ${down.signers[0]!.last_error}`);
        assert.equal((await fetch(`${bridge.url}/.well-known/jwks.json`)).status, 200, 'the JWKS is still served');
        const metrics = await (await fetch(`${bridge.url}/metrics`)).text();
        assert.match(metrics, new RegExp(`signer_up\\{key="bridge:${entry.kid}"\\} 0`));
        assert.match(metrics, /bridge_token_refusals_total\{code="signer_unavailable"\} [1-9]/);

        // Restored: ready within 15 s, and the refused request (its nonce unconsumed) gets its token.
        renameSync(moved, tok.tokenDir);
        const t0 = Date.now();
        await waitFor('ready after the token returned', async () => (await fetch(`${bridge.url}/ready`)).status === 200, 15_000);
        t.diagnostic(`recovered ${Date.now() - t0} ms after the token returned`);
        const again = await postToken(bridge.url, refused);
        assert.equal(again.status, 200, `the nonce of the 503 request was not consumed: ${JSON.stringify(again.json)}`);
        await jwtVerify(again.json.access_token as string, jwks, { issuer, audience: AUD, currentDate: new Date(NOW_MS) });
      } finally {
        await bridge.close();
      }

      // A ref that names another key on the token than the entry's jwk: refused at start.
      const keysJson = join(keyDir, 'keys.json');
      writeFileSync(keysJson, readFileSync(keysJson, 'utf8').replace('object=bridge', 'object=other'));
      await assert.rejects(
        startBridge(
          { host: '127.0.0.1', port: 0, keyDir, dev: true, rateLimit: null, signers: { startTimeoutMs: 5_000 } },
          pino({ level: 'silent' }),
        ),
        (e: unknown) => e instanceof BridgeConfigError && e.code === 'key_mismatch',
      );
    } finally {
      cleanup();
    }
  },
);
