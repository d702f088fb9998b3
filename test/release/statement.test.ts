// The build statement (in-toto v1 + SLSA provenance v1), the node-side binding to the running
// bundle (loadBuildAttestation) and the client-side verifier of GET /build (verifyBuildBody),
// in-process. The bundled node end to end is test/release/bundle.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { sha256Hex } from '../../src/crypto/sha256.ts';
import { loadBuildAttestation } from '../../src/release/attestation.ts';
import { signEnvelope, type DsseEnvelope } from '../../src/release/dsse.ts';
import { BuildError } from '../../src/release/errors.ts';
import { runningBundle } from '../../src/release/running.ts';
import { encodeStatement, IN_TOTO_PAYLOAD_TYPE, parseStatement, type StatementInput } from '../../src/release/statement.ts';
import { verifyBuildBody } from '../../src/release/verify.ts';
import { withoutCredentials } from '../../src/cli/build-commands.ts';
import { get, startTestWitness } from '../helpers/witness.ts';
import { tempDir } from '../helpers/tmp.ts';

const RELEASE = ed25519KeyFromSeed(new Uint8Array(32).fill(0x42));
const RELEASE_PUB = ed25519PublicKeyBytes(RELEASE);
const DIGEST = sha256Hex('bundle bytes');
const COMMIT = 'c0ffee'.padEnd(40, '0');
const INPUT: StatementInput = {
  name: 'anchor-witness.mjs',
  digest: DIGEST,
  version: '0.1.0',
  sourceCommit: COMMIT,
  sourceUri: 'https://example.org/aw.git',
  builderId: 'urn:test:builder',
};
const code = (c: string) => (e: unknown) => e instanceof BuildError && e.code === c;

function envelope(input: Partial<StatementInput> = {}): DsseEnvelope {
  return signEnvelope(IN_TOTO_PAYLOAD_TYPE, encodeStatement({ ...INPUT, ...input }), RELEASE);
}

function signedJson(doc: unknown, type = IN_TOTO_PAYLOAD_TYPE): DsseEnvelope {
  return signEnvelope(type, new TextEncoder().encode(JSON.stringify(doc)), RELEASE);
}

void test('statement: encode → parse; fixed bytes for fixed inputs', () => {
  const bytes = encodeStatement(INPUT);
  assert.deepEqual(encodeStatement(INPUT), bytes);
  const doc = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
  assert.equal(doc._type, 'https://in-toto.io/Statement/v1');
  assert.deepEqual(doc.subject, [{ name: 'anchor-witness.mjs', digest: { sha256: DIGEST } }]);
  assert.equal(doc.predicateType, 'https://slsa.dev/provenance/v1');
  const s = parseStatement(bytes);
  assert.deepEqual(s, {
    subjects: [{ name: 'anchor-witness.mjs', sha256: DIGEST }],
    version: '0.1.0',
    sourceCommit: COMMIT,
    builderId: 'urn:test:builder',
  });
});

void test('statement: wrong _type, no subject, bad digest, other predicate type, no version — malformed_statement', () => {
  const base = JSON.parse(new TextDecoder().decode(encodeStatement(INPUT))) as Record<string, unknown>;
  const variants: Record<string, unknown>[] = [
    { ...base, _type: 'https://in-toto.io/Statement/v0.1' },
    { ...base, subject: [] },
    { ...base, subject: [{ name: 'x', digest: { sha256: 'zz' } }] },
    { ...base, subject: [{ name: 'x', digest: { sha256: 5 } }] },
    { ...base, predicateType: 'https://example.org/other' },
    { ...base, predicate: { buildDefinition: { externalParameters: {} } } },
  ];
  for (const v of variants)
    assert.throws(() => parseStatement(new TextEncoder().encode(JSON.stringify(v))), code('malformed_statement'), JSON.stringify(v));
  assert.throws(() => parseStatement(new TextEncoder().encode('{"a":1,"a":2}')), code('malformed_statement'));
  assert.throws(() => parseStatement(Uint8Array.from([0xff])), code('malformed_statement'));
});

void test('node side: the attestation must name the running bundle and version', () => {
  const { dir, cleanup } = tempDir();
  try {
    const running = { file: '/opt/aw/anchor-witness.mjs', digest: DIGEST };
    const file = join(dir, 'att.json');
    writeFileSync(file, JSON.stringify(envelope()));
    const info = loadBuildAttestation(file, running, '0.1.0');
    assert.deepEqual(Object.keys(info.body), ['version', 'running_digest', 'attestation', 'node_version']);
    assert.equal(info.body.running_digest, DIGEST);
    assert.equal(info.body.node_version, process.version);
    assert.deepEqual(JSON.parse(info.json), info.body);
    // what the node serves verifies under the release key
    assert.equal(verifyBuildBody(JSON.parse(info.json), RELEASE_PUB).runningDigest, DIGEST);

    assert.throws(
      () => loadBuildAttestation(file, { ...running, digest: sha256Hex('other bytes') }, '0.1.0'),
      (e: unknown) => code('digest_mismatch')(e) && /refusing to start/.test((e as Error).message),
    );
    assert.throws(() => loadBuildAttestation(file, running, '0.2.0'), code('version_mismatch'));
    assert.throws(
      () => loadBuildAttestation(file, undefined),
      (e: unknown) => code('not_bundled')(e) && /npm run build:bundle/.test((e as Error).message),
    );
    assert.throws(() => loadBuildAttestation(join(dir, 'missing.json'), running), code('attestation_unreadable'));
    writeFileSync(file, '{"payloadType":');
    assert.throws(() => loadBuildAttestation(file, running), code('malformed_envelope'));
    writeFileSync(file, JSON.stringify(signedJson(JSON.parse(new TextDecoder().decode(encodeStatement(INPUT))), 'application/json')));
    assert.throws(() => loadBuildAttestation(file, running), code('unsupported_payload_type'));
  } finally {
    cleanup();
  }
});

void test('client side: verifyBuildBody accepts the good body and rejects every tampering', () => {
  const good = { version: '0.1.0', running_digest: DIGEST, attestation: envelope(), node_version: 'v24.21.0' };
  const v = verifyBuildBody(good, RELEASE_PUB, { expectDigest: DIGEST.toUpperCase() });
  assert.equal(v.keyid, sha256Hex(RELEASE_PUB));
  assert.equal(v.sourceCommit, COMMIT);

  const other = ed25519PublicKeyBytes(ed25519KeyFromSeed(new Uint8Array(32).fill(0x43)));
  assert.throws(() => verifyBuildBody(good, other), code('bad_signature'));
  // running_digest changed: the signed statement names another file
  assert.throws(() => verifyBuildBody({ ...good, running_digest: sha256Hex('x') }, RELEASE_PUB), code('digest_mismatch'));
  // a valid statement for another file, served with this digest
  assert.throws(
    () => verifyBuildBody({ ...good, attestation: envelope({ digest: sha256Hex('x') }) }, RELEASE_PUB),
    code('digest_mismatch'),
  );
  assert.throws(() => verifyBuildBody({ ...good, version: '9.9.9' }, RELEASE_PUB), code('version_mismatch'));
  assert.throws(() => verifyBuildBody(good, RELEASE_PUB, { expectDigest: sha256Hex('rebuilt') }), code('unexpected_digest'));
  // payload swapped for another statement (signature no longer covers it)
  const evilPayload = Buffer.from(encodeStatement({ ...INPUT, builderId: 'urn:evil' })).toString('base64');
  assert.throws(
    () => verifyBuildBody({ ...good, attestation: { ...good.attestation, payload: evilPayload } }, RELEASE_PUB),
    code('bad_signature'),
  );
  // signed by the release key, but not an in-toto payload
  assert.throws(
    () => verifyBuildBody({ ...good, attestation: signedJson({}, 'application/json') }, RELEASE_PUB),
    code('unsupported_payload_type'),
  );
  for (const b of [null, { ...good, running_digest: 'abc' }, { ...good, version: 1 }, { ...good, node_version: undefined }]) {
    assert.throws(() => verifyBuildBody(b, RELEASE_PUB), code('malformed_response'));
  }
  assert.throws(() => verifyBuildBody({ ...good, attestation: 'x' }, RELEASE_PUB), code('malformed_envelope'));
});

void test('from the TypeScript sources: no running digest; --build-attestation refused; /build is 404 no_build_attestation', async () => {
  assert.equal(runningBundle(), undefined);
  const { dir, cleanup } = tempDir();
  try {
    const file = join(dir, 'att.json');
    writeFileSync(file, JSON.stringify(envelope()));
    await assert.rejects(startTestWitness(dir, { parties: [] }, { buildAttestation: file }), code('not_bundled'));
    const w = await startTestWitness(dir, { parties: [] });
    try {
      const r = await get(`${w.url}/build`);
      assert.equal(r.status, 404);
      assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.equal((r.body as { code: string }).code, 'no_build_attestation');
    } finally {
      await w.close();
    }
  } finally {
    cleanup();
  }
});

void test('build attest: a token in the git remote URL never reaches the signed statement', () => {
  assert.equal(withoutCredentials('https://x-access-token:ghp_secret@example.org/o/r.git'), 'https://example.org/o/r.git');
  assert.equal(withoutCredentials('https://ghp_secret@example.org/o/r.git'), 'https://example.org/o/r.git');
  assert.equal(withoutCredentials('https://example.org/o/r.git'), 'https://example.org/o/r.git');
  assert.equal(withoutCredentials('git@example.org:o/r.git'), 'git@example.org:o/r.git');
  assert.equal(withoutCredentials(''), undefined);
});
