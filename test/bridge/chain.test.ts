// Attestation format, signed bytes, chain rules and root binding (SPEC §7). Known answers from
// ../shared/research/upstream-bridge-vectors.json: the upstream auths fixture (ffi_smoke.rs, root key
// 8a88e3dd…6f5c = Ed25519 seed 01×32, device = seed 02×32) and the derived 2-link chain (seeds 1 → 2 → 3);
// the did:keri:B… prefix vector from SPEC §7.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attestationSignedBytes, decodeAttestation, encodeAttestation } from '../../src/bridge/attestation.ts';
import { instantFromMillis, verifyChain, checkNarrowing, grantCapabilities } from '../../src/bridge/chain.ts';
import { BridgeError } from '../../src/bridge/errors.ts';
import { bindRoot, keriNonTransferablePrefix } from '../../src/bridge/root.ts';
import { parseTrustedRoots } from '../../src/bridge/trusted-roots.ts';
import { decodeHex } from '../../src/encoding/hex.ts';
import { BridgeConfigError } from '../../src/bridge/errors.ts';
import { chain, DEV1, DEV2, NOW_MS, NOW_S, ROOT, seedKey, twoLinks, VECTORS, wire } from './_helpers.ts';

const NOW = instantFromMillis(NOW_MS);
const fixture = VECTORS.repo_fixture_attestation;
const two = VECTORS.derived_two_link_chain;
const vectorRoot = decodeHex(two.root_public_key_hex, 32);

const decodeChain = (list: readonly unknown[]) => list.map((a, i) => decodeAttestation(a, `/attestation_chain/${i}`));

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof BridgeError) return `${e.code}: ${e.detail}`;
    throw e;
  }
  return 'ok';
}

void test('upstream fixture: canonical bytes, both signatures, did:key root binding', () => {
  const a = decodeAttestation(fixture.attestation, '/attestation_chain/0');
  assert.equal(Buffer.from(attestationSignedBytes(a)).toString('utf8'), fixture.canonical_bytes_utf8);
  const root = decodeHex(fixture.root_public_key_hex, 32);
  verifyChain([a], root, NOW);
  assert.equal(bindRoot(a.issuer, root, undefined), 'did_key');
  assert.equal(a.issuer, 'did:key:z6Mkon3Necd6NkkyfoGoHxid2znGc59LU3K7mubaRcFbLfLX');
});

void test('derived 2-link vectors: canonical bytes of each link, chain verifies, capabilities narrow', () => {
  const c = decodeChain(two.attestation_chain);
  c.forEach((a, i) => {
    assert.equal(Buffer.from(attestationSignedBytes(a)).toString('utf8'), two.canonical_bytes_utf8[i]);
  });
  verifyChain(c, vectorRoot, NOW);
  assert.equal(bindRoot(c[0]!.issuer, vectorRoot, undefined), 'did_key');
  checkNarrowing(c);
  assert.deepEqual(grantCapabilities(c[1]!.capabilities, undefined), [...two.expected_bridge_result.capabilities_no_request].sort());
  assert.deepEqual(
    grantCapabilities(c[1]!.capabilities, ['deploy:staging']),
    two.expected_bridge_result.capabilities_requested_deploy_staging,
  );
});

void test('every signed field and both signatures are tamper-evident (chain_signature_invalid names the link)', () => {
  const tampers: [string, (a: Record<string, unknown>) => void][] = [
    ['version', (a) => (a.version = 2)],
    ['rid', (a) => (a.rid = 'other')],
    ['device_public_key', (a) => (a.device_public_key = seedKey(0x77).hex)],
    ['timestamp', (a) => (a.timestamp = '2025-01-01T00:00:01Z')],
    ['expires_at', (a) => (a.expires_at = '2031-01-01T00:00:00Z')],
    ['expires_at removed', (a) => delete a.expires_at],
    ['note', (a) => (a.note = 'hello')],
    ['payload', (a) => (a.payload = { x: 1 })],
    ['role', (a) => (a.role = 'admin')],
    ['delegated_by', (a) => (a.delegated_by = 'did:key:attacker')],
    ['signer_type', (a) => (a.signer_type = 'Human')],
    ['capabilities narrowed', (a) => (a.capabilities = ['sign_commit'])],
    ['capabilities reordered', (a) => (a.capabilities = [...(a.capabilities as string[])].reverse())],
    [
      'identity_signature flipped',
      (a) => (a.identity_signature = (a.identity_signature as string).replace(/^./, (c) => (c === '0' ? '1' : '0'))),
    ],
    [
      'device_signature flipped',
      (a) => (a.device_signature = (a.device_signature as string).replace(/.$/, (c) => (c === '0' ? '1' : '0'))),
    ],
    ['identity_signature empty', (a) => (a.identity_signature = '')],
    ['identity_signature missing', (a) => delete a.identity_signature],
    ['device_signature empty', (a) => (a.device_signature = '')],
    ['identity_signature = device_signature', (a) => (a.identity_signature = a.device_signature)],
  ];
  for (const link of [0, 1]) {
    for (const [name, mutate] of tampers) {
      const list = wire(two.attestation_chain);
      mutate(list[link]!);
      const got = code(() => {
        verifyChain(decodeChain(list), vectorRoot, NOW);
      });
      assert.match(got, new RegExp(`^chain_signature_invalid: link ${link}:`), `${name} on link ${link}: ${got}`);
    }
  }
  // revoked_at injected (signatures are checked before validity, so forging revocation state is a signature failure too)
  const list = wire(two.attestation_chain);
  list[1]!.revoked_at = '2025-06-01T00:00:00Z';
  assert.match(
    code(() => {
      verifyChain(decodeChain(list), vectorRoot, NOW);
    }),
    /^chain_signature_invalid: link 1/,
  );
  // another root key
  assert.match(
    code(() => {
      verifyChain(decodeChain(two.attestation_chain), ROOT.pub, NOW);
    }),
    /^chain_signature_invalid: link 0: identity_signature does not verify under root_public_key/,
  );
});

void test('signed bytes use decoded values: equivalent encodings verify', () => {
  const variants: [string, (a: Record<string, unknown>) => void][] = [
    ['offset timestamp', (a) => (a.timestamp = '2025-01-01T01:00:00+01:00')],
    ['space separator, lowercase z', (a) => (a.timestamp = '2025-01-01 00:00:00z')],
    ['extra fraction zeros', (a) => (a.timestamp = '2025-01-01T00:00:00.000000000Z')],
    ['uppercase hex key', (a) => (a.device_public_key = (a.device_public_key as string).toUpperCase())],
    ['explicit nulls', (a) => Object.assign(a, { note: null, payload: null, revoked_at: null, role: null, delegated_by: null })],
  ];
  for (const [name, mutate] of variants) {
    const list = wire(two.attestation_chain);
    mutate(list[0]!);
    assert.equal(
      code(() => {
        verifyChain(decodeChain(list), vectorRoot, NOW);
      }),
      'ok',
      name,
    );
  }
  // 0.500 s re-printed as .500 (3 digits), and 6 / 9 digit precision is kept
  const l1 = wire(two.attestation_chain);
  l1[1]!.timestamp = '2025-01-01T00:00:00.5Z';
  assert.equal(
    code(() => {
      verifyChain(decodeChain(l1), vectorRoot, NOW);
    }),
    'ok',
  );
  const a = decodeAttestation(
    { ...wire(two.attestation_chain[1]!), timestamp: '2025-01-01T00:00:15.358487Z', expires_at: '2030-01-01T00:00:00.123456789+00:00' },
    '/x',
  );
  const w = encodeAttestation(a);
  assert.equal(w.timestamp, '2025-01-01T00:00:15.358487Z');
  assert.equal(w.expires_at, '2030-01-01T00:00:00.123456789Z');
});

void test('malformed attestations are malformed_body with a JSON pointer', () => {
  const bad: [string, (a: Record<string, unknown>) => void, string][] = [
    ['unknown field', (a) => (a.extra = 1), '/attestation_chain/0/extra'],
    ['missing rid', (a) => delete a.rid, '/attestation_chain/0/rid'],
    ['short key', (a) => (a.device_public_key = 'abcd'), '/attestation_chain/0/device_public_key'],
    ['63-byte signature', (a) => (a.device_signature = 'ab'.repeat(63)), '/attestation_chain/0/device_signature'],
    ['bad timestamp', (a) => (a.timestamp = '2025-13-01T00:00:00Z'), '/attestation_chain/0/timestamp'],
    ['uppercase capability (no folding)', (a) => (a.capabilities = ['Sign_Commit']), '/attestation_chain/0/capabilities/0'],
    ['long capability', (a) => (a.capabilities = ['a'.repeat(65)]), '/attestation_chain/0/capabilities/0'],
    ['bad role', (a) => (a.role = 'root'), '/attestation_chain/0/role'],
    ['bad signer_type', (a) => (a.signer_type = 'workload'), '/attestation_chain/0/signer_type'],
    ['version string', (a) => (a.version = '1'), '/attestation_chain/0/version'],
  ];
  for (const [name, mutate, pointer] of bad) {
    const a = wire(two.attestation_chain[0]!);
    mutate(a);
    assert.throws(
      () => decodeAttestation(a, '/attestation_chain/0'),
      (e: unknown) => e instanceof BridgeError && e.code === 'malformed_body' && e.pointer === pointer,
      name,
    );
  }
});

void test('chain rules: continuity, revocation, expiry, future timestamps — each with its own code and link index', () => {
  const run = (c: readonly unknown[], roots?: Parameters<typeof verifyChain>[3]) =>
    code(() => {
      verifyChain(decodeChain(c), ROOT.pub, NOW, roots);
    });
  assert.equal(run(twoLinks()), 'ok');
  assert.match(run(twoLinks({ l1: { issuer: ROOT.did } })), /^chain_broken: link 1: issuer .* is not link 0's subject/);
  assert.match(run(twoLinks({ l1: { revokedAt: NOW_S + 86400 } })), /^attestation_revoked: link 1: revoked at/); // presence, not time
  assert.match(run(twoLinks({ l0: { expiresAt: NOW_S - 1 } })), /^attestation_expired: link 0: expired at 2025-12-31T23:59:59Z/);
  assert.equal(run(twoLinks({ l0: { expiresAt: NOW_S } })), 'ok'); // now == expires_at is still valid
  assert.match(run(twoLinks({ l1: { timestamp: NOW_S + 301 } })), /^attestation_future: link 1:/);
  assert.equal(run(twoLinks({ l1: { timestamp: NOW_S + 300 } })), 'ok'); // exactly +300 s passes
  assert.equal(run(twoLinks({ l1: { timestamp: null, expiresAt: null } })), 'ok');
  // the trusted roots' revoked list, by device key and by rid
  const byKey = parseTrustedRoots({ parties: [], revoked: [{ device_public_key: DEV2.hex.toUpperCase() }] });
  assert.match(run(twoLinks(), byKey), /^attestation_revoked: link 1: device_public_key/);
  const byRid = parseTrustedRoots({ revoked: [{ rid: 'link-0' }] });
  assert.match(run(twoLinks(), byRid), /^attestation_revoked: link 0: rid "link-0"/);
  // authenticity before validity: a bad signature on link 1 wins over link 0 being expired
  const c = twoLinks({ l0: { expiresAt: NOW_S - 1 }, l1: { signIdentityWith: ROOT.key } });
  assert.match(run(c), /^chain_signature_invalid: link 1/);
});

void test('expiry boundary: valid at expires_at, expired one millisecond later', () => {
  const signed = chain(ROOT, [{ device: DEV1, expiresAt: NOW_S }]);
  const at = (ms: number) =>
    code(() => {
      verifyChain(decodeChain(signed), ROOT.pub, instantFromMillis(ms));
    });
  assert.equal(at(NOW_MS), 'ok');
  assert.match(at(NOW_MS + 1), /^attestation_expired/);
});

void test('root binding: did:key, did:keri:B… of the key, trusted roots; D…/E… only via trusted roots', () => {
  const vectorKey = decodeHex('8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c', 32);
  assert.equal(keriNonTransferablePrefix(vectorKey), 'BIqI4910CfGV_VLbLTy6XXLKZwm_HZQSG_N0iAG0D29c'); // SPEC §7 vector
  assert.equal(bindRoot('did:keri:BIqI4910CfGV_VLbLTy6XXLKZwm_HZQSG_N0iAG0D29c', vectorKey, undefined), 'keri_non_transferable');
  assert.equal(bindRoot(ROOT.did, ROOT.pub, undefined), 'did_key');
  const untrusted = (issuer: string, key: Uint8Array, roots?: Parameters<typeof bindRoot>[2]) => {
    assert.throws(
      () => bindRoot(issuer, key, roots),
      (e: unknown) => e instanceof BridgeError && e.code === 'untrusted_root' && e.status === 403,
      issuer,
    );
  };
  untrusted(DEV1.did, ROOT.pub); // did:key of another key
  untrusted('did:keri:' + keriNonTransferablePrefix(DEV1.pub), ROOT.pub); // B prefix of another key
  untrusted('did:keri:EMN-WRXNAkLfavKsaFHS0ehP7eB1s8a1alktBJoDhI7b', ROOT.pub); // transferable, no trusted roots
  untrusted('did:keri:D' + keriNonTransferablePrefix(ROOT.pub).slice(1), ROOT.pub);
  untrusted('did:web:example.com', ROOT.pub);
  untrusted('', ROOT.pub);
  const roots = parseTrustedRoots({
    parties: [
      { id: 'did:keri:EMN-WRXNAkLfavKsaFHS0ehP7eB1s8a1alktBJoDhI7b', keys: [{ curve: 'ed25519', public_key: ROOT.hex }] },
      { id: 'DRootWithoutPrefix', keys: [{ curve: 'ed25519', public_key: DEV1.hex }] },
    ],
  });
  assert.equal(bindRoot('did:keri:EMN-WRXNAkLfavKsaFHS0ehP7eB1s8a1alktBJoDhI7b', ROOT.pub, roots), 'trusted_roots');
  assert.equal(bindRoot('did:keri:DRootWithoutPrefix', DEV1.pub, roots), 'trusted_roots'); // ids normalised to did:keri:
  untrusted('did:keri:EMN-WRXNAkLfavKsaFHS0ehP7eB1s8a1alktBJoDhI7b', DEV1.pub, roots); // listed, other key
  untrusted('DRootWithoutPrefix', DEV1.pub, roots); // the sub must be a did:keri: DID exactly as listed
});

void test('trusted-roots file validation reuses the registry rules', () => {
  const bad: unknown[] = [
    [],
    { parties: [], extra: 1 },
    { parties: [{ id: 'EA', keys: [] }] },
    { parties: [{ id: 'EA', keys: [{ curve: 'ed25519', public_key: '01' + '00'.repeat(31) }] }] }, // small order
    {
      parties: [
        { id: 'EA', keys: [{ curve: 'ed25519', public_key: ROOT.hex }] },
        { id: 'did:keri:EA', keys: [{ curve: 'ed25519', public_key: DEV1.hex }] },
      ],
    },
    { revoked: [{}] },
    { revoked: [{ rid: 'a', device_public_key: DEV1.hex }] },
    { revoked: [{ device_public_key: 'xyz' }] },
    { revoked: [{ rid: '' }] },
  ];
  for (const doc of bad)
    assert.throws(
      () => parseTrustedRoots(doc),
      (e: unknown) => e instanceof BridgeConfigError && e.code === 'invalid_trusted_roots',
      JSON.stringify(doc),
    );
});

void test('capabilities: narrowing along the chain, requested ⊆ leaf, sorted and de-duplicated', () => {
  const widened = decodeChain(twoLinks({ l1: { capabilities: ['sign_commit', 'admin:all'] } }));
  assert.match(
    code(() => {
      checkNarrowing(widened);
    }),
    /^capability_escalation: link 1: grants "admin:all" not held by link 0/,
  );
  const emptyRoot = decodeChain(twoLinks({ l0: { capabilities: [] } }));
  assert.match(
    code(() => {
      checkNarrowing(emptyRoot);
    }),
    /^capability_escalation: link 1/,
  );
  assert.match(
    code(() => grantCapabilities(['a', 'b'], ['c'])),
    /^insufficient_capabilities/,
  );
  assert.deepEqual(grantCapabilities(['b', 'a', 'b'], undefined), ['a', 'b']);
  assert.deepEqual(grantCapabilities(['b', 'a', 'c'], ['c', 'a', 'c']), ['a', 'c']);
  assert.deepEqual(grantCapabilities([], undefined), []);
});
