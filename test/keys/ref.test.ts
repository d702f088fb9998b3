// Key references (SPEC §1.1): the grammar, pin-value refused, repeated/unknown attributes and bad
// pct-encoding refused, redaction of socket and pin-source; OpenSSH encodings match ssh-keygen's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyRefError } from '../../src/keys/errors.ts';
import { ed25519Fingerprint, ed25519KeyBlob, ed25519KeyFromBlob } from '../../src/keys/openssh.ts';
import { parseKeyRef, redactKeyRef } from '../../src/keys/ref.ts';
import { fill } from '../helpers/anchors.ts';

const FP = 'SHA256:' + 'A'.repeat(42) + 'E';
const refuses = (ref: string, why: RegExp): void => {
  assert.throws(
    () => parseKeyRef(ref),
    (e: unknown) => e instanceof KeyRefError && e.code === 'key_ref_invalid' && why.test(e.message),
    ref,
  );
};

void test('files: a leading file: is stripped, anything else is a path', () => {
  assert.deepEqual(parseKeyRef('/etc/aw/witness.pem'), { kind: 'file', path: '/etc/aw/witness.pem' });
  assert.deepEqual(parseKeyRef('file:rel/key.pem'), { kind: 'file', path: 'rel/key.pem' });
  assert.deepEqual(parseKeyRef('ssh-agentish.pem'), { kind: 'file', path: 'ssh-agentish.pem' });
  refuses('file:', /empty path/);
});

void test('ssh-agent: fingerprint and optional socket', () => {
  assert.deepEqual(parseKeyRef(`ssh-agent:${FP}`), { kind: 'ssh-agent', fingerprint: FP, socket: undefined });
  assert.deepEqual(parseKeyRef(`ssh-agent:${FP}?socket=%2Frun%2Faw%2Fagent.sock`), {
    kind: 'ssh-agent',
    fingerprint: FP,
    socket: '/run/aw/agent.sock',
  });
  refuses(`ssh-agent:${FP.slice(0, -1)}`, /43 base64/);
  refuses(`ssh-agent:SHA256:${'A'.repeat(42)}B`, /43 base64/); // non-canonical last character
  refuses(`ssh-agent:${FP}?socket=relative`, /absolute/);
  refuses(`ssh-agent:${FP}?socket=/a&x=1`, /only query attribute/);
  refuses(`ssh-agent:${FP}?socket=/a%zz`, /pct-encoding/);
  assert.equal(redactKeyRef(`ssh-agent:${FP}?socket=/run/x`), `ssh-agent:${FP}?socket=<redacted>`);
});

const MOD = 'module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:/etc/aw/pin';

void test('pkcs11: the accepted attributes', () => {
  const r = parseKeyRef(`pkcs11:token=my%20token;slot-id=3;object=witness;id=%01%ff;type=private?${MOD}`);
  assert.ok(r.kind === 'pkcs11');
  assert.deepEqual(r.tokenMatch, { token: 'my token', slotId: 3n });
  assert.equal(r.object, 'witness');
  assert.deepEqual([...r.id!], [1, 255]);
  assert.equal(r.modulePath, '/usr/lib/softhsm/libsofthsm2.so');
  assert.equal(r.pinFile, '/etc/aw/pin');
  assert.equal(redactKeyRef(`pkcs11:object=w?${MOD}`), 'pkcs11:object=w?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=<redacted>');
});

void test('pkcs11: pin-value, unknown, repeated, misplaced attributes and bad encodings are refused', () => {
  refuses(`pkcs11:object=w?module-path=/m.so&pin-value=1234`, /pin-value is refused/);
  refuses(`pkcs11:object=w;pin-value=1234?${MOD}`, /pin-value is refused/);
  refuses(`pkcs11:object=w;library-description=x?${MOD}`, /not accepted/);
  refuses(`pkcs11:object=w;object=v?${MOD}`, /repeated/);
  refuses(`pkcs11:object=w?${MOD}&module-path=/m.so`, /repeated/);
  refuses(`pkcs11:object=w?${MOD}&object=v`, /not accepted/);
  refuses(`pkcs11:object=w%2?${MOD}`, /pct-encoding/);
  refuses(`pkcs11:object=w;type=public?${MOD}`, /type must be private/);
  refuses(`pkcs11:object=w;slot-id=x?${MOD}`, /slot-id/);
  refuses(`pkcs11:object=w?pin-source=file:/p`, /module-path/);
  refuses(`pkcs11:object=w?module-path=rel.so&pin-source=file:/p`, /absolute/);
  refuses(`pkcs11:object=w?module-path=/m.so`, /pin-source/);
  refuses(`pkcs11:object=w?module-path=/m.so&pin-source=/p`, /file:/);
  refuses(`pkcs11:token=t?${MOD}`, /object= .* or id=/);
});

void test('OpenSSH blob and fingerprint', () => {
  const pk = fill(7);
  const blob = ed25519KeyBlob(pk);
  assert.equal(blob.toString('hex'), '0000000b7373682d65643235353139' + '00000020' + '07'.repeat(32));
  assert.deepEqual(ed25519KeyFromBlob(blob), pk);
  assert.equal(ed25519KeyFromBlob(Buffer.concat([blob, Buffer.from([0])])), undefined);
  assert.match(ed25519Fingerprint(pk), /^SHA256:[A-Za-z0-9+/]{43}$/);
  assert.equal(parseKeyRef(`ssh-agent:${ed25519Fingerprint(pk)}`).kind, 'ssh-agent');
});
