/**
 * Token bridge throughput (issue "Token bridge", bench/token): tokens/s for a 3-link attestation
 * chain with proof of possession, against the crypto ceiling measured in the same run — the chain's
 * signature verifications (3 links × 2 + the proof = 7 strict Ed25519 verifications) plus one RS256
 * signature with a generated (3072-bit) key. Target: ≥ 0.6 × ceiling.
 *
 * Measured three ways, sequentially (one token at a time, so per-token cost is what is compared):
 *   service — decision + nonce + JWT (TokenService.exchange), no HTTP;
 *   http    — the same through the hardened fastify pipeline (app.inject: routing, strict JSON
 *             parsing, limits, problem mapping, serialization), no sockets;
 * and `service_concurrent_8`, 8 exchanges in flight (WebCrypto signs off the main thread);
 * `freshness_gate`: the same exchange for a did:keri root, gate off vs on (`--require-finalized-anchor`,
 * a 2-of-3 bundle from three in-process witnesses), back to back (bench/token-gate.ts).
 * Requests (with their proofs) are built before the clock starts; each has a fresh nonce.
 * BENCH_TOKEN_ONLY=gate runs only the gate comparison. `cpu_ms_per_token` is the process's CPU
 * (all threads) per token, steadier than wall time on a shared machine.
 */
import { createPrivateKey, sign as rawSign, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateEd25519, signEd25519, verifyEd25519 } from '../src/crypto/ed25519.ts';
import { createBridgeServer } from '../src/bridge/app.ts';
import { buildDidKeyChain, buildTokenRequest, hexKey } from '../src/bridge/client.ts';
import { validateIssuer } from '../src/bridge/issuer.ts';
import { SigningKeyring } from '../src/bridge/signing-keyring.ts';
import { MemoryNonceStore } from '../src/bridge/nonces.ts';
import { TokenService } from '../src/bridge/service.ts';
import { signToken } from '../src/bridge/signing.ts';
import { readKeyFile } from '../src/keys/keyfile.ts';
import { rate } from './_measure.ts';
import { measureGate } from './token-gate.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const ISSUER = 'https://bridge.example';
const AUD = 'sts.amazonaws.com';

const dir = mkdtempSync(join(tmpdir(), 'tb-bench-'));
try {
  const keyring = await SigningKeyring.open(join(dir, 'keys'), { alg: 'RS256', maxTtl: 3600, create: true }, Math.floor(Date.now() / 1000));
  const root = generateEd25519();
  const links = [generateEd25519(), generateEd25519(), generateEd25519()];
  const now = Math.floor(Date.now() / 1000);
  const chain = buildDidKeyChain(
    root.privateKey,
    links.map((l, i) => ({
      deviceKey: l.privateKey,
      capabilities: ['deploy:staging', 'sign_commit', `link_${i}`].slice(0, 3 - i),
      expiresAt: now + 86400,
      timestamp: now - 60,
    })),
  );
  const leaf = links[2]!.privateKey;
  const requests = (n: number) =>
    Array.from(
      { length: n },
      () =>
        JSON.parse(
          JSON.stringify(
            buildTokenRequest({ chain, rootPublicKey: hexKey(root.privateKey), audience: AUD, issuer: ISSUER, deviceKey: leaf }),
          ),
        ) as unknown,
    );

  // ---- the ceiling, same run ----
  const msg = randomBytes(400); // about the size of one attestation's signed bytes
  const ed = generateEd25519();
  const edSig = signEd25519(ed.privateKey, msg);
  const verify = rate(() => {
    if (!verifyEd25519(ed.publicKey, msg, edSig)) throw new Error('verify failed');
  }, SECONDS);
  const pem = keyring.keyDir.pemPath(keyring.active.kid);
  const rsaKey = createPrivateKey(readKeyFile(pem));
  const jwtInput = Buffer.from('x'.repeat(700)); // about a JWT signing input
  const rs256 = rate(() => rawSign('sha256', jwtInput, rsaKey), SECONDS, 20);
  const verifications = chain.length * 2 + 1;
  const ceiling = 1 / (verifications / verify.ops_per_s + 1 / rs256.ops_per_s);

  // jose's RS256 (WebCrypto) for reference: what the bridge actually signs with
  const sampleClaims = { iss: ISSUER, sub: 'did:key:x', aud: AUD, iat: now, nbf: now - 60, exp: now + 900, jti: 'j', capabilities: ['a'] };
  let joseOps = 0;
  const joseEnd = performance.now() + SECONDS * 1000;
  const joseStart = performance.now();
  while (performance.now() < joseEnd) {
    await signToken(keyring.active, sampleClaims);
    joseOps++;
  }
  const joseRate = joseOps / ((performance.now() - joseStart) / 1000);

  const service = new TokenService({
    policy: {
      issuer: ISSUER,
      audiences: [AUD],
      defaultTtl: 900,
      maxTtl: 3600,
      proofOfPossession: true,
      awsSessionTags: false,
      startedAt: Date.now() - 600_000,
    },
    trustedRoots: () => undefined,
    signingKey: () => keyring.active,
    nonces: new MemoryNonceStore(1_000_000),
  });

  async function timed(name: string, pool: unknown[], one: (body: unknown) => Promise<void>, concurrency = 1) {
    for (let i = 0; i < 20; i++) await one(pool.pop()); // warm-up
    let ops = 0;
    const cpu = process.cpuUsage();
    const start = performance.now();
    const end = start + SECONDS * 1000;
    const worker = async () => {
      while (performance.now() < end) {
        const body = pool.pop();
        if (body === undefined) throw new Error(`${name}: request pool exhausted`);
        await one(body);
        ops++;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const tokensPerS = ops / ((performance.now() - start) / 1000);
    const used = process.cpuUsage(cpu);
    return {
      tokens_per_s: Math.round(tokensPerS),
      ms_per_token: Number((1000 / tokensPerS).toFixed(3)),
      // CPU of the whole process (every thread: WebCrypto's work runs on libuv's pool) per token:
      // steadier than wall time on a shared machine, where other processes take the cores.
      cpu_ms_per_token: Number((ops === 0 ? 0 : (used.user + used.system) / 1000 / ops).toFixed(3)),
      ratio_to_ceiling: Number((tokensPerS / ceiling).toFixed(2)),
      tokens: ops,
    };
  }

  const pool = () => requests(Math.ceil(ceiling * SECONDS * 3) + 200);
  // BENCH_TOKEN_ONLY=gate: only the freshness-gate comparison (issue 30), for repeated runs.
  const gateOnly = process.env.BENCH_TOKEN_ONLY === 'gate';
  const ungated = async () => {
    const svc = await timed('service', pool(), async (b) => {
      await service.exchange(b);
    });
    const svc8 = await timed(
      'service_concurrent_8',
      pool(),
      async (b) => {
        await service.exchange(b);
      },
      8,
    );

    const { app } = await createBridgeServer({ service, keys: keyring, issuer: validateIssuer(ISSUER, false) }, { rateLimit: null });
    const payloads = pool().map((b) => JSON.stringify(b));
    const http = await timed('http', payloads, async (p) => {
      const r = await app.inject({ method: 'POST', url: '/token', payload: p as string, headers: { 'content-type': 'application/json' } });
      if (r.statusCode !== 200) throw new Error(`HTTP ${r.statusCode}: ${r.body}`);
    });
    await app.close();
    return { svc, svc8, http };
  };
  const plain = gateOnly ? undefined : await ungated();

  // ---- the freshness gate on vs off, same run (SPEC §7.2; issue 30) ----
  const gate = await measureGate({
    keyring,
    poolSize: Math.ceil(ceiling * SECONDS * 3) + 200,
    timed: (name, pool, one) => timed(name, pool, one),
  });

  process.stdout.write(
    JSON.stringify(
      {
        bench: 'token',
        node: process.version,
        cpus: availableParallelism(),
        chain_links: chain.length,
        proof_of_possession: true,
        rsa_bits: 3072,
        ed25519_verify_strict: verify,
        rs256_sign_node_crypto: rs256,
        rs256_sign_jose_per_s: Math.round(joseRate),
        ceiling: {
          signature_verifications: verifications,
          rs256_signs: 1,
          tokens_per_s: Math.round(ceiling),
          ms_per_token: Number((1000 / ceiling).toFixed(3)),
        },
        ...(plain === undefined ? {} : { service: plain.svc, http: plain.http, service_concurrent_8: plain.svc8 }),
        target_ratio: 0.6,
        freshness_gate: gate,
      },
      null,
      2,
    ) + '\n',
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
