/**
 * Limits AWS STS enforces on what the bridge mints (SPEC §7): the `sub` becomes
 * `SubjectFromWebIdentityToken`, 6–255 characters in the STS API reference (shape
 * `webIdentitySubjectType`); session tag values are 0–256 characters of `[\p{L}\p{Z}\p{N}_.:/=+\-@]`
 * (STS API reference, `Tag`). A token outside them is refused by STS, so the bridge refuses first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideToken } from '../../src/bridge/decide.ts';
import type { BridgePolicy, Decision } from '../../src/bridge/decide.ts';
import { BridgeConfigError } from '../../src/bridge/errors.ts';
import { parseTrustedRoots } from '../../src/bridge/trusted-roots.ts';
import type { TrustedRoots } from '../../src/bridge/trusted-roots.ts';
import { chain, DEV1, NOW_MS, policy, request, ROOT, wire } from './_helpers.ts';

const DID_KERI = 'did:keri:';
/** A did:keri id of exactly `n` characters. */
const keriIdOfLength = (n: number): string => DID_KERI + 'E'.repeat(n - DID_KERI.length);

function decide(body: unknown, p: BridgePolicy, roots?: TrustedRoots): Decision {
  return decideToken(wire(body), p, roots, NOW_MS, 'jti-1');
}

/** Trusted roots binding `id` to ROOT's key, built past the loader (which now refuses such ids). */
function rootsWithId(id: string): TrustedRoots {
  const base = parseTrustedRoots({ parties: [{ id: keriIdOfLength(60), keys: [{ curve: 'ed25519', public_key: ROOT.hex }] }] });
  const party = [...base.registry.parties.values()][0]!;
  return { ...base, registry: { parties: new Map([[id, { ...party, id }]]) } };
}

void test('trusted roots: a party id longer than 255 characters (STS SubjectFromWebIdentityToken) is a load error naming the entry', () => {
  const entry = (id: string) => ({ id, keys: [{ curve: 'ed25519', public_key: ROOT.hex }] });
  // 255 characters is the longest sub STS returns: it loads
  assert.equal(parseTrustedRoots({ parties: [entry(keriIdOfLength(255))] }).registry.parties.size, 1);
  // 256 characters (a valid KERI prefix of 247 characters) cannot be a sub
  const other = { id: keriIdOfLength(60), keys: [{ curve: 'ed25519', public_key: DEV1.hex }] };
  assert.throws(
    () => parseTrustedRoots({ parties: [other, entry(keriIdOfLength(256))] }),
    (e: unknown) =>
      e instanceof BridgeConfigError && e.code === 'invalid_trusted_roots' && /parties\[1\]\.id/.test(e.message) && /6–255/.test(e.message),
  );
  // the prefix without `did:keri:` is normalised first: 247 prefix characters are 256 in the sub
  assert.throws(
    () => parseTrustedRoots({ parties: [entry('E'.repeat(247))] }),
    (e: unknown) => e instanceof BridgeConfigError && /parties\[0\]\.id/.test(e.message),
  );
});

void test('issue time: a sub outside 6–255 characters is 403 subject_unsupported, never a token', () => {
  const long = keriIdOfLength(256);
  const c = chain(ROOT, [{ device: DEV1, issuer: long, capabilities: ['a'] }]);
  const d = decide(request({ chain: c, device: DEV1.key }), policy(), rootsWithId(long));
  assert.ok(!d.ok, 'a 256-character sub must not be minted');
  assert.equal(d.error.code, 'subject_unsupported');
  assert.equal(d.error.status, 403);
  assert.match(d.error.detail, /256 characters/);
  // the boundary: 255 characters issues
  const edge = keriIdOfLength(255);
  const ce = chain(ROOT, [{ device: DEV1, issuer: edge, capabilities: ['a'] }]);
  const ok = decide(request({ chain: ce, device: DEV1.key }), policy(), rootsWithId(edge));
  assert.ok(ok.ok, ok.ok ? '' : ok.error.detail);
  assert.equal(ok.grant.claims.sub, edge);
  // binding comes first: an unbound long issuer is still untrusted_root
  const unbound = decide(request({ chain: c, device: DEV1.key }), policy());
  assert.equal(unbound.ok ? 'ok' : unbound.error.code, 'untrusted_root');
});

/** The auths_leaf tag of a one-link chain whose leaf subject is `subject`. */
function leafTag(subject: string): string {
  const c = chain(ROOT, [{ device: DEV1, subject, capabilities: ['a'] }]);
  const d = decide(request({ chain: c, device: DEV1.key }), policy({ awsSessionTags: true }));
  assert.ok(d.ok, d.ok ? '' : d.error.detail);
  return d.grant.claims['https://aws.amazon.com/tags']!.principal_tags.auths_leaf[0];
}

void test('session tags: auths_leaf is cut on whole code points, within 256 characters however they are counted', () => {
  const ideograph = '\u{20000}'; // CJK Extension B, a letter (Lo) outside the BMP: two UTF-16 units
  // 255 ASCII + an astral letter: a cut at 256 UTF-16 units would keep half of its surrogate pair
  const v1 = leafTag('a'.repeat(255) + ideograph + 'bbb');
  assert.ok(v1.isWellFormed(), 'no lone surrogate');
  assert.equal(v1, 'a'.repeat(255));
  // all astral letters: whole characters only, within 256 code points and 256 UTF-16 units
  const v2 = leafTag(ideograph.repeat(300));
  assert.ok(v2.isWellFormed());
  assert.equal(v2, ideograph.repeat(128));
  assert.ok(Array.from(v2).length <= 256 && v2.length <= 256);
  // an emoji is not a letter: replaced by one `_` per character, never split
  const v3 = leafTag('a'.repeat(255) + '\u{1F600}' + 'b');
  assert.equal(v3, 'a'.repeat(255) + '_');
  // short values are unchanged, and every kept character matches the STS tag value pattern
  assert.equal(leafTag('did:key:z6Mk' + ideograph), 'did:key:z6Mk' + ideograph);
  for (const v of [v1, v2, v3]) assert.match(v, /^[\p{L}\p{Z}\p{N}_.:/=+\-@]{0,256}$/u);
});
