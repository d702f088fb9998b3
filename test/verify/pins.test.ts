/**
 * Pins of the verifier SDK (issue 27 item 5): the witness key and party keys a caller pins may be
 * hex text (as `/health` and the registry show them) or bytes. Before, a correct hex witness key
 * was `wrong_witness` and a correct hex party key `party_key_mismatch` naming the very key pinned;
 * now they verify, and a pin that is not a key of the right length is `usage`.
 */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import * as verify from '../../src/verify/index.ts';
import { makeVerifyFixtures, type VerifyFixtures } from '../helpers/verify-fixtures.ts';
import { bothBackends } from '../helpers/crypto-backends.ts';

let fx: VerifyFixtures;
before(async () => {
  fx = await makeVerifyFixtures();
});
after(async () => {
  await fx.cleanup();
});

async function code(fn: () => Promise<unknown>): Promise<string> {
  try {
    await fn();
    return 'ok';
  } catch (e) {
    return e instanceof verify.VerificationError || e instanceof verify.UsageError ? e.code : `threw: ${String(e)}`;
  }
}

bothBackends('hex pins verify like byte pins (witness key, Ed25519 and P-256 party keys, either case)', async () => {
  const witness = { logOrigin: fx.witness.logOrigin, publicKey: fx.witness.publicKeyHex };
  const body = verify.parseJson(fx.edParty.response);
  const v = await verify.verifyAnchorResponse(body, witness, { curve: 'ed25519', publicKey: fx.edParty.publicKeyHex });
  assert.equal(v.checkpoint.origin, fx.witness.logOrigin);
  const upper = { logOrigin: fx.witness.logOrigin, publicKey: fx.witness.publicKeyHex.toUpperCase() };
  assert.equal(
    await code(() => verify.verifyAnchorResponse(body, upper, [{ curve: 'ed25519', publicKey: fx.edParty.publicKeyHex }])),
    'ok',
  );
  const bob = verify.parseJson(fx.p256Party.response);
  assert.equal(await code(() => verify.verifyAnchorResponse(bob, witness, { curve: 'p256', publicKey: fx.p256Party.publicKeyHex })), 'ok');
  // The hex helper gives the same bytes.
  const bytes = { logOrigin: fx.witness.logOrigin, publicKey: verify.decodeHex(fx.witness.publicKeyHex, 32) };
  assert.equal(verify.encodeHex(bytes.publicKey), fx.witness.publicKeyHex);
  assert.equal(
    await code(() => verify.verifyAnchorResponse(body, bytes, { curve: 'ed25519', publicKey: verify.decodeHex(fx.edParty.publicKeyHex) })),
    'ok',
  );
});

bothBackends('a pin that is not a key of the right length is usage, before the response is looked at', async () => {
  const body = verify.parseJson(fx.edParty.response);
  const party = { curve: 'ed25519' as const, publicKey: fx.edParty.publicKeyHex };
  const witness = { logOrigin: fx.witness.logOrigin, publicKey: fx.witness.publicKeyHex };
  const bad: [string, () => Promise<unknown>][] = [
    ['63 hex characters', () => verify.verifyAnchorResponse(body, { ...witness, publicKey: fx.witness.publicKeyHex.slice(1) }, party)],
    ['31 bytes', () => verify.verifyAnchorResponse(body, { ...witness, publicKey: new Uint8Array(31) }, party)],
    [
      'base64',
      () =>
        verify.verifyAnchorResponse(body, { ...witness, publicKey: Buffer.from(fx.witness.publicKeyHex, 'hex').toString('base64') }, party),
    ],
    ['0x prefix', () => verify.verifyAnchorResponse(body, { ...witness, publicKey: `0x${fx.witness.publicKeyHex}` }, party)],
    ['a number', () => verify.verifyAnchorResponse(body, { ...witness, publicKey: 42 as unknown as string }, party)],
    ['no log origin', () => verify.verifyAnchorResponse(body, { publicKey: fx.witness.publicKeyHex } as verify.PinnedWitness, party)],
    [
      'party key 33 bytes for ed25519',
      () => verify.verifyAnchorResponse(body, witness, { curve: 'ed25519', publicKey: new Uint8Array(33) }),
    ],
    [
      'party key hex of the wrong length',
      () => verify.verifyAnchorResponse(body, witness, { curve: 'p256', publicKey: fx.edParty.publicKeyHex }),
    ],
    [
      'unknown curve',
      () => verify.verifyAnchorResponse(body, witness, { curve: 'ed448' as 'ed25519', publicKey: fx.edParty.publicKeyHex }),
    ],
    [
      'a party given as a string',
      () => verify.verifyAnchorResponse(body, witness, fx.edParty.publicKeyHex as unknown as verify.PinnedParty),
    ],
    [
      'witness receipt only',
      () =>
        verify.verifyWitnessReceipt(
          verify.decodeResponseAnchor(verify.parseAnchorResponse(body).anchor),
          verify.parseAnchorResponse(body),
          { ...witness, publicKey: 'zz' },
        ),
    ],
    ['decodeHex', () => Promise.resolve(verify.decodeHex('abc'))],
    ['decodeHex length', () => Promise.resolve(verify.decodeHex('abcd', 32))],
  ];
  for (const [name, fn] of bad) assert.equal(await code(fn), 'usage', name);
  // A well-formed pin of another key is still a verdict about the response.
  const other = { ...witness, publicKey: fx.edParty.publicKeyHex };
  assert.equal(await code(() => verify.verifyAnchorResponse(body, other, party)), 'wrong_witness');
  assert.equal(
    await code(() => verify.verifyAnchorResponse(body, witness, { curve: 'ed25519', publicKey: fx.witness.publicKeyHex })),
    'party_key_mismatch',
  );
});
