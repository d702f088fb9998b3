// The /token decision (SPEC §7): check order, every failure code, proof of possession, the claims,
// and the exchange service (nonce single use, JWT header and claims). Fixtures: test/bridge/_helpers.ts
// and the upstream vectors (../shared/research/upstream-bridge-vectors.json).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { decideToken } from '../../src/bridge/decide.ts';
import type { BridgePolicy, Decision } from '../../src/bridge/decide.ts';
import { BridgeError } from '../../src/bridge/errors.ts';
import { MemoryNonceStore } from '../../src/bridge/nonces.ts';
import { keriNonTransferablePrefix } from '../../src/bridge/root.ts';
import { TokenService } from '../../src/bridge/service.ts';
import { generateSigningKeyPem, loadSigningKey } from '../../src/bridge/signing.ts';
import { parseTrustedRoots } from '../../src/bridge/trusted-roots.ts';
import type { TrustedRoots } from '../../src/bridge/trusted-roots.ts';
import {
  AUD,
  chain,
  DEV1,
  DEV2,
  DEV3,
  freshNonce,
  ISSUER,
  NOW_MS,
  NOW_S,
  policy,
  request,
  ROOT,
  seedKey,
  twoLinks,
  VECTORS,
  wire,
} from './_helpers.ts';

function decide(body: unknown, p: BridgePolicy = policy(), roots?: TrustedRoots, now = NOW_MS): Decision {
  return decideToken(wire(body), p, roots, now, 'jti-1');
}

function failure(body: unknown, p?: BridgePolicy, roots?: TrustedRoots, now?: number): string {
  const d = decide(body, p, roots, now);
  if (d.ok) return 'ok';
  assert.ok(d.error instanceof BridgeError);
  return `${d.error.status} ${d.error.code}: ${d.error.detail}`;
}

function ok(body: unknown, p?: BridgePolicy, roots?: TrustedRoots, now?: number) {
  const d = decide(body, p, roots, now);
  if (!d.ok) assert.fail(`${d.error.code}: ${d.error.detail}`);
  return d.grant;
}

void test('the upstream fixture (root 8a88e3dd…6f5c) yields its documented sub, with a proof by its device key (seed 02×32)', () => {
  const f = VECTORS.repo_fixture_attestation;
  const device = seedKey(0x02);
  assert.equal(device.hex, f.attestation.device_public_key);
  const g = ok(request({ chain: [f.attestation], root: f.root_public_key_hex, device: device.key }));
  assert.equal(g.claims.sub, 'did:key:z6Mkon3Necd6NkkyfoGoHxid2znGc59LU3K7mubaRcFbLfLX');
  assert.deepEqual(g.claims.capabilities, []);
  assert.equal(g.claims.keri_prefix, undefined);
  assert.equal(g.expiresIn, 900); // no expires_at in the fixture
});

void test('the derived 2-link vector chain issues with the expected sub and capabilities', () => {
  const v = VECTORS.derived_two_link_chain;
  const leaf = seedKey(0x03);
  const g = ok(request({ chain: v.attestation_chain, root: v.root_public_key_hex, device: leaf.key }));
  assert.equal(g.claims.sub, v.expected_bridge_result.sub);
  assert.deepEqual(g.claims.capabilities, [...v.expected_bridge_result.capabilities_no_request].sort());
  const g2 = ok(
    request({ chain: v.attestation_chain, root: v.root_public_key_hex, device: leaf.key, requestedCapabilities: ['deploy:staging'] }),
  );
  assert.deepEqual(g2.claims.capabilities, v.expected_bridge_result.capabilities_requested_deploy_staging);
});

void test('claims: iss, sub, aud, iat, nbf = iat − 60, exp = min(now + ttl, earliest expires_at), jti, sorted capabilities; never azp', () => {
  const g = ok(request({ ttlSecs: 600 }));
  assert.deepEqual(g.claims, {
    iss: ISSUER,
    sub: ROOT.did,
    aud: AUD,
    iat: NOW_S,
    nbf: NOW_S - 60,
    exp: NOW_S + 600,
    jti: 'jti-1',
    capabilities: ['deploy:staging', 'sign_commit'],
  });
  assert.equal(g.expiresIn, 600);
  assert.equal(g.nonceKey?.startsWith(DEV2.hex + ':'), true);
  // the chain's earliest expires_at caps exp (link 1 here), rounded down to whole seconds
  const short = ok(request({ chain: twoLinks({ l1: { expiresAt: NOW_S + 100 } }), ttlSecs: 3600 }));
  assert.equal(short.claims.exp, NOW_S + 100);
  assert.equal(short.expiresIn, 100);
  assert.ok(!('azp' in short.claims));
});

void test('did:keri:B… roots carry keri_prefix; --no-proof-of-possession adds "pop": false; AWS session tags', () => {
  const sub = 'did:keri:' + keriNonTransferablePrefix(ROOT.pub);
  const c = chain(ROOT, [{ device: DEV1, issuer: sub, capabilities: ['b', 'a'] }]);
  const g = ok(request({ chain: c, device: DEV1.key }));
  assert.equal(g.claims.sub, sub);
  assert.equal(g.claims.keri_prefix, keriNonTransferablePrefix(ROOT.pub));
  assert.equal(g.binding, 'keri_non_transferable');

  const roots = parseTrustedRoots({ parties: [] });
  const off = policy({ proofOfPossession: false, awsSessionTags: true });
  const g2 = ok(request({ device: null, audience: undefined }), off, roots);
  assert.equal(g2.claims.pop, false);
  assert.equal(g2.nonceKey, null);
  assert.deepEqual(g2.claims['https://aws.amazon.com/tags'], {
    principal_tags: { auths_leaf: [DEV2.did], auths_caps: ['deploy:staging sign_commit'] },
  });
  // without PoP the audience may be omitted: the first allowed audience is used
  const noAud = request({ device: null });
  delete noAud.audience;
  assert.equal(ok(noAud, off, roots).claims.aud, AUD);
});

void test('schema failures are 400 malformed_body with the JSON pointer', () => {
  const cases: [string, (r: Record<string, unknown>) => void, string][] = [
    ['unknown member', (r) => (r.scope = 'x'), '/scope'],
    ['missing chain', (r) => delete r.attestation_chain, '/attestation_chain'],
    ['empty chain', (r) => (r.attestation_chain = []), '/attestation_chain'],
    [
      'oversize chain (9 links)',
      (r) => (r.attestation_chain = Array.from({ length: 9 }, () => (r.attestation_chain as unknown[])[0])),
      '/attestation_chain',
    ],
    ['root key not 32 bytes', (r) => (r.root_public_key = 'ab'.repeat(31)), '/root_public_key'],
    ['ttl 0', (r) => (r.ttl_secs = 0), '/ttl_secs'],
    ['ttl string', (r) => (r.ttl_secs = '600'), '/ttl_secs'],
    ['empty requested_capabilities', (r) => (r.requested_capabilities = []), '/requested_capabilities'],
    ['malformed requested capability', (r) => (r.requested_capabilities = ['Deploy']), '/requested_capabilities/0'],
    ['missing audience with PoP on', (r) => delete r.audience, '/audience'],
    ['proof not an object', (r) => (r.proof = 'x'), '/proof'],
    ['proof without iat', (r) => delete (r.proof as Record<string, unknown>).iat, '/proof/iat'],
    ['proof extra member', (r) => ((r.proof as Record<string, unknown>).alg = 'EdDSA'), '/proof/alg'],
    [
      'empty object',
      (r) => {
        Object.keys(r).forEach((k) => {
          Reflect.deleteProperty(r, k);
        });
      },
      '/attestation_chain',
    ],
  ];
  for (const [name, mutate, pointer] of cases) {
    const r = request();
    mutate(r);
    const d = decide(r);
    assert.ok(
      !d.ok && d.error.code === 'malformed_body' && d.error.status === 400 && d.error.pointer === pointer,
      `${name}: ${d.ok ? 'ok' : `${d.error.code} ${d.error.pointer}`}`,
    );
  }
  assert.match(failure([1, 2]), /^400 malformed_body: request body must be a JSON object/);
});

void test('audience and TTL: 403 audience_not_allowed, 400 ttl_too_large', () => {
  assert.match(failure(request({ audience: 'https://evil.example' })), /^403 audience_not_allowed/);
  assert.match(failure(request({ ttlSecs: 3601 })), /^400 ttl_too_large: ttl_secs 3601 exceeds the maximum of 3600/);
  assert.match(failure(request({ ttlSecs: 901 }), policy({ maxTtl: 900 })), /^400 ttl_too_large/);
  assert.equal(failure(request({ ttlSecs: 3600 })), 'ok');
  assert.equal(failure(request({ audience: 'other' }), policy({ audiences: [AUD, 'other'] })), 'ok');
});

void test('proof of possession: required, fresh ±60 s, signed by the leaf key over issuer, audience and request', () => {
  const noProof = request();
  delete noProof.proof;
  assert.match(failure(noProof), /^401 pop_required/);
  assert.match(failure(request({ iat: NOW_S - 61 })), /^401 pop_stale/);
  assert.match(failure(request({ iat: NOW_S + 61 })), /^401 pop_stale/);
  assert.equal(failure(request({ iat: NOW_S - 60 })), 'ok');
  assert.equal(failure(request({ iat: NOW_S + 60 })), 'ok');

  assert.match(
    failure(request({ device: DEV1.key })),
    /^401 pop_invalid: proof signature does not verify under the leaf device key \(link 1\)/,
  ); // wrong PoP key
  assert.match(failure(request({ device: ROOT.key })), /^401 pop_invalid/);
  assert.match(failure(request({ issuer: 'https://other-bridge.example' })), /^401 pop_invalid/); // proof for another bridge
  assert.match(failure(request({ nonce: 'short' })), /^401 pop_invalid: proof nonce must match/);
  assert.match(failure(request({ nonce: 'has space in it 123' })), /^401 pop_invalid: proof nonce/);
  const badSig = request();
  (badSig.proof as Record<string, unknown>).signature = 'zz';
  assert.match(failure(badSig), /^401 pop_invalid: proof signature must be 64 bytes of hex/);
  // the proof covers the whole request: changing any member after signing breaks it
  for (const mutate of [
    (r: Record<string, unknown>) => (r.ttl_secs = 60),
    (r: Record<string, unknown>) => (r.requested_capabilities = ['sign_commit']),
    (r: Record<string, unknown>) => (r.root_public_key = (r.root_public_key as string).toUpperCase()),
  ]) {
    const r = request();
    mutate(r);
    assert.match(failure(r), /^401 pop_invalid/);
  }
  // the audience is bound twice (aud and req)
  const other = request({ audience: 'other' });
  other.audience = AUD;
  assert.match(failure(other, policy({ audiences: [AUD, 'other'] })), /^401 pop_invalid/);
});

void test('check order: the first failing step answers', () => {
  const broken = twoLinks({ l1: { issuer: ROOT.did } });
  // schema before audience
  const r1 = request({ audience: 'evil' });
  r1.extra = true;
  assert.match(failure(r1), /^400 malformed_body/);
  // audience before TTL before proof
  const r2 = request({ audience: 'evil', ttlSecs: 99999 });
  delete r2.proof;
  assert.match(failure(r2), /^403 audience_not_allowed/);
  const r3 = request({ ttlSecs: 99999 });
  delete r3.proof;
  assert.match(failure(r3), /^400 ttl_too_large/);
  // proof freshness before the chain
  assert.match(failure(request({ chain: broken, iat: NOW_S - 3600 })), /^401 pop_stale/);
  // chain before root binding
  const stranger = seedKey(0x55);
  assert.match(failure(request({ chain: broken, root: stranger.hex })), /^401 chain_signature_invalid: link 0/);
  assert.match(failure(request({ chain: broken })), /^401 chain_broken: link 1/);
  // root binding before capabilities: a self-issued chain naming a victim's DID
  const forged = chain(stranger, [
    { device: DEV1, issuer: 'did:keri:EVictimVictimVictimVictimVictimVictimVictim', capabilities: ['a'] },
    { device: DEV2, capabilities: ['a', 'z'] },
  ]);
  assert.match(failure(request({ chain: forged, root: stranger.hex })), /^403 untrusted_root/);
  // capabilities before the proof signature
  const widened = twoLinks({ l1: { capabilities: ['admin'] } });
  assert.match(failure(request({ chain: widened, device: DEV1.key })), /^403 capability_escalation: link 1/);
  assert.match(failure(request({ requestedCapabilities: ['deploy:production'], device: DEV1.key })), /^403 insufficient_capabilities/);
  // and each chain failure on its own
  assert.match(failure(request({ chain: twoLinks({ l0: { expiresAt: NOW_S - 10 } }) })), /^401 attestation_expired: link 0/);
  assert.match(failure(request({ chain: twoLinks({ l1: { revokedAt: NOW_S - 10 } }) })), /^401 attestation_revoked: link 1/);
  assert.match(failure(request({ chain: twoLinks({ l1: { timestamp: NOW_S + 3600 } }) })), /^401 attestation_future: link 1/);
  assert.match(failure(request({ chain: twoLinks({ l0: { signIdentityWith: DEV3.key } }) })), /^401 chain_signature_invalid: link 0/);
  // a trusted-roots revocation
  assert.match(
    failure(request(), policy(), parseTrustedRoots({ revoked: [{ device_public_key: DEV1.hex }] })),
    /^401 attestation_revoked: link 0/,
  );
});

void test('in-memory nonce store only: after a start, every iat ≤ start second + 60 is pop_stale for 121 s', () => {
  // started 10.5 s ago: the start second is NOW_S − 11. A proof used just before the start had
  // iat ≤ NOW_S − 11 + 60 and stays acceptable until NOW_S + 109: all such proofs are refused.
  const restarted = policy({ startedAt: NOW_MS - 10_500 });
  assert.match(
    failure(request({ iat: NOW_S - 12 }), restarted),
    /^401 pop_stale: proof iat .* may have been used before this bridge restarted/,
  );
  assert.match(failure(request({ iat: NOW_S + 49 }), restarted), /^401 pop_stale/); // = start second + 60
  assert.equal(failure(request({ iat: NOW_S + 50 }), restarted), 'ok'); // start second + 61
  // still in force at the last millisecond such a proof is within ±60 s: started on a whole
  // second 120.999 s ago, iat = start second + 60 = bridge second − 60
  const startedAt = NOW_MS + 999 - 120_999;
  const at = NOW_MS + 999;
  assert.match(failure(request({ iat: NOW_S - 60 }), policy({ startedAt }), undefined, at), /^401 pop_stale: .*restarted/);
  assert.equal(failure(request({ iat: NOW_S - 59 }), policy({ startedAt }), undefined, at), 'ok');
  // a durable nonce store (startedAt null) has no restart rule: a fresh proof right after the start
  assert.equal(failure(request({ iat: NOW_S - 12 }), policy({ startedAt: null })), 'ok');
  assert.equal(failure(request({ iat: NOW_S + 60 }), policy({ startedAt: null })), 'ok');
});

void test('exchange service: JWT header {alg, kid, typ}, claims verify; only a valid proof consumes its nonce; replay → pop_replayed; full store → overloaded', async () => {
  const key = await loadSigningKey(await generateSigningKeyPem('ES256'));
  const nonces = new MemoryNonceStore(3);
  let jti = 0;
  const svc = new TokenService({
    policy: policy(),
    trustedRoots: () => undefined,
    signingKey: () => key,
    nonces,
    now: () => NOW_MS,
    jti: () => `jti-${++jti}`,
  });
  const nonce = freshNonce();
  const forged = request({ device: DEV1.key, nonce });
  await assert.rejects(svc.exchange(wire(forged)), (e: unknown) => e instanceof BridgeError && e.code === 'pop_invalid');
  assert.equal(nonces.size, 0);
  const good = wire(request({ nonce }));
  const issued = await svc.exchange(good);
  assert.equal(issued.response.token_type, 'Bearer');
  assert.equal(issued.response.subject, ROOT.did);
  assert.equal(issued.response.expires_in, 900);
  const header = decodeProtectedHeader(issued.response.access_token);
  assert.deepEqual(header, { alg: 'ES256', kid: key.kid, typ: 'JWT' });
  const { payload } = await jwtVerify(issued.response.access_token, createLocalJWKSet({ keys: [key.jwk] }), {
    issuer: ISSUER,
    audience: AUD,
    algorithms: ['ES256'],
    currentDate: new Date(NOW_MS),
  });
  assert.equal(payload.sub, ROOT.did);
  assert.equal(payload.jti, 'jti-2'); // the refused request drew jti-1
  assert.ok(!('azp' in payload));
  await assert.rejects(svc.exchange(wire(good)), (e: unknown) => e instanceof BridgeError && e.code === 'pop_replayed' && e.status === 401);
  // the same nonce under another leaf key is a different entry
  const c1 = chain(ROOT, [{ device: DEV1, capabilities: ['a'] }]);
  await svc.exchange(wire(request({ chain: c1, device: DEV1.key, nonce })));
  await svc.exchange(wire(request()));
  await assert.rejects(
    svc.exchange(wire(request())),
    (e: unknown) => e instanceof BridgeError && e.code === 'overloaded' && e.status === 503,
  );
});
